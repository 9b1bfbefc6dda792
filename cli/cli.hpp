// The `jetsweep` command-line client: validate / submit / status / watch / report / compare / agents / pause /
// resume / cancel / cancel-run, talking to the controller's HTTP JSON API (common/api.hpp), and the commands it
// delegates (DelegatedCommand). Functions are pure or do blocking
// I/O on the calling thread.
#pragma once

#include <ctime>
#include <functional>
#include <iosfwd>
#include <string>
#include <vector>

#include "common/api.hpp"
#include "common/compare.hpp"
#include "common/status.hpp"

namespace jetsweep::cli {

// A subcommand another component implements (the analysis library's analyze, export, archive, import and drop,
// composed by cli/main.cpp): listed by `jetsweep --help` with its summary, and handed every argument after its
// name, its own --help included. `run` returns the exit code.
struct DelegatedCommand {
  std::string name;
  std::string summary;
  std::function<int(const std::vector<std::string>& args, std::ostream& out, std::ostream& err)> run;
};

// Runs the CLI; returns the process exit code (0 ok, 1 failure, 2 bad input/usage).
int run_cli(const std::vector<std::string>& args, std::ostream& out, std::ostream& err, bool out_is_tty,
            const std::vector<DelegatedCommand>& delegated = {});

// Text renderings (also used by scripts/demo through the CLI).
std::string format_report(const api::CampaignReport& report);
std::string format_status(const api::CampaignStatus& status, bool progress_bar);
std::string format_status(const api::CampaignStatus& status, bool progress_bar, std::time_t now);
// "3 h 25 min", "12 min", "40 s", "2 d 4 h".
std::string format_duration(double seconds);
// The wall-clock time (local) `eta_s` after `now` and the time left: "14:32 (in 1 h 5 min)"; another day than
// now's adds the day: "Tue 03 Jun 14:32 (in 1 d 2 h)".
std::string format_eta(double eta_s, std::time_t now);
// A [####....] NN% bar of `done` out of `total` (`width` characters between the brackets).
std::string progress_bar(int64_t done, int64_t total, int width = 30);

// Tables with aligned columns (cli/table.hpp).
std::string format_campaigns(const std::vector<api::CampaignStatus>& all, std::time_t now);   // `status`
std::string format_agents(const std::vector<api::AgentInfo>& agents);                         // `agents`
std::string format_comparison(const api::CampaignComparison& comparison);                     // `compare`

// `watch`: the block redrawn in place on a terminal, and the line appended per change otherwise.
std::string watch_frame(const api::CampaignStatus& status, std::time_t now);
std::string watch_line(const api::CampaignStatus& status, std::time_t now);

}  // namespace jetsweep::cli
