#include "common/campaign_yaml.hpp"

#include <algorithm>
#include <cstdio>
#include <functional>
#include <utility>

#include "common/board_classes.hpp"
#include "common/perf/calibration.hpp"
#include "common/text.hpp"

namespace jetsweep::campaign_yaml {

std::string place(const std::string& file, const YAML::Mark& mark) {
  if (mark.line < 0) return file;
  return file + ":" + std::to_string(mark.line + 1) + ":" + std::to_string(mark.column + 1);
}

namespace {
// `text` with every byte that is not well-formed UTF-8 written as \xNN. Errors travel in JSON error replies,
// which must be UTF-8, but yaml-cpp quotes single bytes of the input ("unknown escape character: " and the
// first byte of a multi-byte character) and turns a NUL in a scalar into a lone 0xA0 byte, which the
// messages quote (found by fuzz_api and fuzz_campaign: fuzz/regressions/{api,campaign}/).
std::string utf8_message(std::string_view text) {
  std::string out;
  while (auto bad = invalid_utf8_at(text)) {
    char hex[8];
    std::snprintf(hex, sizeof hex, "\\x%02X", static_cast<unsigned char>(text[*bad]));
    out.append(text.substr(0, *bad)).append(hex);
    text.remove_prefix(*bad + 1);
  }
  return out.append(text);
}
}  // namespace

void fail(const std::string& file, const YAML::Node& node, const std::string& what) {
  throw YamlError{utf8_message(place(file, node.Mark()) + ": " + what)};
}

void fail_limit(const std::string& file, const YAML::Node& node, const std::string& what, const char* limit_name,
                int64_t limit) {
  fail(file, node, what + ", more than the limit " + limit_name + " = " + std::to_string(limit) +
                       " (docs/CAMPAIGNS.md, \"Limits\")");
}

std::string scalar_text(const YAML::Node& n) { return n.IsScalar() ? n.Scalar() : std::string(); }

bool given(const YAML::Node& n) { return n.IsDefined() && !n.IsNull(); }

namespace {

const char* node_kind(const YAML::Node& n) {
  if (n.IsSequence()) return "a list";
  if (n.IsMap()) return "a mapping";
  if (n.IsNull()) return "nothing";
  return "a scalar";
}

// A scalar read by `parse` (common/text.hpp); `what` names the expected kind in errors ("an integer").
template <class Parse>
auto to_number(const std::string& file, const std::string& key, const YAML::Node& n, const char* what, Parse parse) {
  if (!n.IsScalar()) fail(file, n, "'" + key + "' expects " + what + ", got " + node_kind(n));
  const auto v = parse(n.Scalar());
  if (!v) fail(file, n, "'" + key + "' expects " + what + ", got '" + n.Scalar() + "'");
  return *v;
}

}  // namespace

int64_t to_int(const std::string& file, const std::string& key, const YAML::Node& n) {
  return to_number(file, key, n, "an integer", [](const std::string& s) { return parse_int(s); });
}

double to_double(const std::string& file, const std::string& key, const YAML::Node& n) {
  return to_number(file, key, n, "a number", [](const std::string& s) { return parse_double(s); });
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
  return checked_text(file, key, n, false);
}

std::string checked_text(const std::string& file, const std::string& key, const YAML::Node& n,
                         bool allow_line_breaks) {
  const std::string& s = n.Scalar();
  // yaml-cpp writes the escapes \_ and \N as lone bytes 0xA0 and 0x85 (and a NUL it meets as 0xA0), which are not
  // UTF-8; such a string would make the controller's JSON replies invalid and PostgreSQL refuse the row.
  if (const auto bad = invalid_utf8_at(s)) {
    char hex[8];
    std::snprintf(hex, sizeof hex, "0x%02X", static_cast<unsigned char>(s[*bad]));
    fail(file, n, "'" + key + "' is not UTF-8 text after YAML escapes (byte " + hex + " at offset " +
                      std::to_string(*bad) + "; write the character itself, not \\_ or \\N)");
  }
  if (const auto bad = control_char_at(s, allow_line_breaks)) {
    const auto c = static_cast<unsigned char>(s[*bad]);
    const unsigned code = c == 0xC2 ? static_cast<unsigned char>(s[*bad + 1]) : c;
    char hex[12];
    std::snprintf(hex, sizeof hex, "U+%04X", code);
    fail(file, n, "'" + key + "' holds the control character " + hex + " at offset " + std::to_string(*bad) +
                      (allow_line_breaks ? "" : " (names and values are one line of printable text)"));
  }
  return s;
}

namespace {

// power_mode: a named nvpmodel mode ("MAXN", "15W", or its id) or {cores, cpu_khz, gpu_hz, emc_hz}.
void set_power_mode(RunConfig& c, const std::string& file, const YAML::Node& n) {
  c.power_mode = PowerModeRequest{};
  if (n.IsScalar()) {
    c.power_mode.name = to_string_value(file, "power_mode", n);
    return;
  }
  if (!n.IsMap()) fail(file, n, "'power_mode' expects a mode name or a mapping {cores, cpu_khz, gpu_hz, emc_hz}");
  for (auto it = n.begin(); it != n.end(); ++it) {
    const std::string key = scalar_text(it->first);
    PowerModeRequest& pm = c.power_mode;
    int64_t* field = key == "cores" ? &pm.cores : key == "cpu_khz" ? &pm.cpu_khz : key == "gpu_hz" ? &pm.gpu_hz
                   : key == "emc_hz" ? &pm.emc_hz : nullptr;
    if (!field) fail(file, it->first, "unknown power_mode key '" + key + "' (known: cores, cpu_khz, gpu_hz, emc_hz)");
    *field = to_int(file, "power_mode." + key, it->second);
    if (*field <= 0) fail(file, it->second, "'power_mode." + key + "' must be positive");
  }
}

std::string join_classes() { return join(board_classes()); }

}  // namespace

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
void check_power_mode(const std::string& file, const YAML::Node& where, const RunConfig& c, const FleetTables& fleet) {
  if (const std::string problem = fleet.settings_problem(c); !problem.empty()) fail(file, where, problem);
  const std::string cls = device_target_class(c.device);
  if (cls.empty() || cls == "host") return;
  if (!c.power_mode.name.empty() && !c.base_mode.empty())
    fail(file, where, "base_mode '" + c.base_mode + "' with power mode '" + c.power_mode.name +
                          "': base_mode applies to runs without a named power mode (a named mode is its own base)");
  auto cal = perf::class_calibration(cls);
  if (!cal) return;
  const bool base = c.power_mode.name.empty();
  const std::string& name = c.gating_mode();
  if (name.empty()) return;
  std::string names;
  for (const auto& m : cal->modes) {
    if (m.name == name || std::to_string(m.id) == name) return;
    names += (names.empty() ? "" : ", ") + std::to_string(m.id) + "=" + m.name;
  }
  fail(file, where, std::string(base ? "base_mode" : "power mode") + " '" + name + "' is not defined on '" + cls +
                        "' (its nvpmodel modes: " + names + ")" +
                        (base ? "" : "; give the mode's settings instead ({cores, cpu_khz, gpu_hz, emc_hz})"));
}

namespace {

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
      {"base_mode", [](RunConfig& c, auto& f, auto& k, auto& n) { c.base_mode = to_string_value(f, k, n); }},
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

}  // namespace

bool is_run_key(const std::string& key) { return find_setter(key) != nullptr; }

std::string known_keys() {
  return join(setters(), ", ", [](const auto& entry) { return entry.first; });
}

void apply(RunConfig& c, const std::string& file, const std::string& key, const YAML::Node& value) {
  (*find_setter(key))(c, file, key, value);
}

// Applies one value and re-checks the ranges of the key it set, reporting at the value's mark.
void apply_checked(RunConfig& c, const std::string& file, const std::string& key, const YAML::Node& value) {
  apply(c, file, key, value);
  for (const auto& p : check_ranges(c))
    if (p.key == key) fail(file, value, "'" + key + "': " + p.what);
}

YAML::Node load_yaml(std::string_view text, const std::string& file) {
  try {
    return YAML::Load(std::string(text));
  } catch (const YAML::ParserException& e) {
    throw YamlError{utf8_message(place(file, e.mark) + ": YAML syntax error: " + e.msg)};
  } catch (const YAML::Exception& e) {
    throw YamlError{utf8_message(file + ": YAML error: " + e.what())};
  }
}

}  // namespace jetsweep::campaign_yaml
