// Campaign matrix language: parses experiments/*.yaml, validates every key and value with
// FILE:LINE:COL errors, and expands the Cartesian product into RunConfigs. Pure functions; any thread.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "common/adaptive_plan.hpp"
#include "common/board_tables.hpp"
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
  // `power_mode: {generate: adaptive}`: one plan per combination, whose runs the controller makes in rounds.
  std::vector<AdaptivePlanSpec> adaptive_plans;
  // Per device a power-mode generator expanded on, the tables it drew from: "agx-orin: the papers' BSP tables of
  // agx-orin" offline, the enrolled boards' own when the controller expands it (FleetTables::resolve).
  std::vector<std::string> mode_tables;
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

// Per board class, the named modes of the campaign whose GPU power-gating masks (NVIDIA's files) differ from the
// class's default mode's: a real board booted in its default mode refuses them until it runs `nvpmodel -m N` and
// reboots. One line per class, "" nowhere; empty when no run names such a mode.
std::vector<std::string> gating_notes(const Campaign& c);

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

// Largest number of rows a store creates for one campaign, after runs on 'CLASS/*' are expanded to every
// enrolled board of the class (controller/*store*), and the largest dry-run cap. Parsing refuses far fewer
// runs (CampaignLimits::max_runs).
inline constexpr int64_t kMaxRunsPerCampaign = 2'000'000;

// Bounds on the work and memory of parsing and expanding one campaign (docs/CAMPAIGNS.md, "Limits"), so
// that no campaign, however small its file, can exhaust the controller or take it long. Each bound is
// checked before the work it bounds, and a campaign over one is refused (kInvalidArgument) with an error
// that names the limit, its value and what exceeded it: "FILE:LINE:COL: ..., more than the limit NAME = N".
inline constexpr int64_t kMaxCampaignYamlBytes = 4 << 20;
struct CampaignLimits {
  // Size of the YAML text. yaml-cpp's node tree takes ~10x the text (a 50 MB file took 490 MB): 4 MiB keeps
  // it near 40 MB; the largest shipped campaign is a few KB.
  int64_t max_yaml_bytes = kMaxCampaignYamlBytes;
  // Runs of one campaign (combinations x repetitions, exclusions applied; with 'include' entries). A
  // RunConfig is 344 bytes (sizeof, x86-64) plus ~48 bytes of heap for the default data path, ~400 bytes in
  // all: 250,000 runs are ~100 MB, ~150 MB at the expansion's peak (the vector's growth), under 200 MB. The
  // papers' largest grid is 18,096 power modes (AGX Orin): 13 such grids fit.
  int64_t max_runs = 250'000;
  // Modes one power-mode generator yields for one board class (the grid, or 'count' of a sample): the
  // largest class's full grid with room to spare.
  int64_t max_generated_modes = 100'000;
  // Values in one list: a matrix axis, a zipped list, the generator's 'cores'.
  int64_t max_list_length = 10'000;
  // Entries of 'exclude', and of 'include'.
  int64_t max_rules = 10'000;
  // Combinations before exclusion (axes x generated modes) x 'exclude' entries: the cost of the exclusion,
  // ~0.5 us each (10 million took 5 s, RelWithDebInfo, x86-64), so ~2.5 s at most. The Orin grid takes up
  // to 276 rules.
  int64_t max_rule_evaluations = 5'000'000;
  // Wall time of parsing and expanding, checked every 1024 combinations; a safety net behind the bounds
  // above, which keep the worst accepted campaign to a few seconds.
  std::chrono::milliseconds deadline{30'000};
  // The clock the deadline is measured with (tests give a fake one); empty = std::chrono::steady_clock.
  std::function<std::chrono::steady_clock::time_point()> clock;
};

// `file_name` is used only in error messages ("demo.yaml:4:15: ..."). Without `limits`, the defaults. `fleet`:
// the enrolled boards' own tables, which generated power modes are drawn from and every run's settings are
// checked against (the controller); without, the papers' BSP tables and settings unchecked (offline).
Result<Campaign> parse_campaign(std::string_view yaml_text, const std::string& file_name);
Result<Campaign> parse_campaign(std::string_view yaml_text, const std::string& file_name, const CampaignLimits& limits,
                                const FleetTables& fleet = FleetTables());
// Refuses a file over limits.max_yaml_bytes by its size, before reading it.
Result<Campaign> load_campaign_file(const std::string& path, const CampaignLimits& limits = {});

// A single-run spec for `jetsweep-agent run --spec`: the same keys as a campaign's matrix, all scalars.
Result<RunConfig> parse_run_spec(std::string_view yaml_text, const std::string& file_name);
Result<RunConfig> load_run_spec_file(const std::string& path);

// The whole file; kInvalidArgument, by its size and before reading it, when it has more than `max_bytes`
// (the campaign limit max_yaml_bytes by default; 0 = no limit).
Result<std::string> read_text_file(const std::string& path, int64_t max_bytes = kMaxCampaignYamlBytes);

}  // namespace jetsweep
