// Reading the campaign language's YAML values (internal to common/campaign*.cpp): typed scalars with
// FILE:LINE:COL errors, the settable run keys, the per-class checks, and power-mode generators.
// Errors are thrown as YamlError inside the parser and turned into Status at parse_campaign / parse_run_spec.
// Pure functions; any thread.
#pragma once

#include <yaml-cpp/yaml.h>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/adaptive_plan.hpp"
#include "common/campaign.hpp"
#include "common/run_config.hpp"

namespace jetsweep::campaign_yaml {

// Thrown inside the parser only; converted to Status at parse_* boundaries.
struct YamlError {
  std::string message;
};

// "file:line:col" of `mark` (just "file" when the mark is unknown).
std::string place(const std::string& file, const YAML::Mark& mark);
// Throws YamlError "place: what" at `node`.
[[noreturn]] void fail(const std::string& file, const YAML::Node& node, const std::string& what);

// Throws YamlError "place: what, more than the limit NAME = VALUE" (CampaignLimits) at `node`.
[[noreturn]] void fail_limit(const std::string& file, const YAML::Node& node, const std::string& what,
                             const char* limit_name, int64_t limit);

std::string scalar_text(const YAML::Node& n);
// A default-constructed YAML::Node is "defined" and null: presence means a non-null value.
bool given(const YAML::Node& n);
YAML::Node load_yaml(std::string_view text, const std::string& file);

int64_t to_int(const std::string& file, const std::string& key, const YAML::Node& n);
double to_double(const std::string& file, const std::string& key, const YAML::Node& n);
bool to_bool(const std::string& file, const std::string& key, const YAML::Node& n);
// The text of scalar `n` (the value of `key`), refused at n's place unless it is UTF-8 free of control characters
// (with `allow_line_breaks`, tab, LF, CR and NEL are allowed).
std::string checked_text(const std::string& file, const std::string& key, const YAML::Node& n, bool allow_line_breaks);
std::string to_string_value(const std::string& file, const std::string& key, const YAML::Node& n);

// Whether `key` is a run key a campaign may set; their names, comma-separated, for error messages.
bool is_run_key(const std::string& key);
std::string known_keys();
// Sets run key `key` of `c` from `value` (no range check).
void apply(RunConfig& c, const std::string& file, const std::string& key, const YAML::Node& value);
// Sets it and re-checks the ranges of that key, reporting at the value's mark.
void apply_checked(RunConfig& c, const std::string& file, const std::string& key, const YAML::Node& value);

// A run on a board class that has less RAM than the run needs would wait forever: refused at `where`.
void check_fits(const std::string& file, const YAML::Node& where, const RunConfig& c);
// A named power mode the run's board class does not define would fail on every board of it, and settings (cores,
// clocks) outside the tables its boards reported (fleet.settings_problem) on the boards lacking them: refused at
// `where`.
void check_power_mode(const std::string& file, const YAML::Node& where, const RunConfig& c, const FleetTables& fleet);

// A power_mode value that asks for modes generated from the board class's tables.
struct ModeGenerator {
  YAML::Node node;
  bool sample = false;         // uniform random sample of `count` modes; else the grid
  // generate: adaptive: the grid is the candidates of one adaptive-profiling plan per combination (plan's fields
  // but base, candidates and where set; common/adaptive_plan.hpp), not runs.
  std::optional<AdaptivePlanSpec> adaptive;
  int64_t every = 1;           // grid: every k-th value of each frequency table
  int64_t count = 0;           // sample size
  int64_t seed = 1;
  std::vector<int64_t> cores;  // restrict core counts (empty = 1..max)
};
bool is_generator(const YAML::Node& n);
// Checks 'cores' against limits.max_list_length and 'count' against limits.max_generated_modes.
ModeGenerator parse_generator(const std::string& file, const YAML::Node& n, const CampaignLimits& limits);
// How many modes `g` yields for `device` (fleet.resolve), without generating them (0 when the device resolves
// to no tables: generation then fails with its own error).
uint64_t generated_mode_count(const ModeGenerator& g, const std::string& device, const FleetTables& fleet);
// The modes a generator yields for the base run's device, from the tables `fleet` resolves it to, in table
// order (cores, CPU, GPU, EMC); refused before any is made when there are more than
// limits.max_generated_modes. Adds "DEVICE: <the tables' label>" to `tables_used` once.
std::vector<RunConfig> generate_modes(const std::string& file, const ModeGenerator& g, const RunConfig& base,
                                      const CampaignLimits& limits, const FleetTables& fleet,
                                      std::vector<std::string>& tables_used);

}  // namespace jetsweep::campaign_yaml
