// `jetsweep validate`: what a campaign expands to and how long it should take. Pure output; any thread.
#pragma once

#include <iosfwd>
#include <optional>
#include <string>

#include "cli/client.hpp"
#include "common/campaign.hpp"

namespace jetsweep::cli {

// Prints the expansion of campaign `c` read from `file`, with the controller's estimate when one was asked
// for (and its gating refusals: `validate --estimate` then exits 1), as text or (as_json) one JSON object.
void print_validation(std::ostream& out, const std::string& file, const Campaign& c,
                      const std::optional<Answer<api::CampaignEstimate>>& estimate, bool as_json);
// A campaign only the controller could expand (a grid on a board by name: its tables are the controller's):
// why it did not expand here, then the controller's estimate.
void print_controller_expansion(std::ostream& out, const std::string& file, const std::string& local_error,
                                const Answer<api::CampaignEstimate>& estimate, bool as_json);

}  // namespace jetsweep::cli
