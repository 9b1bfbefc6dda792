#include "common/campaign.hpp"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <charconv>
#include <optional>
#include <random>

#include "common/board_classes.hpp"
#include "common/perf/sim_board.hpp"

#include <fstream>
#include <functional>
#include <map>
#include <set>
#include <tuple>
#include <sstream>

namespace jetsweep {
namespace {

// Thrown inside the parser only; converted to Status at parse_* boundaries.
struct YamlError {
  std::string message;
};

std::string place(const std::string& file, const YAML::Mark& mark) {
  if (mark.line < 0) return file;
  return file + ":" + std::to_string(mark.line + 1) + ":" + std::to_string(mark.column + 1);
}

[[noreturn]] void fail(const std::string& file, const YAML::Node& node, const std::string& what) {
  throw YamlError{place(file, node.Mark()) + ": " + what};
}

std::string scalar_text(const YAML::Node& n) { return n.IsScalar() ? n.Scalar() : std::string(); }

const char* node_kind(const YAML::Node& n) {
  if (n.IsSequence()) return "a list";
  if (n.IsMap()) return "a mapping";
  if (n.IsNull()) return "nothing";
  return "a scalar";
}

int64_t to_int(const std::string& file, const std::string& key, const YAML::Node& n) {
  if (!n.IsScalar()) fail(file, n, "'" + key + "' expects an integer, got " + node_kind(n));
  const std::string& s = n.Scalar();
  try {
    size_t used = 0;
    long long v = std::stoll(s, &used, 10);
    if (used != s.size()) throw std::invalid_argument(s);
    return v;
  } catch (const std::exception&) {
    fail(file, n, "'" + key + "' expects an integer, got '" + s + "'");
  }
}

double to_double(const std::string& file, const std::string& key, const YAML::Node& n) {
  if (!n.IsScalar()) fail(file, n, "'" + key + "' expects a number, got " + node_kind(n));
  const std::string& s = n.Scalar();
  try {
    size_t used = 0;
    double v = std::stod(s, &used);
    if (used != s.size()) throw std::invalid_argument(s);
    return v;
  } catch (const std::exception&) {
    fail(file, n, "'" + key + "' expects a number, got '" + s + "'");
  }
}

bool to_bool(const std::string& file, const std::string& key, const YAML::Node& n) {
  if (!n.IsScalar()) fail(file, n, "'" + key + "' expects true or false, got " + node_kind(n));
  const std::string& s = n.Scalar();
  if (s == "true" || s == "yes" || s == "on") return true;
  if (s == "false" || s == "no" || s == "off") return false;
  fail(file, n, "'" + key + "' expects true or false, got '" + s + "'");
}

std::string to_string_value(const std::string& file, const std::string& key, const YAML::Node& n) {
  if (!n.IsScalar()) fail(file, n, "'" + key + "' expects a string, got " + node_kind(n));
  if (n.Scalar().empty()) fail(file, n, "'" + key + "' must not be empty");
  return n.Scalar();
}

// power_mode: a named nvpmodel mode ("MAXN", "15W", or its id) or {cores, cpu_khz, gpu_hz, emc_hz}.
void set_power_mode(RunConfig& c, const std::string& file, const YAML::Node& n) {
  c.power_mode_name.clear();
  c.cores = c.cpu_khz = c.gpu_hz = c.emc_hz = 0;
  if (n.IsScalar()) {
    c.power_mode_name = to_string_value(file, "power_mode", n);
    return;
  }
  if (!n.IsMap()) fail(file, n, "'power_mode' expects a mode name or a mapping {cores, cpu_khz, gpu_hz, emc_hz}");
  for (auto it = n.begin(); it != n.end(); ++it) {
    const std::string key = scalar_text(it->first);
    int64_t* field = key == "cores" ? &c.cores : key == "cpu_khz" ? &c.cpu_khz : key == "gpu_hz" ? &c.gpu_hz
                   : key == "emc_hz" ? &c.emc_hz : nullptr;
    if (!field) fail(file, it->first, "unknown power_mode key '" + key + "' (known: cores, cpu_khz, gpu_hz, emc_hz)");
    *field = to_int(file, "power_mode." + key, it->second);
    if (*field <= 0) fail(file, it->second, "'power_mode." + key + "' must be positive");
  }
}

std::string join_classes() {
  std::string s;
  for (const auto& c : board_classes()) s += (s.empty() ? "" : ", ") + c;
  return s;
}

// A run on a board class that has less RAM than the run needs would wait forever: refuse it at `where`.
void check_fits(const std::string& file, const YAML::Node& where, const RunConfig& c) {
  const std::string cls = device_target_class(c.device);
  if (cls.empty() || cls == "host") return;
  auto t = board_class_tables(cls);
  if (!t) return;
  std::string why;
  const auto unfit = classes_without_room(c, &why);
  if (std::find(unfit.begin(), unfit.end(), cls) != unfit.end())
    fail(file, where, "model '" + c.model + "' does not fit on '" + cls + "' (" + std::to_string(t->mem_gb) +
                          " GB): " + why + "; exclude that combination");
  if (required_memory_bytes(c, &why) > t->mem_total_bytes())
    fail(file, where, "model '" + c.model + "' does not fit on '" + cls + "' (" + std::to_string(t->mem_gb) +
                          " GB): " + why + "; exclude that combination");
}

// A named power mode the run's board class does not define would fail on every board of it: refuse it at
// `where` (the power_mode value), listing the modes the class has.
void check_named_mode(const std::string& file, const YAML::Node& where, const RunConfig& c) {
  const std::string cls = device_target_class(c.device);
  if (cls.empty() || cls == "host") return;
  if (!c.power_mode_name.empty()) {
    auto cal = sim::class_calibration(cls);
    if (!cal) return;
    std::string names;
    for (const auto& m : cal->modes) {
      if (m.name == c.power_mode_name || std::to_string(m.id) == c.power_mode_name) return;
      names += (names.empty() ? "" : ", ") + std::to_string(m.id) + "=" + m.name;
    }
    fail(file, where, "power mode '" + c.power_mode_name + "' is not defined on '" + cls + "' (its nvpmodel modes: " +
                          names + "); give the mode's settings instead ({cores, cpu_khz, gpu_hz, emc_hz})");
  }
}

// One settable key of RunConfig: how to assign it from a YAML scalar.
using Setter = std::function<void(RunConfig&, const std::string& file, const std::string& key, const YAML::Node&)>;

const std::vector<std::pair<std::string, Setter>>& setters() {
  static const std::vector<std::pair<std::string, Setter>> kSetters = {
      {"device", [](RunConfig& c, auto& f, auto& k, auto& n) {
         c.device = to_string_value(f, k, n);
         if (is_every_instance(c.device) && device_target_class(c.device).empty())
           fail(f, n, "'" + c.device + "': '/*' follows a board class (known: " + join_classes() + ", host)");
       }},
      {"model", [](RunConfig& c, auto& f, auto& k, auto& n) { c.model = to_string_value(f, k, n); }},
      {"dataset", [](RunConfig& c, auto& f, auto& k, auto& n) { c.dataset = to_string_value(f, k, n); }},
      {"data", [](RunConfig& c, auto& f, auto& k, auto& n) { c.data = to_string_value(f, k, n); }},
      {"batch_size", [](RunConfig& c, auto& f, auto& k, auto& n) { c.batch_size = to_int(f, k, n); }},
      {"workers", [](RunConfig& c, auto& f, auto& k, auto& n) { c.workers = to_int(f, k, n); }},
      {"prefetch", [](RunConfig& c, auto& f, auto& k, auto& n) { c.prefetch = to_int(f, k, n); }},
      {"epochs", [](RunConfig& c, auto& f, auto& k, auto& n) { c.epochs = to_int(f, k, n); }},
      {"threads", [](RunConfig& c, auto& f, auto& k, auto& n) { c.threads = to_int(f, k, n); }},
      {"seed", [](RunConfig& c, auto& f, auto& k, auto& n) { c.seed = to_int(f, k, n); }},
      {"drop_caches", [](RunConfig& c, auto& f, auto& k, auto& n) { c.drop_caches = to_bool(f, k, n); }},
      {"sample_hz", [](RunConfig& c, auto& f, auto& k, auto& n) { c.sample_hz = to_double(f, k, n); }},
      {"max_minibatches", [](RunConfig& c, auto& f, auto& k, auto& n) { c.max_minibatches = to_int(f, k, n); }},
      {"power_mode", [](RunConfig& c, auto& f, auto& k, auto& n) { set_power_mode(c, f, n); }},
      {"pin_clocks", [](RunConfig& c, auto& f, auto& k, auto& n) { c.pin_clocks = to_bool(f, k, n); }},
      {"fan_max", [](RunConfig& c, auto& f, auto& k, auto& n) { c.fan_max = to_bool(f, k, n); }},
      {"accelerator", [](RunConfig& c, auto& f, auto& k, auto& n) { c.accelerator = to_string_value(f, k, n); }},
      {"timing", [](RunConfig& c, auto& f, auto& k, auto& n) { c.timing = to_string_value(f, k, n); }},
      {"min_memory_mb", [](RunConfig& c, auto& f, auto& k, auto& n) { c.min_memory_mb = to_int(f, k, n); }},
  };
  return kSetters;
}

const Setter* find_setter(const std::string& key) {
  for (const auto& [name, setter] : setters())
    if (name == key) return &setter;
  return nullptr;
}

std::string known_keys() {
  std::string s;
  for (const auto& [name, setter] : setters()) s += (s.empty() ? "" : ", ") + name;
  return s;
}

// Applies one value and re-checks the ranges of the key it set, reporting at the value's mark.
void apply_checked(RunConfig& c, const std::string& file, const std::string& key, const YAML::Node& value) {
  (*find_setter(key))(c, file, key, value);
  for (const auto& p : check_ranges(c))
    if (p.key == key) fail(file, value, "'" + key + "': " + p.what);
}

YAML::Node load_yaml(std::string_view text, const std::string& file) {
  try {
    return YAML::Load(std::string(text));
  } catch (const YAML::ParserException& e) {
    throw YamlError{place(file, e.mark) + ": YAML syntax error: " + e.msg};
  } catch (const YAML::Exception& e) {
    throw YamlError{file + ": YAML error: " + e.what()};
  }
}

// A power_mode value that asks for modes generated from the board class's tables.
struct ModeGenerator {
  YAML::Node node;
  bool sample = false;       // uniform random sample of `count` modes; else the grid
  int64_t every = 1;         // grid: every k-th value of each frequency table
  int64_t count = 0;         // sample size
  int64_t seed = 1;
  std::vector<int64_t> cores;  // restrict core counts (empty = 1..max)
};

bool is_generator(const YAML::Node& n) { return n.IsMap() && n["generate"]; }

// A default-constructed YAML::Node is "defined" and null: presence means a non-null value.
bool given(const YAML::Node& n) { return n.IsDefined() && !n.IsNull(); }

ModeGenerator parse_generator(const std::string& file, const YAML::Node& n) {
  ModeGenerator g;
  g.node = n;
  for (auto it = n.begin(); it != n.end(); ++it) {
    const std::string key = scalar_text(it->first);
    if (key == "generate") {
      const std::string kind = to_string_value(file, "power_mode.generate", it->second);
      if (kind != "grid" && kind != "sample")
        fail(file, it->second, "'power_mode.generate' must be 'grid' or 'sample', not '" + kind + "'");
      g.sample = kind == "sample";
    } else if (key == "every") {
      g.every = to_int(file, "power_mode.every", it->second);
      if (g.every < 1) fail(file, it->second, "'power_mode.every' must be >= 1");
    } else if (key == "count") {
      g.count = to_int(file, "power_mode.count", it->second);
      if (g.count < 1) fail(file, it->second, "'power_mode.count' must be >= 1");
    } else if (key == "seed") {
      g.seed = to_int(file, "power_mode.seed", it->second);
    } else if (key == "cores") {
      const auto& v = it->second;
      if (v.IsSequence()) {
        for (const auto& c : v) g.cores.push_back(to_int(file, "power_mode.cores", c));
      } else {
        g.cores.push_back(to_int(file, "power_mode.cores", v));
      }
      for (int64_t c : g.cores)
        if (c < 1) fail(file, v, "'power_mode.cores' must be >= 1");
    } else {
      fail(file, it->first, "unknown power_mode generator key '" + key + "' (known: generate, every, count, seed, cores)");
    }
  }
  if (g.sample && g.count == 0) fail(file, n, "'power_mode: {generate: sample}' needs 'count'");
  if (!g.sample && g.count != 0) fail(file, n, "'count' goes with 'generate: sample'");
  return g;
}

// The modes a generator yields for one board class, in table order (cores, CPU, GPU, EMC).
std::vector<RunConfig> generate_modes(const std::string& file, const ModeGenerator& g, const RunConfig& base) {
  auto tables = board_class_tables(device_target_class(base.device));
  if (!tables)
    fail(file, g.node, "power_mode generation needs a board class in 'device' for this run, got '" + base.device +
                           "': " + tables.status().message());
  const auto& t = tables.value();
  std::vector<int64_t> cores = g.cores;
  if (cores.empty())
    for (int64_t c = 1; c <= t.cores; ++c) cores.push_back(c);
  for (int64_t c : cores)
    if (c > t.cores) fail(file, g.node, "'power_mode.cores' " + std::to_string(c) + " exceeds the " + std::to_string(t.cores) + " cores of " + t.board_class);
  auto every = [&](const std::vector<int64_t>& v) {
    std::vector<int64_t> out;
    const size_t step = static_cast<size_t>(g.sample ? 1 : g.every);
    for (size_t i = 0; i < v.size(); i += step) out.push_back(v[i]);
    return out;
  };
  const auto cpu = every(t.cpu_khz), gpu = every(t.gpu_hz), emc = every(t.emc_hz);
  const uint64_t total = cores.size() * cpu.size() * gpu.size() * emc.size();
  std::vector<uint64_t> picks;
  if (g.sample) {
    if (static_cast<uint64_t>(g.count) > total)
      fail(file, g.node, "'power_mode.count' " + std::to_string(g.count) + " exceeds the " + std::to_string(total) +
                             " modes of " + t.board_class);
    // Floyd's algorithm: a uniform sample of `count` distinct indices, reproducible from the seed.
    std::mt19937_64 rng(static_cast<uint64_t>(g.seed));
    std::set<uint64_t> chosen;
    for (uint64_t j = total - static_cast<uint64_t>(g.count); j < total; ++j) {
      std::uniform_int_distribution<uint64_t> d(0, j);
      const uint64_t r = d(rng);
      if (!chosen.insert(r).second) chosen.insert(j);
    }
    picks.assign(chosen.begin(), chosen.end());
  } else {
    if (total > static_cast<uint64_t>(kMaxRunsPerCampaign))
      fail(file, g.node, "the generated grid has " + std::to_string(total) + " modes");
    picks.resize(total);
    for (uint64_t i = 0; i < total; ++i) picks[i] = i;
  }
  std::vector<RunConfig> out;
  out.reserve(picks.size());
  for (uint64_t idx : picks) {
    RunConfig c = base;
    c.power_mode_name.clear();
    c.emc_hz = emc[idx % emc.size()];
    idx /= emc.size();
    c.gpu_hz = gpu[idx % gpu.size()];
    idx /= gpu.size();
    c.cpu_khz = cpu[idx % cpu.size()];
    idx /= cpu.size();
    c.cores = cores[idx];
    out.push_back(std::move(c));
  }
  return out;
}

// Whether `run` has every value the rule (a mapping of run keys to values) names.
bool matches_rule(const std::string& file, const YAML::Node& rule, const RunConfig& run) {
  for (auto it = rule.begin(); it != rule.end(); ++it) {
    RunConfig probe = run;
    (*find_setter(scalar_text(it->first)))(probe, file, scalar_text(it->first), it->second);
    if (!(probe == run)) return false;
  }
  return true;
}

void check_rule(const std::string& file, const std::string& what, const YAML::Node& rule) {
  if (!rule.IsMap()) fail(file, rule, "each '" + what + "' entry must be a mapping of run keys to values");
  for (auto it = rule.begin(); it != rule.end(); ++it) {
    const std::string key = scalar_text(it->first);
    if (!find_setter(key)) fail(file, it->first, "unknown key '" + key + "' in '" + what + "' (known: " + known_keys() + ")");
    if (it->second.IsSequence()) fail(file, it->second, "'" + what + "' entries take single values");
    if (key == "power_mode" && is_generator(it->second)) fail(file, it->second, "'" + what + "' cannot generate power modes");
    RunConfig probe;
    apply_checked(probe, file, key, it->second);
  }
}

Campaign parse_campaign_or_throw(std::string_view text, const std::string& file) {
  YAML::Node root = load_yaml(text, file);
  if (!root.IsMap()) fail(file, root, "a campaign file must be a mapping with 'campaign' and 'matrix' keys");
  Campaign campaign;
  YAML::Node matrix, zip, exclude, include;
  for (auto it = root.begin(); it != root.end(); ++it) {
    const std::string key = scalar_text(it->first);
    if (key == "campaign") {
      campaign.name = to_string_value(file, key, it->second);
    } else if (key == "description") {
      campaign.description = it->second.IsScalar() ? it->second.Scalar() : "";
    } else if (key == "repetitions") {
      campaign.repetitions = to_int(file, key, it->second);
      if (campaign.repetitions < 1 || campaign.repetitions > 100000)
        fail(file, it->second, "'repetitions' must be between 1 and 100000");
    } else if (key == "priority") {
      campaign.priority = to_int(file, key, it->second);
      if (campaign.priority < -1000 || campaign.priority > 1000)
        fail(file, it->second, "'priority' must be between -1000 and 1000");
    } else if (key == "order") {
      const std::string order = to_string_value(file, key, it->second);
      if (order != "power_modes" && order != "file")
        fail(file, it->second, "'order' must be 'power_modes' (default: each board's modes in an order that needs "
                               "no reboot) or 'file' (the order of expansion)");
      campaign.dispatch_by_power_mode = order == "power_modes";
    } else if (key == "matrix") {
      matrix = it->second;
    } else if (key == "zip") {
      zip = it->second;
    } else if (key == "exclude") {
      exclude = it->second;
    } else if (key == "include") {
      include = it->second;
    } else {
      fail(file, it->first,
           "unknown top-level key '" + key + "' (known: campaign, description, repetitions, priority, order, matrix, "
           "zip, exclude, include)");
    }
  }
  if (campaign.name.empty()) fail(file, root, "missing 'campaign' (the campaign's name)");
  if (!given(matrix)) fail(file, root, "missing 'matrix'");
  if (!matrix.IsMap()) fail(file, matrix, "'matrix' must be a mapping of run keys to a value or a list of values");

  // Each axis: key plus its values (a scalar is a one-value axis); generated power modes are kept apart.
  struct Axis {
    std::string key;
    std::vector<YAML::Node> values;
  };
  std::vector<Axis> axes;
  std::set<std::string> seen;
  bool has_model = false, has_dataset = false;
  std::optional<ModeGenerator> generator;
  RunConfig scalars;  // the single-valued keys, base of 'include' entries
  for (auto it = matrix.begin(); it != matrix.end(); ++it) {
    const std::string key = scalar_text(it->first);
    if (!find_setter(key)) {
      std::string hint = key == "repetition" ? " (use the top-level 'repetitions')" : "";
      fail(file, it->first, "unknown key '" + key + "'" + hint + " (known: " + known_keys() + ")");
    }
    if (!seen.insert(key).second) fail(file, it->first, "duplicate key '" + key + "'");
    has_model |= key == "model";
    has_dataset |= key == "dataset";
    if (key == "power_mode" && is_generator(it->second)) {
      generator = parse_generator(file, it->second);
      continue;
    }
    Axis axis{key, {}};
    if (it->second.IsSequence()) {
      if (it->second.size() == 0) fail(file, it->second, "'" + key + "' has an empty list: nothing to run");
      for (const auto& v : it->second) {
        if (key == "power_mode" && is_generator(v)) fail(file, v, "a power_mode generator cannot be part of a list");
        RunConfig probe;
        apply_checked(probe, file, key, v);  // type and range check at the element's own mark
        axis.values.push_back(v);
      }
      campaign.axes.push_back(key);
    } else {
      apply_checked(scalars, file, key, it->second);
      axis.values.push_back(it->second);
    }
    axes.push_back(std::move(axis));
  }
  if (!has_model) fail(file, matrix, "matrix is missing 'model'");
  if (!has_dataset) fail(file, matrix, "matrix is missing 'dataset'");

  // zip: groups of list axes that advance together instead of multiplying.
  std::vector<int> group_of(axes.size(), -1);
  int groups = 0;
  if (given(zip)) {
    if (!zip.IsSequence()) fail(file, zip, "'zip' must be a list of lists of matrix keys, e.g. [[batch_size, workers]]");
    for (const auto& g : zip) {
      if (!g.IsSequence() || g.size() < 2) fail(file, g, "each 'zip' entry must list two or more matrix keys");
      size_t length = 0;
      for (const auto& k : g) {
        const std::string key = scalar_text(k);
        auto a = std::find_if(axes.begin(), axes.end(), [&](const Axis& x) { return x.key == key; });
        if (a == axes.end() || a->values.size() < 2 || std::find(campaign.axes.begin(), campaign.axes.end(), key) == campaign.axes.end())
          fail(file, k, "'zip' names '" + key + "', which is not a list in the matrix");
        const size_t i = static_cast<size_t>(a - axes.begin());
        if (group_of[i] != -1) fail(file, k, "'" + key + "' is zipped twice");
        if (length != 0 && a->values.size() != length)
          fail(file, k, "zipped lists differ in length: '" + key + "' has " + std::to_string(a->values.size()) +
                            " values, the others " + std::to_string(length));
        length = a->values.size();
        group_of[i] = groups;
      }
      ++groups;
    }
  }
  // A value twice in a plain axis is a mistake (it would run twice); in zipped lists it is normal.
  for (size_t i = 0; i < axes.size(); ++i) {
    if (group_of[i] != -1) continue;
    std::set<std::string> distinct;
    for (const auto& v : axes[i].values) {
      const std::string text = v.IsScalar() ? v.Scalar() : YAML::Dump(v);
      if (!distinct.insert(text).second) fail(file, v, "'" + axes[i].key + "' lists '" + text + "' twice");
    }
  }
  // Odometer digits: each zip group is one digit, every other axis its own.
  struct Digit {
    std::vector<size_t> axes;
    size_t size = 1;
  };
  std::vector<Digit> digits;
  std::vector<int> digit_of_group(static_cast<size_t>(groups), -1);
  for (size_t i = 0; i < axes.size(); ++i) {
    if (group_of[i] >= 0 && digit_of_group[static_cast<size_t>(group_of[i])] >= 0) {
      digits[static_cast<size_t>(digit_of_group[static_cast<size_t>(group_of[i])])].axes.push_back(i);
      continue;
    }
    if (group_of[i] >= 0) digit_of_group[static_cast<size_t>(group_of[i])] = static_cast<int>(digits.size());
    digits.push_back(Digit{{i}, axes[i].values.size()});
  }

  {
    int64_t product = campaign.repetitions;
    for (const auto& d : digits) {
      product *= static_cast<int64_t>(d.size);
      if (product > kMaxRunsPerCampaign)
        fail(file, matrix, "the matrix expands to more than " + std::to_string(kMaxRunsPerCampaign) + " runs");
    }
  }
  const bool has_exclude = given(exclude);
  if (has_exclude) {
    if (!exclude.IsSequence()) fail(file, exclude, "'exclude' must be a list of mappings");
    for (const auto& rule : exclude) check_rule(file, "exclude", rule);
  }
  std::vector<RunConfig> combos;
  auto add = [&](RunConfig c, const YAML::Node& where) {
    if (c.data.empty()) c.data = default_data_path(c.dataset);
    if (has_exclude)
      for (const auto& rule : exclude)
        if (matches_rule(file, rule, c)) return;
    check_fits(file, where, c);
    if (static_cast<int64_t>(combos.size()) * campaign.repetitions >= kMaxRunsPerCampaign)
      fail(file, matrix, "the matrix expands to more than " + std::to_string(kMaxRunsPerCampaign) + " runs");
    combos.push_back(std::move(c));
  };
  // Odometer over the digits: the last key varies fastest; generated modes innermost, repetitions last.
  std::vector<size_t> index(digits.size(), 0);
  while (true) {
    RunConfig c;
    YAML::Node where = matrix;  // errors about the combination point at its model value
    const YAML::Node* mode_where = nullptr;   // ... and about its power mode at the power_mode value
    for (const auto& d : digits)
      for (size_t a : d.axes) {
        const YAML::Node& v = axes[a].values[index[&d - digits.data()]];
        apply_checked(c, file, axes[a].key, v);
        if (axes[a].key == "model") where = v;
        if (axes[a].key == "power_mode") mode_where = &v;
      }
    check_named_mode(file, mode_where ? *mode_where : where, c);
    if (generator) {
      for (auto& m : generate_modes(file, *generator, c)) add(std::move(m), where);
    } else {
      add(std::move(c), where);
    }
    size_t i = digits.size();
    bool done = digits.empty();
    while (i > 0) {
      --i;
      if (++index[i] < digits[i].size) break;
      index[i] = 0;
      if (i == 0) done = true;
    }
    if (done) break;
  }
  if (given(include)) {
    if (!include.IsSequence()) fail(file, include, "'include' must be a list of mappings");
    for (const auto& rule : include) {
      check_rule(file, "include", rule);
      RunConfig c = scalars;
      for (auto it = rule.begin(); it != rule.end(); ++it) apply_checked(c, file, scalar_text(it->first), it->second);
      for (const auto& a : axes)
        if (a.values.size() > 1 && !rule[a.key])
          fail(file, rule, "'include' entry must give '" + a.key + "' (a list in the matrix)");
      if (c.data.empty()) c.data = default_data_path(c.dataset);
      check_fits(file, rule, c);
      check_named_mode(file, rule, c);
      combos.push_back(std::move(c));
    }
  }
  campaign.runs.reserve(combos.size() * static_cast<size_t>(campaign.repetitions));
  for (auto& c : combos)
    for (int64_t r = 0; r < campaign.repetitions; ++r) {
      c.repetition = r;
      campaign.runs.push_back(c);
    }
  if (campaign.runs.empty()) fail(file, matrix, "every run is excluded: nothing to run");
  return campaign;
}

RunConfig parse_run_spec_or_throw(std::string_view text, const std::string& file) {
  YAML::Node root = load_yaml(text, file);
  if (!root.IsMap()) fail(file, root, "a run spec must be a mapping of run keys to values");
  RunConfig c;
  std::set<std::string> seen;
  bool has_model = false, has_dataset = false;
  for (auto it = root.begin(); it != root.end(); ++it) {
    const std::string key = scalar_text(it->first);
    if (!find_setter(key)) fail(file, it->first, "unknown key '" + key + "' (known: " + known_keys() + ")");
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
  std::map<std::string, std::optional<sim::SimBoard>> boards;
  for (size_t i = 0; i < c.runs.size(); ++i) {
    const RunConfig& r = c.runs[i];
    keys[i] = {r.cores, r.cpu_khz, r.gpu_hz, r.emc_hz};
    const std::string cls = i < run_classes.size() && !run_classes[i].empty() ? run_classes[i] : device_target_class(r.device);
    if (cls.empty() || cls == "host") continue;
    auto it = boards.find(cls);
    if (it == boards.end()) {
      auto b = sim::SimBoard::open(cls);
      it = boards.emplace(cls, b ? std::optional<sim::SimBoard>(std::move(b).value()) : std::nullopt).first;
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

Result<std::string> read_text_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return io_error(path + ": cannot open for reading");
  std::ostringstream ss;
  ss << in.rdbuf();
  if (in.bad()) return io_error(path + ": read error");
  return ss.str();
}

Result<Campaign> parse_campaign(std::string_view yaml_text, const std::string& file_name) {
  try {
    return parse_campaign_or_throw(yaml_text, file_name);
  } catch (const YamlError& e) {
    return invalid_argument(e.message);
  } catch (const YAML::Exception& e) {
    return invalid_argument(place(file_name, e.mark) + ": " + e.msg);
  }
}

Result<Campaign> load_campaign_file(const std::string& path) {
  JS_ASSIGN_OR_RETURN(std::string text, read_text_file(path));
  return parse_campaign(text, path);
}

Result<RunConfig> parse_run_spec(std::string_view yaml_text, const std::string& file_name) {
  try {
    return parse_run_spec_or_throw(yaml_text, file_name);
  } catch (const YamlError& e) {
    return invalid_argument(e.message);
  } catch (const YAML::Exception& e) {
    return invalid_argument(place(file_name, e.mark) + ": " + e.msg);
  }
}

Result<RunConfig> load_run_spec_file(const std::string& path) {
  JS_ASSIGN_OR_RETURN(std::string text, read_text_file(path));
  return parse_run_spec(text, path);
}

std::string DryRunCaps::to_string() const {
  std::string s;
  auto add = [&](int64_t v, const char* what) {
    if (v > 0) s += (s.empty() ? "" : ", ") + std::string("<= ") + std::to_string(v) + " " + what;
  };
  add(max_runs, "runs");
  add(max_epochs, "epochs");
  add(max_minibatches, "minibatches per epoch");
  return "dry run: " + s;
}

void apply_dry_run_caps(Campaign& campaign, const DryRunCaps& caps) {
  if (!caps.any()) return;
  auto& runs = campaign.runs;
  if (caps.max_runs > 0 && static_cast<int64_t>(runs.size()) > caps.max_runs) {
    std::vector<RunConfig> kept;
    const size_t n = runs.size(), k = static_cast<size_t>(caps.max_runs);
    for (size_t i = 0; i < k; ++i) kept.push_back(runs[k == 1 ? 0 : i * (n - 1) / (k - 1)]);
    runs = std::move(kept);
  }
  for (auto& r : runs) {
    if (caps.max_epochs > 0) r.epochs = std::min(r.epochs, caps.max_epochs);
    if (caps.max_minibatches > 0)
      r.max_minibatches = r.max_minibatches > 0 ? std::min(r.max_minibatches, caps.max_minibatches) : caps.max_minibatches;
  }
  campaign.description += (campaign.description.empty() ? "" : " ") + std::string("[") + caps.to_string() + "]";
}

Result<DryRunCaps> parse_dry_run_caps(std::string_view query) {
  DryRunCaps caps;
  while (!query.empty()) {
    const size_t amp = query.find('&');
    const std::string_view item = query.substr(0, amp);
    query = amp == std::string_view::npos ? std::string_view() : query.substr(amp + 1);
    if (item.empty()) continue;
    const size_t eq = item.find('=');
    const std::string key(item.substr(0, eq));
    const std::string value(eq == std::string_view::npos ? std::string_view() : item.substr(eq + 1));
    int64_t* slot = key == "max_runs" ? &caps.max_runs : key == "max_epochs" ? &caps.max_epochs
                  : key == "max_minibatches" ? &caps.max_minibatches : nullptr;
    if (!slot) return invalid_argument("unknown parameter '" + key + "' (known: max_runs, max_epochs, max_minibatches)");
    int64_t v = 0;
    auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), v);
    if (ec != std::errc() || end != value.data() + value.size() || v < 1 || v > kMaxRunsPerCampaign)
      return invalid_argument("parameter '" + key + "': expected a positive integer, got '" + value + "'");
    *slot = v;
  }
  return caps;
}

}  // namespace jetsweep
