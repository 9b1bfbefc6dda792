#include "common/campaign.hpp"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <charconv>
#include <cstdio>
#include <filesystem>
#include <limits>
#include <fstream>
#include <map>
#include <optional>
#include <set>
#include <sstream>
#include <tuple>

#include "common/board_classes.hpp"
#include "common/campaign_yaml.hpp"
#include "common/perf/sim_board.hpp"
#include "common/text.hpp"

namespace jetsweep {
namespace {

using namespace campaign_yaml;

// Whether `run` has every value the rule (a mapping of run keys to values) names.
bool matches_rule(const std::string& file, const YAML::Node& rule, const RunConfig& run) {
  RunConfig probe = run;   // one copy: while every value matches, applying one leaves it equal to `run`
  for (auto it = rule.begin(); it != rule.end(); ++it) {
    apply(probe, file, scalar_text(it->first), it->second);
    if (!(probe == run)) return false;
  }
  return true;
}

// a x b, saturating at the largest uint64_t (limits compare against it; no overflow).
uint64_t times(uint64_t a, uint64_t b) {
  if (a != 0 && b > std::numeric_limits<uint64_t>::max() / a) return std::numeric_limits<uint64_t>::max();
  return a * b;
}

void check_rule(const std::string& file, const std::string& what, const YAML::Node& rule) {
  if (!rule.IsMap()) fail(file, rule, "each '" + what + "' entry must be a mapping of run keys to values");
  for (auto it = rule.begin(); it != rule.end(); ++it) {
    const std::string key = scalar_text(it->first);
    if (!is_run_key(key)) fail(file, it->first, "unknown key '" + key + "' in '" + what + "' (known: " + known_keys() + ")");
    if (it->second.IsSequence()) fail(file, it->second, "'" + what + "' entries take single values");
    if (key == "power_mode" && is_generator(it->second)) fail(file, it->second, "'" + what + "' cannot generate power modes");
    RunConfig probe;
    apply_checked(probe, file, key, it->second);
  }
}

// Parses one campaign file: the top-level keys, the matrix axes, zip groups, then the expansion (an odometer
// over the axes, exclude rules, generated modes) and include entries. Each step is one method; errors throw
// YamlError at the offending node.
class CampaignParser {
 public:
  CampaignParser(std::string_view text, const std::string& file, const CampaignLimits& limits, const FleetTables& fleet)
      : file_(file), limits_(limits), fleet_(fleet), start_(now()), root_(load_yaml(text, file)) {}

  Campaign parse() {
    read_top_level();
    read_axes();
    read_zip();
    check_distinct_values();
    make_digits();
    check_rule_counts();
    check_run_count();
    check_rule_evaluations();
    expand();
    add_includes();
    repeat();
    if (campaign_.runs.empty() && campaign_.adaptive_plans.empty()) fail(file_, matrix_, "every run is excluded: nothing to run");
    return std::move(campaign_);
  }

 private:
  // A matrix key and its values (a scalar is a one-value axis).
  struct Axis {
    std::string key;
    std::vector<YAML::Node> values;
  };
  // One odometer digit: a zip group, or a single axis.
  struct Digit {
    std::vector<size_t> axes;
    size_t size = 1;
  };

  std::chrono::steady_clock::time_point now() const {
    return limits_.clock ? limits_.clock() : std::chrono::steady_clock::now();
  }

  // Counts `units` of expansion work (combinations, candidate runs, rule evaluations); every 1024 or so the
  // clock is read and a parse past its deadline is refused.
  void work(uint64_t units) {
    work_done_ += units;
    if (work_done_ < next_clock_check_) return;
    next_clock_check_ = work_done_ + 1024;
    const auto elapsed = std::chrono::duration_cast<std::chrono::milliseconds>(now() - start_);
    if (elapsed > limits_.deadline)
      fail_limit(file_, matrix_, "parsing and expanding the campaign took " + std::to_string(elapsed.count()) + " ms",
                 "deadline_ms", limits_.deadline.count());
  }

  void read_top_level() {
    if (!root_.IsMap()) fail(file_, root_, "a campaign file must be a mapping with 'campaign' and 'matrix' keys");
    for (auto it = root_.begin(); it != root_.end(); ++it) read_top_level_key(scalar_text(it->first), it->first, it->second);
    if (campaign_.name.empty()) fail(file_, root_, "missing 'campaign' (the campaign's name)");
    if (!given(matrix_)) fail(file_, root_, "missing 'matrix'");
    if (!matrix_.IsMap()) fail(file_, matrix_, "'matrix' must be a mapping of run keys to a value or a list of values");
  }

  void read_top_level_key(const std::string& key, const YAML::Node& key_node, const YAML::Node& value) {
    if (key == "campaign") {
      campaign_.name = to_string_value(file_, key, value);
    } else if (key == "description") {
      campaign_.description = value.IsScalar() ? checked_text(file_, key, value, true) : "";
    } else if (key == "repetitions") {
      campaign_.repetitions = to_int(file_, key, value);
      if (campaign_.repetitions < 1 || campaign_.repetitions > 100000)
        fail(file_, value, "'repetitions' must be between 1 and 100000");
    } else if (key == "priority") {
      campaign_.priority = to_int(file_, key, value);
      if (campaign_.priority < -1000 || campaign_.priority > 1000)
        fail(file_, value, "'priority' must be between -1000 and 1000");
    } else if (key == "order") {
      const std::string order = to_string_value(file_, key, value);
      if (order != "power_modes" && order != "file")
        fail(file_, value, "'order' must be 'power_modes' (default: each board's modes in an order that needs "
                           "no reboot) or 'file' (the order of expansion)");
      campaign_.dispatch_by_power_mode = order == "power_modes";
    } else if (key == "matrix") {
      matrix_ = value;
    } else if (key == "zip") {
      zip_ = value;
    } else if (key == "exclude") {
      exclude_ = value;
    } else if (key == "include") {
      include_ = value;
    } else {
      fail(file_, key_node,
           "unknown top-level key '" + key + "' (known: campaign, description, repetitions, priority, order, matrix, "
           "zip, exclude, include)");
    }
  }

  // Each axis: key plus its values; generated power modes are kept apart.
  void read_axes() {
    std::set<std::string> seen;
    for (auto it = matrix_.begin(); it != matrix_.end(); ++it) {
      const std::string key = scalar_text(it->first);
      if (!is_run_key(key)) {
        std::string hint = key == "repetition" ? " (use the top-level 'repetitions')" : "";
        fail(file_, it->first, "unknown key '" + key + "'" + hint + " (known: " + known_keys() + ")");
      }
      if (!seen.insert(key).second) fail(file_, it->first, "duplicate key '" + key + "'");
      if (key == "power_mode" && is_generator(it->second)) {
        generator_ = parse_generator(file_, it->second, limits_);
        continue;
      }
      axes_.push_back(read_axis(key, it->second));
    }
    if (!seen.count("model")) fail(file_, matrix_, "matrix is missing 'model'");
    if (!seen.count("dataset")) fail(file_, matrix_, "matrix is missing 'dataset'");
  }

  Axis read_axis(const std::string& key, const YAML::Node& value) {
    Axis axis{key, {}};
    if (!value.IsSequence()) {
      apply_checked(scalars_, file_, key, value);
      axis.values.push_back(value);
      return axis;
    }
    if (value.size() == 0) fail(file_, value, "'" + key + "' has an empty list: nothing to run");
    if (static_cast<int64_t>(value.size()) > limits_.max_list_length)
      fail_limit(file_, value, "'" + key + "' lists " + std::to_string(value.size()) + " values", "max_list_length",
                 limits_.max_list_length);
    for (const auto& v : value) {
      if (key == "power_mode" && is_generator(v)) fail(file_, v, "a power_mode generator cannot be part of a list");
      RunConfig probe;
      apply_checked(probe, file_, key, v);  // type and range check at the element's own mark
      axis.values.push_back(v);
    }
    campaign_.axes.push_back(key);
    return axis;
  }

  // zip: groups of list axes that advance together instead of multiplying.
  void read_zip() {
    group_of_.assign(axes_.size(), -1);
    if (!given(zip_)) return;
    if (!zip_.IsSequence()) fail(file_, zip_, "'zip' must be a list of lists of matrix keys, e.g. [[batch_size, workers]]");
    for (const auto& g : zip_) {
      if (!g.IsSequence() || g.size() < 2) fail(file_, g, "each 'zip' entry must list two or more matrix keys");
      size_t length = 0;
      for (const auto& k : g) {
        const std::string key = scalar_text(k);
        auto a = std::find_if(axes_.begin(), axes_.end(), [&](const Axis& x) { return x.key == key; });
        const auto& listed = campaign_.axes;
        if (a == axes_.end() || a->values.size() < 2 || std::find(listed.begin(), listed.end(), key) == listed.end())
          fail(file_, k, "'zip' names '" + key + "', which is not a list in the matrix");
        const size_t i = static_cast<size_t>(a - axes_.begin());
        if (group_of_[i] != -1) fail(file_, k, "'" + key + "' is zipped twice");
        if (length != 0 && a->values.size() != length)
          fail(file_, k, "zipped lists differ in length: '" + key + "' has " + std::to_string(a->values.size()) +
                             " values, the others " + std::to_string(length));
        length = a->values.size();
        group_of_[i] = groups_;
      }
      ++groups_;
    }
  }

  // A value twice in a plain axis is a mistake (it would run twice); in zipped lists it is normal.
  void check_distinct_values() const {
    for (size_t i = 0; i < axes_.size(); ++i) {
      if (group_of_[i] != -1) continue;
      std::set<std::string> distinct;
      for (const auto& v : axes_[i].values) {
        const std::string text = v.IsScalar() ? v.Scalar() : YAML::Dump(v);
        if (!distinct.insert(text).second) fail(file_, v, "'" + axes_[i].key + "' lists '" + text + "' twice");
      }
    }
  }

  // Odometer digits: each zip group is one digit, every other axis its own.
  void make_digits() {
    std::vector<int> digit_of_group(static_cast<size_t>(groups_), -1);
    for (size_t i = 0; i < axes_.size(); ++i) {
      const int group = group_of_[i];
      if (group >= 0 && digit_of_group[static_cast<size_t>(group)] >= 0) {
        digits_[static_cast<size_t>(digit_of_group[static_cast<size_t>(group)])].axes.push_back(i);
        continue;
      }
      if (group >= 0) digit_of_group[static_cast<size_t>(group)] = static_cast<int>(digits_.size());
      digits_.push_back(Digit{{i}, axes_[i].values.size()});
    }
  }

  [[noreturn]] void fail_too_many_runs(const std::string& how_many) const {
    fail_limit(file_, matrix_, "the matrix expands to " + how_many + " runs", "max_runs", limits_.max_runs);
  }

  void check_rule_counts() const {
    for (const auto& [rules, what] : {std::pair{&exclude_, "exclude"}, std::pair{&include_, "include"}})
      if (given(*rules) && rules->IsSequence() && static_cast<int64_t>(rules->size()) > limits_.max_rules)
        fail_limit(file_, *rules, "'" + std::string(what) + "' has " + std::to_string(rules->size()) + " entries",
                   "max_rules", limits_.max_rules);
  }

  // Combinations of the axes (zip groups advance together), before exclusion and generated modes.
  uint64_t axis_combinations() const {
    uint64_t product = 1;
    for (const auto& d : digits_) product = times(product, d.size);
    return product;
  }

  void check_run_count() const {
    const uint64_t runs = times(axis_combinations(), static_cast<uint64_t>(campaign_.repetitions));
    if (runs > static_cast<uint64_t>(limits_.max_runs))
      fail_too_many_runs(runs == std::numeric_limits<uint64_t>::max() ? "more than 2^64" : std::to_string(runs));
  }

  // Every combination before exclusion, generated modes included, is tested against every 'exclude' entry:
  // that product is bounded before any is made. A generator counts its largest yield over the devices named.
  void check_rule_evaluations() const {
    if (!given(exclude_) || !exclude_.IsSequence()) return;
    uint64_t modes = 1;
    if (generator_) {
      std::vector<std::string> devices{scalars_.device};
      for (const auto& a : axes_)
        if (a.key == "device") {
          devices.clear();
          for (const auto& v : a.values) devices.push_back(scalar_text(v));
        }
      for (const auto& d : devices) modes = std::max(modes, generated_mode_count(*generator_, d, fleet_));
    }
    const uint64_t combinations = times(axis_combinations(), modes);
    const uint64_t evaluations = times(combinations, exclude_.size());
    if (evaluations > static_cast<uint64_t>(limits_.max_rule_evaluations))
      fail_limit(file_, exclude_,
                 "'exclude' has " + std::to_string(exclude_.size()) + " entries x " + std::to_string(combinations) +
                     " combinations = " + std::to_string(evaluations) + " rule evaluations",
                 "max_rule_evaluations", limits_.max_rule_evaluations);
  }

  // Refuses the run that would take the campaign past max_runs (with its repetitions).
  void check_room_for_one_more() const {
    if (times(combos_.size() + 1, static_cast<uint64_t>(campaign_.repetitions)) > static_cast<uint64_t>(limits_.max_runs))
      fail_too_many_runs("more than " + std::to_string(limits_.max_runs));
  }

  void add(RunConfig c, const YAML::Node& where) {
    if (c.data.empty()) c.data = default_data_path(c.dataset);
    work(1);
    if (given(exclude_)) {
      work(exclude_.size());
      for (const auto& rule : exclude_)
        if (matches_rule(file_, rule, c)) return;
    }
    check_fits(file_, where, c);
    check_room_for_one_more();
    combos_.push_back(std::move(c));
  }

  // Odometer over the digits: the last key varies fastest; generated modes innermost, repetitions last.
  void expand() {
    if (given(exclude_)) {
      if (!exclude_.IsSequence()) fail(file_, exclude_, "'exclude' must be a list of mappings");
      for (const auto& rule : exclude_) check_rule(file_, "exclude", rule);
    }
    std::vector<size_t> index(digits_.size(), 0);
    do {
      work(1);
      expand_combination(index);
    } while (advance(index));
  }

  void expand_combination(const std::vector<size_t>& index) {
    RunConfig c;
    // Errors about the combination point at its model value, and about its power mode at the power_mode
    // value. Pointers: assigning one YAML::Node to another would overwrite the node it refers to.
    const YAML::Node* where = &matrix_;
    const YAML::Node* mode_where = nullptr;
    for (size_t d = 0; d < digits_.size(); ++d)
      for (size_t a : digits_[d].axes) {
        const YAML::Node& v = axes_[a].values[index[d]];
        apply_checked(c, file_, axes_[a].key, v);
        if (axes_[a].key == "model") where = &v;
        if (axes_[a].key == "power_mode") mode_where = &v;
      }
    check_power_mode(file_, mode_where ? *mode_where : *where, c, fleet_);
    if (!generator_) return add(std::move(c), *where);
    if (generator_->adaptive) return add_plan(std::move(c), *where);
    for (auto& m : generate_modes(file_, *generator_, c, limits_, fleet_, campaign_.mode_tables))
      add(std::move(m), *where);
  }

  // generate: adaptive: the combination's grid (exclusions applied) becomes one plan's candidates.
  void add_plan(RunConfig c, const YAML::Node& where) {
    const YAML::Node& g = generator_->node;
    if (campaign_.repetitions != 1)
      fail(file_, g, "'power_mode: {generate: adaptive}' profiles each mode once: 'repetitions' must be 1");
    if (c.epochs < 2)
      fail(file_, g, "'power_mode: {generate: adaptive}' needs 'epochs' >= 2: a mode's figures are the epochs after "
                     "the warm-up epoch 0");
    if (c.data.empty()) c.data = default_data_path(c.dataset);
    check_fits(file_, where, c);
    AdaptivePlanSpec plan = *generator_->adaptive;
    for (const auto& m : generate_modes(file_, *generator_, c, limits_, fleet_, campaign_.mode_tables)) {
      work(1);
      bool excluded = false;
      if (given(exclude_)) {
        work(exclude_.size());
        for (const auto& rule : exclude_) excluded = excluded || matches_rule(file_, rule, m);
      }
      if (!excluded) plan.candidates.push_back(mode_settings_of(m));
    }
    if (plan.budget > static_cast<int64_t>(plan.candidates.size()))
      fail(file_, g, "'power_mode.budget' " + std::to_string(plan.budget) + " is more than the " +
                         std::to_string(plan.candidates.size()) + " candidate modes of " + c.device);
    for (const auto& other : campaign_.adaptive_plans)
      if (other.base == c) fail(file_, where, "two adaptive plans for the same configuration of " + c.device);
    plan.base = std::move(c);
    campaign_.adaptive_plans.push_back(std::move(plan));
  }

  // Next odometer position; false after the last.
  bool advance(std::vector<size_t>& index) const {
    for (size_t i = digits_.size(); i > 0; --i) {
      if (++index[i - 1] < digits_[i - 1].size) return true;
      index[i - 1] = 0;
    }
    return false;
  }

  void add_includes() {
    if (!given(include_)) return;
    if (!include_.IsSequence()) fail(file_, include_, "'include' must be a list of mappings");
    for (const auto& rule : include_) {
      check_rule(file_, "include", rule);
      RunConfig c = scalars_;
      for (auto it = rule.begin(); it != rule.end(); ++it) apply_checked(c, file_, scalar_text(it->first), it->second);
      for (const auto& a : axes_)
        if (a.values.size() > 1 && !rule[a.key])
          fail(file_, rule, "'include' entry must give '" + a.key + "' (a list in the matrix)");
      if (c.data.empty()) c.data = default_data_path(c.dataset);
      check_fits(file_, rule, c);
      check_power_mode(file_, rule, c, fleet_);
      check_room_for_one_more();
      combos_.push_back(std::move(c));
    }
  }

  // The runs: each combination `repetitions` times, in turn. Without repetitions the combinations are the
  // runs (no copy: the peak stays one vector of them).
  void repeat() {
    if (campaign_.repetitions == 1) {
      campaign_.runs = std::move(combos_);
      return;
    }
    campaign_.runs.reserve(combos_.size() * static_cast<size_t>(campaign_.repetitions));
    for (auto& c : combos_)
      for (int64_t r = 0; r < campaign_.repetitions; ++r) {
        c.repetition = r;
        campaign_.runs.push_back(c);
      }
    std::vector<RunConfig>().swap(combos_);
  }

  const std::string file_;
  const CampaignLimits& limits_;
  const FleetTables& fleet_;
  const std::chrono::steady_clock::time_point start_;
  uint64_t work_done_ = 0;
  uint64_t next_clock_check_ = 1024;
  YAML::Node root_;
  YAML::Node matrix_, zip_, exclude_, include_;
  Campaign campaign_;
  std::vector<Axis> axes_;
  std::optional<ModeGenerator> generator_;
  RunConfig scalars_;   // the single-valued keys, base of 'include' entries
  std::vector<int> group_of_;   // zip group of each axis, -1 for none
  int groups_ = 0;
  std::vector<Digit> digits_;
  std::vector<RunConfig> combos_;
};

RunConfig parse_run_spec_or_throw(std::string_view text, const std::string& file) {
  YAML::Node root = load_yaml(text, file);
  if (!root.IsMap()) fail(file, root, "a run spec must be a mapping of run keys to values");
  RunConfig c;
  std::set<std::string> seen;
  bool has_model = false, has_dataset = false;
  for (auto it = root.begin(); it != root.end(); ++it) {
    const std::string key = scalar_text(it->first);
    if (!is_run_key(key)) fail(file, it->first, "unknown key '" + key + "' (known: " + known_keys() + ")");
    if (!seen.insert(key).second) fail(file, it->first, "duplicate key '" + key + "'");
    if (it->second.IsSequence()) fail(file, it->second, "'" + key + "' must be a single value in a run spec");
    has_model |= key == "model";
    has_dataset |= key == "dataset";
    apply_checked(c, file, key, it->second);
  }
  if (!has_model) fail(file, root, "run spec is missing 'model'");
  if (!has_dataset) fail(file, root, "run spec is missing 'dataset'");
  if (c.data.empty()) c.data = default_data_path(c.dataset);
  return c;
}

}  // namespace

std::vector<size_t> dispatch_order(const Campaign& c, const std::vector<std::string>& run_classes) {
  std::vector<size_t> order(c.runs.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  if (!c.dispatch_by_power_mode) return order;
  // The mode each run executes in, resolved with its class's predefined modes (JETSON.md): named modes, and
  // explicit settings or no power mode at all with the class's reference state filling what is not given.
  // A run on no known class (any, a named board of unknown class, host) sets no core count: key 0.
  using Key = std::tuple<int64_t, int64_t, int64_t, int64_t>;
  std::vector<Key> keys(c.runs.size());
  std::map<std::string, std::optional<perf::SimBoard>> boards;
  for (size_t i = 0; i < c.runs.size(); ++i) {
    const RunConfig& r = c.runs[i];
    keys[i] = {r.power_mode.cores, r.power_mode.cpu_khz, r.power_mode.gpu_hz, r.power_mode.emc_hz};
    const std::string cls = i < run_classes.size() && !run_classes[i].empty() ? run_classes[i] : device_target_class(r.device);
    if (cls.empty() || cls == "host") continue;
    auto it = boards.find(cls);
    if (it == boards.end()) {
      auto b = perf::SimBoard::open(cls);
      it = boards.emplace(cls, b ? std::optional<perf::SimBoard>(std::move(b).value()) : std::nullopt).first;
    }
    if (!it->second) continue;
    if (auto s = it->second->resolve(r)) keys[i] = {s->cores, s->cpu_khz, s->gpu_hz, s->emc_hz};
  }
  std::stable_sort(order.begin(), order.end(), [&](size_t ia, size_t ib) {
    const Key& a = keys[ia];
    const Key& b = keys[ib];
    // Runs that leave the cores alone keep file order among themselves, ahead of the others.
    const bool ea = std::get<0>(a) > 0, eb = std::get<0>(b) > 0;
    if (ea != eb) return !ea;
    if (!ea) return false;
    return b < a;
  });
  return order;
}

namespace {
Status too_many_bytes(const std::string& file, uint64_t size, int64_t limit) {
  return invalid_argument(file + ": " + std::to_string(size) + " bytes, more than the limit max_yaml_bytes = " +
                          std::to_string(limit) + " (docs/CAMPAIGNS.md, \"Limits\")");
}
}  // namespace

Result<std::string> read_text_file(const std::string& path, int64_t max_bytes) {
  std::error_code ec;
  const auto size = std::filesystem::file_size(path, ec);
  if (!ec && max_bytes > 0 && size > static_cast<uint64_t>(max_bytes)) return too_many_bytes(path, size, max_bytes);
  std::ifstream in(path, std::ios::binary);
  if (!in) return io_error(path + ": cannot open for reading");
  std::ostringstream ss;
  ss << in.rdbuf();
  if (in.bad()) return io_error(path + ": read error");
  return ss.str();
}

namespace {

// Runs a parser that throws YamlError (or lets yaml-cpp throw), giving the error as kInvalidArgument.
template <class Parse>
auto parse_or_status(const std::string& file_name, Parse parse) -> Result<decltype(parse())> {
  try {
    return parse();
  } catch (const YamlError& e) {
    return invalid_argument(e.message);
  } catch (const YAML::Exception& e) {
    return invalid_argument(place(file_name, e.mark) + ": " + e.msg);
  }
}

// Campaign and run files are UTF-8 text without the control characters YAML 1.2 excludes from a document (a NUL,
// for one, reaches yaml-cpp's scalars as a lone 0xA0 byte: fuzz/regressions/api/nul-in-campaign-name-not-json);
// yaml-cpp does not check, and PostgreSQL refuses a name that is not UTF-8. The first bad byte is named FILE:LINE:COL.
Status require_utf8(std::string_view text, const std::string& file_name) {
  const auto bad_utf8 = invalid_utf8_at(text);
  const auto bad = bad_utf8 ? bad_utf8 : control_char_at(text);
  if (!bad) return Status::ok();
  size_t line = 1, col = 1;
  for (size_t i = 0; i < *bad; ++i) {
    if (text[i] == '\n') {
      ++line;
      col = 1;
    } else {   // columns count bytes, as yaml-cpp's marks do
      ++col;
    }
  }
  const auto c = static_cast<unsigned char>(text[*bad]);
  char what[96];
  if (bad_utf8)
    std::snprintf(what, sizeof what, "byte 0x%02X is not valid UTF-8", c);
  else
    std::snprintf(what, sizeof what, "control character U+%04X is not allowed",
                  c == 0xC2 ? static_cast<unsigned char>(text[*bad + 1]) : c);
  return invalid_argument(file_name + ":" + std::to_string(line) + ":" + std::to_string(col) + ": " + what +
                          " (campaign and run files are UTF-8 text; tab, LF and CR are their only control characters)");
}

}  // namespace

Result<Campaign> parse_campaign(std::string_view yaml_text, const std::string& file_name) {
  return parse_campaign(yaml_text, file_name, CampaignLimits{});
}

Result<Campaign> parse_campaign(std::string_view yaml_text, const std::string& file_name, const CampaignLimits& limits,
                                const FleetTables& fleet) {
  if (static_cast<int64_t>(yaml_text.size()) > limits.max_yaml_bytes)
    return too_many_bytes(file_name, yaml_text.size(), limits.max_yaml_bytes);
  JS_RETURN_IF_ERROR(require_utf8(yaml_text, file_name));
  return parse_or_status(file_name, [&] { return CampaignParser(yaml_text, file_name, limits, fleet).parse(); });
}

Result<Campaign> load_campaign_file(const std::string& path, const CampaignLimits& limits) {
  JS_ASSIGN_OR_RETURN(std::string text, read_text_file(path, limits.max_yaml_bytes));
  return parse_campaign(text, path, limits);
}

Result<RunConfig> parse_run_spec(std::string_view yaml_text, const std::string& file_name) {
  JS_RETURN_IF_ERROR(require_utf8(yaml_text, file_name));
  return parse_or_status(file_name, [&] { return parse_run_spec_or_throw(yaml_text, file_name); });
}

Result<RunConfig> load_run_spec_file(const std::string& path) {
  JS_ASSIGN_OR_RETURN(std::string text, read_text_file(path));
  return parse_run_spec(text, path);
}

}  // namespace jetsweep
