#include "analysis/corpus.hpp"

#include <algorithm>
#include <cstdio>
#include <set>

namespace jetsweep::analysis {

namespace {

std::string fmt_mhz(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.6g", v);
  return buf;
}

std::string join(const std::vector<std::string>& v) {
  std::string s;
  for (const auto& e : v) s += (s.empty() ? "" : ", ") + e;
  return s;
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
  return std::to_string(cores) + "c/" + fmt_mhz(cpu_mhz) + "/" + fmt_mhz(gpu_mhz) + "/" + fmt_mhz(emc_mhz);
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
                            join({devices.begin(), devices.end()}) + "); name one as " + ref.workload + "@BOARD");
  }
  WorkloadData out;
  out.device = *devices.begin();
  out.workload = ref.workload;
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
                        join({named.begin(), named.end()}));
  for (const auto& [mode, recs] : by_mode) {
    ModeRecord m;
    m.device = out.device;
    m.workload = out.workload;
    m.mode = mode;
    m.mode_name = recs.front()->mode_name;
    m.where = recs.front()->where;
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
    out.modes.push_back(std::move(m));
  }
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
