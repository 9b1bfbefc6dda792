#include "common/campaign.hpp"

#include <yaml-cpp/yaml.h>

#include <fstream>
#include <functional>
#include <map>
#include <set>
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

// One settable key of RunConfig: how to assign it from a YAML scalar.
using Setter = std::function<void(RunConfig&, const std::string& file, const std::string& key, const YAML::Node&)>;

const std::vector<std::pair<std::string, Setter>>& setters() {
  static const std::vector<std::pair<std::string, Setter>> kSetters = {
      {"device", [](RunConfig& c, auto& f, auto& k, auto& n) { c.device = to_string_value(f, k, n); }},
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

Campaign parse_campaign_or_throw(std::string_view text, const std::string& file) {
  YAML::Node root = load_yaml(text, file);
  if (!root.IsMap()) fail(file, root, "a campaign file must be a mapping with 'campaign' and 'matrix' keys");
  Campaign campaign;
  YAML::Node matrix;
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
    } else if (key == "matrix") {
      matrix = it->second;
    } else {
      fail(file, it->first, "unknown top-level key '" + key + "' (known: campaign, description, repetitions, priority, matrix)");
    }
  }
  if (campaign.name.empty()) fail(file, root, "missing 'campaign' (the campaign's name)");
  if (!matrix) fail(file, root, "missing 'matrix'");
  if (!matrix.IsMap()) fail(file, matrix, "'matrix' must be a mapping of run keys to a value or a list of values");

  // Each axis: key plus its values (a scalar is a one-value axis).
  struct Axis {
    std::string key;
    std::vector<YAML::Node> values;
  };
  std::vector<Axis> axes;
  std::set<std::string> seen;
  bool has_model = false, has_dataset = false;
  RunConfig base;
  for (auto it = matrix.begin(); it != matrix.end(); ++it) {
    const std::string key = scalar_text(it->first);
    if (!find_setter(key)) {
      std::string hint = key == "repetition" ? " (use the top-level 'repetitions')" : "";
      fail(file, it->first, "unknown key '" + key + "'" + hint + " (known: " + known_keys() + ")");
    }
    if (!seen.insert(key).second) fail(file, it->first, "duplicate key '" + key + "'");
    has_model |= key == "model";
    has_dataset |= key == "dataset";
    Axis axis{key, {}};
    if (it->second.IsSequence()) {
      if (it->second.size() == 0) fail(file, it->second, "'" + key + "' has an empty list: nothing to run");
      std::set<std::string> distinct;
      for (const auto& v : it->second) {
        RunConfig probe = base;
        apply_checked(probe, file, key, v);  // type and range check at the element's own mark
        const std::string text = v.IsScalar() ? v.Scalar() : YAML::Dump(v);
        if (!distinct.insert(text).second) fail(file, v, "'" + key + "' lists '" + text + "' twice");
        axis.values.push_back(v);
      }
      campaign.axes.push_back(key);
    } else {
      RunConfig probe = base;
      apply_checked(probe, file, key, it->second);
      axis.values.push_back(it->second);
    }
    axes.push_back(std::move(axis));
  }
  if (!has_model) fail(file, matrix, "matrix is missing 'model'");
  if (!has_dataset) fail(file, matrix, "matrix is missing 'dataset'");

  int64_t total = campaign.repetitions;
  for (const auto& a : axes) {
    total *= static_cast<int64_t>(a.values.size());
    if (total > kMaxRunsPerCampaign)
      fail(file, matrix, "the matrix expands to more than " + std::to_string(kMaxRunsPerCampaign) + " runs");
  }
  campaign.runs.reserve(static_cast<size_t>(total));
  // Odometer over the axes: the last key varies fastest; repetitions innermost.
  std::vector<size_t> index(axes.size(), 0);
  while (true) {
    RunConfig c;
    for (size_t i = 0; i < axes.size(); ++i) apply_checked(c, file, axes[i].key, axes[i].values[index[i]]);
    if (c.data.empty()) c.data = default_data_path(c.dataset);
    for (int64_t r = 0; r < campaign.repetitions; ++r) {
      c.repetition = r;
      campaign.runs.push_back(c);
    }
    size_t i = axes.size();
    while (i > 0) {
      --i;
      if (++index[i] < axes[i].values.size()) break;
      index[i] = 0;
      if (i == 0) return campaign;
    }
    if (axes.empty()) return campaign;
  }
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

}  // namespace jetsweep
