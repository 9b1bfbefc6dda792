// Campaign matrix language: parses experiments/*.yaml, validates every key and value with
// FILE:LINE:COL errors, and expands the Cartesian product into RunConfigs. Pure functions; any thread.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "common/run_config.hpp"
#include "common/status.hpp"

namespace jetsweep {

struct Campaign {
  std::string name;
  std::string description;
  int64_t repetitions = 1;
  int64_t priority = 0;            // higher runs first
  bool dispatch_by_power_mode = true;   // `order: power_modes` (default) or `order: file`

  std::vector<std::string> axes;   // keys given as lists, in file order (for the report)
  std::vector<RunConfig> runs;     // expanded, deterministic order
};

// The order in which the controller queues a campaign's runs (indexes into runs). With
// dispatch_by_power_mode, runs that set a core count (explicitly, or through a named mode of their board
// class) are ordered by descending core count, then CPU, GPU and memory frequency (stable otherwise), so
// every board, taking runs in queue order, only ever takes cores offline between runs: no mode change that
// needs a reboot, and runs of the same mode back to back. Runs that leave the cores alone come first, in
// file order.
// `run_classes` (optional, one per run) gives each run's board class where its device does not name one
// (a named board); named modes are resolved with it.
std::vector<size_t> dispatch_order(const Campaign& c, const std::vector<std::string>& run_classes = {});

// A smaller copy of a campaign, to dry-run it (on simulated boards, say) before the real thing: at most
// max_runs runs, spread evenly over the expansion order (the first and the last kept, so every value of the
// outermost axes stays represented), at most max_epochs epochs and max_minibatches minibatches per epoch
// each. 0 = no cap. The description records the caps.
struct DryRunCaps {
  int64_t max_runs = 0;
  int64_t max_epochs = 0;
  int64_t max_minibatches = 0;
  bool any() const { return max_runs > 0 || max_epochs > 0 || max_minibatches > 0; }
  std::string to_string() const;   // "dry run: <= 6 runs, <= 2 epochs, <= 50 minibatches per epoch"
};
void apply_dry_run_caps(Campaign& campaign, const DryRunCaps& caps);
// Parses "max_runs=N&max_epochs=E&max_minibatches=M" (any subset, the query string of a submission);
// kInvalidArgument names the bad key or value.
Result<DryRunCaps> parse_dry_run_caps(std::string_view query);

// Largest matrix accepted in one campaign.
inline constexpr int64_t kMaxRunsPerCampaign = 2'000'000;

// `file_name` is used only in error messages ("demo.yaml:4:15: ...").
Result<Campaign> parse_campaign(std::string_view yaml_text, const std::string& file_name);
Result<Campaign> load_campaign_file(const std::string& path);

// A single-run spec for `jetsweep-agent run --spec`: the same keys as a campaign's matrix, all scalars.
Result<RunConfig> parse_run_spec(std::string_view yaml_text, const std::string& file_name);
Result<RunConfig> load_run_spec_file(const std::string& path);

Result<std::string> read_text_file(const std::string& path);

}  // namespace jetsweep
