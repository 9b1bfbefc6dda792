#include "analysis/corpus.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <set>

#include "common/text.hpp"

namespace jetsweep::analysis {

EpochSample epoch_sample_of(const ModeRecord& r) {
  EpochSample e;
  e.device = r.device;
  e.workload = r.workload;
  e.instance = r.instance;
  e.mode_name = r.mode_name;
  e.mode = r.mode;
  e.axes = r.axes;
  e.simulated = r.simulated;
  return e;
}

namespace {

std::string fmt_mhz(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.6g", v);
  return buf;
}

// Mean of the optional values that are present.
std::optional<double> mean_present(const std::vector<std::optional<double>>& v) {
  double sum = 0;
  int n = 0;
  for (const auto& x : v)
    if (x) {
      sum += *x;
      ++n;
    }
  if (n == 0) return std::nullopt;
  return sum / n;
}

}  // namespace

std::string ModeKey::label() const {
  auto f = [](double v) { return v > 0 ? fmt_mhz(v) : std::string("-"); };
  return (cores > 0 ? std::to_string(cores) : std::string("-")) + "c/" + f(cpu_mhz) + "/" + f(gpu_mhz) + "/" + f(emc_mhz);
}

// ---------------------------------------------------------------------------------------------
// Configuration axes

namespace {

const std::set<std::string> kBoolAxes = {"pin_clocks", "drop_caches", "simulated"};
const std::set<std::string> kIntAxes = {"batch_size", "workers", "prefetch", "threads", "seed", "max_minibatches"};

std::optional<double> parse_number(const std::string& s) {
  if (s.empty()) return std::nullopt;
  char* end = nullptr;
  const double v = std::strtod(s.c_str(), &end);
  if (end != s.c_str() + s.size() || !std::isfinite(v)) return std::nullopt;
  return v;
}

std::string lower(std::string s) {
  for (auto& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

// The non-empty trimmed items of a comma-separated list.
std::vector<std::string> split_commas(const std::string& s) {
  std::vector<std::string> out;
  for (const auto& item : split(s, ','))
    if (std::string t = trim(item); !t.empty()) out.push_back(std::move(t));
  return out;
}

std::string axes_list() { return join(config_axes()); }

// Whether a --where value matches a row's value of the axis (text, or numerically equal).
bool value_matches(const std::string& want, const std::string& have) {
  if (want == have) return true;
  auto a = parse_number(want), b = parse_number(have);
  return a && b && *a == *b;
}

template <class Row>
bool row_matches(const Row& r, const std::vector<std::pair<std::string, std::string>>& where) {
  for (const auto& [axis, value] : where) {
    if (axis == "simulated") {
      if ((r.simulated ? "true" : "false") != value) return false;
      continue;
    }
    auto it = r.axes.find(axis);
    if (axis == "mode") {
      const std::string have = it != r.axes.end() ? it->second : mode_axis_value(r.mode, r.mode_name);
      if (!value_matches(value, have) && value != r.mode_name) return false;
      continue;
    }
    if (it == r.axes.end() || !value_matches(value, it->second)) return false;
  }
  return true;
}

}  // namespace

const std::vector<std::string>& config_axes() {
  static const std::vector<std::string> axes = {"mode",     "pin_clocks", "fan",  "batch_size", "workers",
                                                "prefetch", "threads",    "seed", "storage",    "max_minibatches",
                                                "drop_caches", "compute", "timing", "gpu_gating"};
  return axes;
}

bool is_config_axis(const std::string& name) {
  const auto& a = config_axes();
  return std::find(a.begin(), a.end(), name) != a.end();
}

std::string mode_axis_value(const ModeKey& mode, const std::string& mode_name) {
  if (mode.explicit_settings()) return mode.label();
  if (!mode_name.empty()) return mode_name;
  if (mode.any_setting()) return mode.label();
  return "default";
}

std::string canonical_axis_value(const std::string& axis, const std::string& value) {
  const std::string v = trim(value);
  if (kBoolAxes.count(axis)) {
    const std::string l = lower(v);
    if (l == "t" || l == "true" || l == "1" || l == "yes" || l == "on") return "true";
    if (l == "f" || l == "false" || l == "0" || l == "no" || l == "off") return "false";
    return v;
  }
  if (kIntAxes.count(axis)) {
    if (auto d = parse_number(v); d && *d == std::floor(*d) && std::fabs(*d) < 9e15) {
      char buf[32];
      std::snprintf(buf, sizeof buf, "%.0f", *d);
      return buf;
    }
  }
  return v;
}

AxisMap without_mode(const AxisMap& axes) {
  AxisMap out = axes;
  out.erase("mode");
  return out;
}

std::string axis_token(const std::string& axis, const std::string& value) {
  if (axis == "mode") return value;
  if (axis == "pin_clocks") return value == "true" ? "pin" : value == "false" ? "unpinned" : "pin=" + value;
  if (axis == "fan") return "fan-" + value;
  if (axis == "batch_size") return "bs" + value;
  if (axis == "workers") return "w" + value;
  if (axis == "prefetch") return "pf" + value;
  if (axis == "threads") return "thr" + value;
  if (axis == "seed") return "seed" + value;
  if (axis == "storage") return value.find('/') != std::string::npos ? "data=" + value : "@" + value;
  if (axis == "max_minibatches") return "maxmb" + value;
  if (axis == "compute") return "on-" + value;
  if (axis == "timing") return value + "-timing";
  if (axis == "gpu_gating") return value;   // "tpc_pg=240", "tpc_pg=240 fbp_pg=2"
  if (axis == "drop_caches") return value == "true" ? "drop-caches" : value == "false" ? "keep-caches" : "drop_caches=" + value;
  return axis + "=" + value;
}

std::string config_label(const AxisMap& axes, const std::set<std::string>* show) {
  std::string s;
  auto add = [&](const std::string& axis, const std::string& value) {
    s += (s.empty() ? "" : " ") + axis_token(axis, value);
  };
  for (const auto& axis : config_axes()) {
    auto it = axes.find(axis);
    if (it == axes.end()) continue;
    const std::string& v = it->second;
    const bool salient = (axis == "pin_clocks" && v == "true") || (axis == "drop_caches" && v == "true") ||
                         (axis == "fan" && !v.empty() && v != "auto");
    if (!show || show->count(axis) || salient) add(axis, v);
  }
  for (const auto& [axis, v] : axes)
    if (!is_config_axis(axis) && (!show || show->count(axis))) add(axis, v);
  return s;
}

std::string config_text(const AxisMap& axes) {
  std::string s;
  for (const auto& axis : config_axes())
    if (auto it = axes.find(axis); it != axes.end()) s += (s.empty() ? "" : ", ") + axis + "=" + it->second;
  for (const auto& [axis, v] : axes)
    if (!is_config_axis(axis)) s += (s.empty() ? "" : ", ") + axis + "=" + v;
  return s.empty() ? "(no axes)" : s;
}

Result<std::vector<std::pair<std::string, std::string>>> parse_where(const std::string& text) {
  std::vector<std::pair<std::string, std::string>> out;
  for (const auto& item : split_commas(text)) {
    const auto eq = item.find('=');
    if (eq == std::string::npos || eq == 0)
      return invalid_argument("--where: expected AXIS=VALUE[,AXIS=VALUE..], got '" + item + "'");
    const std::string axis = trim(item.substr(0, eq)), value = trim(item.substr(eq + 1));
    if (!is_config_axis(axis) && axis != "simulated")
      return invalid_argument("--where: unknown axis '" + axis + "' (axes: " + axes_list() + ", simulated)");
    for (const auto& [a, v] : out)
      if (a == axis) return invalid_argument("--where: axis '" + axis + "' given twice");
    out.emplace_back(axis, canonical_axis_value(axis, value));
  }
  if (out.empty()) return invalid_argument("--where: expected AXIS=VALUE[,AXIS=VALUE..], got '" + text + "'");
  return out;
}

Result<std::vector<std::string>> parse_pool_over(const std::string& text) {
  std::vector<std::string> out;
  for (const auto& axis : split_commas(text)) {
    if (!is_config_axis(axis)) return invalid_argument("--pool-over: unknown axis '" + axis + "' (axes: " + axes_list() + ")");
    if (std::find(out.begin(), out.end(), axis) == out.end()) out.push_back(axis);
  }
  if (out.empty()) return invalid_argument("--pool-over: expected AXIS[,AXIS..] (axes: " + axes_list() + ")");
  return out;
}

Status select_configurations(Corpus& corpus, const std::vector<std::pair<std::string, std::string>>& where,
                             const std::vector<std::string>& pool_over) {
  if (!where.empty()) {
    // Values seen per --where axis, for the message when nothing matches.
    std::map<std::string, std::set<std::string>> seen;
    for (const auto& e : corpus.epochs)
      for (const auto& [axis, v] : where) {
        if (axis == "simulated") seen[axis].insert(e.simulated ? "true" : "false");
        else if (auto it = e.axes.find(axis); it != e.axes.end()) seen[axis].insert(it->second);
      }
    std::erase_if(corpus.rows, [&](const ModeRecord& r) { return !row_matches(r, where); });
    std::erase_if(corpus.epochs, [&](const EpochSample& e) { return !row_matches(e, where); });
    if (corpus.rows.empty() && corpus.epochs.empty()) {
      std::string msg = "--where: no rows of " + corpus.source + " match";
      for (const auto& [axis, v] : where) {
        msg += " " + axis + "=" + v;
        const auto& s = seen[axis];
        msg += s.empty() ? std::string(" (the data has no '" + axis + "' column)")
                         : " (values: " + join(std::vector<std::string>(s.begin(), s.end())) + ")";
      }
      return invalid_argument(msg);
    }
    corpus.selected = where;
  }
  if (!pool_over.empty()) {
    for (auto& r : corpus.rows)
      for (const auto& a : pool_over) r.axes.erase(a);
    for (auto& e : corpus.epochs)
      for (const auto& a : pool_over) e.axes.erase(a);
    corpus.pooled_over = pool_over;
  }
  return Status::ok();
}

std::set<std::string> varying_axes(const Corpus& corpus) {
  std::map<std::string, std::set<std::string>> values;
  auto add = [&](const AxisMap& axes) {
    for (const auto& axis : config_axes()) {
      auto it = axes.find(axis);
      values[axis].insert(it == axes.end() ? std::string(1, '\x01') : it->second);
    }
  };
  for (const auto& r : corpus.rows) add(r.axes);
  for (const auto& e : corpus.epochs) add(e.axes);
  std::set<std::string> out;
  for (const auto& [axis, v] : values)
    if (v.size() > 1) out.insert(axis);
  return out;
}

WorkloadRef parse_workload_ref(const std::string& text) {
  WorkloadRef r;
  auto at = text.rfind('@');
  if (at == std::string::npos) {
    r.workload = text;
  } else {
    r.workload = text.substr(0, at);
    r.device = text.substr(at + 1);
  }
  return r;
}

const ModeRecord* WorkloadData::find(const ModeKey& m) const {
  auto it = std::lower_bound(modes.begin(), modes.end(), m,
                             [](const ModeRecord& r, const ModeKey& k) { return r.mode < k; });
  if (it == modes.end() || it->mode != m) return nullptr;
  return &*it;
}

bool WorkloadData::has_power() const {
  return !modes.empty() && std::all_of(modes.begin(), modes.end(), [](const ModeRecord& r) { return r.power_mw.has_value(); });
}

std::vector<std::string> devices_of(const Corpus& corpus) {
  std::set<std::string> s;
  for (const auto& r : corpus.rows) s.insert(r.device);
  return {s.begin(), s.end()};
}

std::vector<std::string> workloads_of(const Corpus& corpus, const std::string& device) {
  std::set<std::string> s;
  for (const auto& r : corpus.rows)
    if (device.empty() || r.device == device) s.insert(r.workload);
  return {s.begin(), s.end()};
}

namespace {

// One mode of a workload from its rows (instances averaged; powers, epoch times and energies over those present).
ModeRecord pooled_mode(const WorkloadData& w, const ModeKey& mode, const std::vector<const ModeRecord*>& recs) {
  ModeRecord m;
  m.device = w.device;
  m.workload = w.workload;
  m.mode = mode;
  m.mode_name = recs.front()->mode_name;
  m.where = recs.front()->where;
  m.axes = recs.front()->axes;
  m.simulated = recs.front()->simulated;
  double sum = 0;
  std::vector<std::optional<double>> power, epoch_s, energy;
  for (const auto* r : recs) {
    sum += r->minibatch_ms;
    power.push_back(r->power_mw);
    epoch_s.push_back(r->epoch_s);
    energy.push_back(r->energy_j);
    m.epoch_minibatch_ms.insert(m.epoch_minibatch_ms.end(), r->epoch_minibatch_ms.begin(), r->epoch_minibatch_ms.end());
    m.runs += r->runs;
    m.epochs += r->epochs;
  }
  m.minibatch_ms = sum / static_cast<double>(recs.size());
  m.power_mw = mean_present(power);
  m.epoch_s = mean_present(epoch_s);
  m.energy_j = mean_present(energy);
  if (recs.size() > 1) m.instance.clear();
  else m.instance = recs.front()->instance;
  return m;
}

}  // namespace

Result<WorkloadData> select_workload(const Corpus& corpus, const WorkloadRef& ref, const std::string& flag) {
  if (ref.workload.empty()) return invalid_argument(flag + ": a workload is required");
  std::set<std::string> devices;
  for (const auto& r : corpus.rows)
    if (r.workload == ref.workload && (ref.device.empty() || r.device == ref.device)) devices.insert(r.device);
  if (devices.empty()) {
    return invalid_argument(flag + ": workload '" + ref.to_string() + "' not found in " + corpus.source +
                            " (workloads: " + join(workloads_of(corpus, ref.device)) + ")");
  }
  if (devices.size() > 1) {
    return invalid_argument(flag + ": workload '" + ref.workload + "' was profiled on several boards (" +
                            join(devices) + "); name one as " + ref.workload + "@BOARD");
  }
  WorkloadData out;
  out.device = *devices.begin();
  out.workload = ref.workload;
  // One configuration besides the power mode: predictors, fronts and optima work across modes only.
  std::map<std::pair<bool, AxisMap>, size_t> configs;
  for (const auto& r : corpus.rows)
    if (r.workload == ref.workload && r.device == out.device) ++configs[{r.simulated, without_mode(r.axes)}];
  if (configs.size() > 1) {
    std::set<std::string> differ;  // axes that differ between the configurations
    std::set<bool> sims;
    std::map<std::string, std::set<std::string>> values;
    for (const auto& [c, n] : configs) {
      sims.insert(c.first);
      for (const auto& [axis, v] : c.second) values[axis];
    }
    for (auto& [axis, vs] : values)
      for (const auto& [c, n] : configs) {
        auto it = c.second.find(axis);
        vs.insert(it == c.second.end() ? std::string(1, '\x01') : it->second);
      }
    for (const auto& [axis, vs] : values)
      if (vs.size() > 1) differ.insert(axis);
    const bool sim_differs = sims.size() > 1;
    std::vector<std::string> labels;
    for (const auto& [c, n] : configs) {
      std::string l = config_label(c.second, &differ);
      if (sim_differs) l += c.first ? std::string(l.empty() ? "" : " ") + "(simulated)" : std::string(l.empty() ? "" : " ") + "(real)";
      labels.push_back((l.empty() ? std::string("(no axes)") : l) + " [" + std::to_string(n) + " mode profile(s)]");
    }
    const auto& first = configs.begin()->first;
    std::string where_example, pool;
    for (const auto& axis : config_axes()) {
      if (!differ.count(axis)) continue;
      if (auto it = first.second.find(axis); it != first.second.end())
        where_example += (where_example.empty() ? "" : ",") + axis + "=" + it->second;
      pool += (pool.empty() ? "" : ",") + axis;
    }
    if (sim_differs) where_example += std::string(where_example.empty() ? "" : ",") + "simulated=" + (first.first ? "true" : "false");
    std::string msg = flag + ": workload '" + ref.workload + "' on " + out.device + " was measured in " +
                      std::to_string(configs.size()) + " configurations besides the power mode (" + join(labels) +
                      "); rows of unlike configurations are never pooled: choose one with --where " + where_example;
    if (!pool.empty()) msg += ", or pool them explicitly with --pool-over " + pool;
    return invalid_argument(msg);
  }
  if (!configs.empty()) {
    out.simulated = configs.begin()->first.first;
    out.config = configs.begin()->first.second;
  }
  std::map<ModeKey, std::vector<const ModeRecord*>> by_mode;
  std::set<std::string> named;
  for (const auto& r : corpus.rows) {
    if (r.workload != ref.workload || r.device != out.device) continue;
    if (!r.mode.explicit_settings()) {
      named.insert(r.mode_name.empty() ? "(unset)" : r.mode_name);
      continue;
    }
    by_mode[r.mode].push_back(&r);
  }
  if (!named.empty())
    out.notes.push_back("skipped modes without explicit settings (cores and frequencies): " +
                        join(named));
  for (const auto& [mode, recs] : by_mode) out.modes.push_back(pooled_mode(out, mode, recs));
  if (out.modes.empty())
    return invalid_argument(flag + ": workload '" + ref.to_string() + "' has no mode with explicit settings");
  return out;
}

std::vector<ModeKey> mode_grid(const Corpus& corpus, const std::string& device) {
  std::set<int> cores;
  std::set<double> cpu, gpu, emc;
  for (const auto& r : corpus.rows) {
    if (r.device != device || !r.mode.explicit_settings()) continue;
    cores.insert(r.mode.cores);
    cpu.insert(r.mode.cpu_mhz);
    gpu.insert(r.mode.gpu_mhz);
    emc.insert(r.mode.emc_mhz);
  }
  std::vector<ModeKey> out;
  out.reserve(cores.size() * cpu.size() * gpu.size() * emc.size());
  for (int c : cores)
    for (double f : cpu)
      for (double g : gpu)
        for (double e : emc) out.push_back({c, f, g, e});
  return out;  // sorted: ModeKey orders by cores, cpu, gpu, emc
}

}  // namespace jetsweep::analysis
