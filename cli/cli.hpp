// The `jetsweep` command-line client: validate / submit / status / report / agents / pause / resume / cancel /
// cancel-run, talking to the controller's HTTP JSON API (common/api.hpp). Functions are pure or do blocking
// I/O on the calling thread.
#pragma once

#include <iosfwd>
#include <string>
#include <vector>

#include "common/api.hpp"
#include "common/status.hpp"

namespace jetsweep::cli {

// Runs the CLI; returns the process exit code (0 ok, 1 failure, 2 bad input/usage).
int run_cli(const std::vector<std::string>& args, std::ostream& out, std::ostream& err, bool out_is_tty);

// Text renderings (also used by scripts/demo through the CLI).
std::string format_report(const api::CampaignReport& report);
std::string format_status(const api::CampaignStatus& status, bool progress_bar);
// "3 h 25 min", "12 min", "40 s", "2 d 4 h".
std::string format_duration(double seconds);

}  // namespace jetsweep::cli
