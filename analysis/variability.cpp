#include "analysis/variability.hpp"

#include <algorithm>
#include <set>
#include <tuple>

#include "analysis/stats.hpp"

namespace jetsweep::analysis {

Distribution describe(const std::vector<double>& v) {
  Distribution d;
  d.n = static_cast<int>(v.size());
  if (v.empty()) return d;
  d.median = median(v);
  d.max_deviation_pct = max_deviation_from_median_pct(v);
  d.cv_pct = coefficient_of_variation_pct(v);
  d.min = *std::min_element(v.begin(), v.end());
  d.max = *std::max_element(v.begin(), v.end());
  return d;
}

const std::vector<std::string>& software_keys() {
  static const std::vector<std::string> keys = {"kernel", "torch_version", "compiler", "git_sha", "l4t", "jetpack"};
  return keys;
}

VariabilityReport compute_variability(const Corpus& corpus, const std::string& workload) {
  VariabilityReport rep;
  rep.time_unit = corpus.epoch_times ? "s per epoch" : "ms per minibatch";
  rep.energy_unit = corpus.epoch_times ? "J per epoch" : "mJ per minibatch";
  const bool mode_pooled =
      std::find(corpus.pooled_over.begin(), corpus.pooled_over.end(), "mode") != corpus.pooled_over.end();
  // Group key: board class, workload, simulated, and the full configuration.
  using Key = std::tuple<std::string, std::string, bool, AxisMap>;
  std::map<Key, std::map<std::string, InstanceVariability>> groups;
  struct InstanceInfo {
    std::map<std::string, std::string> software;
    bool simulated = false;
  };
  std::map<std::string, std::map<std::string, InstanceInfo>> software;
  // Per run; rows without a run id (a CSV without the column) per instance and fingerprint.
  std::map<std::tuple<int64_t, std::string, std::string>, DataSeen> data;
  for (const auto& e : corpus.epochs) {
    if (!workload.empty() && e.workload != workload) continue;
    const std::string inst = e.instance.empty() ? "(unnamed)" : e.instance;
    data.emplace(std::make_tuple(e.run_id, e.run_id == 0 ? inst : std::string(), e.run_id == 0 ? e.dataset_fingerprint : ""),
                 DataSeen{e.dataset.empty() ? e.workload : e.dataset, e.dataset_fingerprint, inst});
    rep.data_fingerprints = rep.data_fingerprints || !e.dataset_fingerprint.empty();
    auto& info = software[e.device][inst];
    if (!e.software.empty()) info.software = e.software;
    info.simulated = info.simulated || e.simulated;
    if (e.epoch == 0) {
      ++rep.warmup_epochs_excluded;
      continue;
    }
    AxisMap config = e.axes;
    if (!mode_pooled && !config.count("mode")) config["mode"] = mode_axis_value(e.mode, e.mode_name);
    auto& iv = groups[{e.device, e.workload, e.simulated, config}][inst];
    iv.instance = inst;
    iv.simulated = e.simulated;
    iv.time_values.push_back(e.time);
    if (e.energy) iv.energy_values.push_back(*e.energy);
    if (!e.software.empty()) iv.software = e.software;
  }
  std::vector<DataSeen> seen;
  for (auto& [run, s] : data) seen.push_back(std::move(s));
  rep.data_warnings = dataset_fingerprint_warnings(seen);
  for (auto& [key, insts] : groups) {
    VariabilityGroup g;
    std::tie(g.device, g.workload, g.simulated, g.config) = key;
    auto mode = g.config.find("mode");
    g.mode = mode == g.config.end() ? "(pooled)" : mode->second;
    std::vector<double> all_t, all_e, med_t, med_e;
    bool energy_everywhere = true;
    for (auto& [name, iv] : insts) {
      iv.time = describe(iv.time_values);
      all_t.insert(all_t.end(), iv.time_values.begin(), iv.time_values.end());
      med_t.push_back(iv.time.median);
      if (!iv.energy_values.empty()) {
        iv.energy = describe(iv.energy_values);
        all_e.insert(all_e.end(), iv.energy_values.begin(), iv.energy_values.end());
        med_e.push_back(iv.energy->median);
      } else {
        energy_everywhere = false;
      }
      g.instances.push_back(iv);
    }
    g.time = describe(all_t);
    g.instance_median_spread_pct = max_deviation_from_median_pct(med_t);
    if (!all_e.empty()) g.energy = describe(all_e);
    if (!med_e.empty() && energy_everywhere) g.instance_energy_spread_pct = max_deviation_from_median_pct(med_e);
    rep.groups.push_back(std::move(g));
  }
  // Software: only the real software facts, only between real instances (a simulated agent's kernel and
  // toolchain are its host's, not a board's).
  for (auto& [device, insts] : software) {
    ClassSoftware c;
    c.device = device;
    std::vector<const std::map<std::string, std::string>*> real;
    for (const auto& [name, info] : insts) {
      c.instances[name] = info.software;
      if (info.simulated) c.simulated_instances.push_back(name);
      else real.push_back(&info.software);
    }
    c.compared_instances = static_cast<int>(real.size());
    for (const auto& k : software_keys()) {
      std::set<std::string> values;
      bool any = false;
      for (const auto* sw : real) {
        auto it = sw->find(k);
        if (it != sw->end()) any = true;
        values.insert(it == sw->end() ? std::string("(unknown)") : it->second);
      }
      if (any && values.size() > 1) c.differing_keys.push_back(k);
    }
    c.differs = !c.differing_keys.empty();
    rep.classes.push_back(std::move(c));
  }
  return rep;
}

}  // namespace jetsweep::analysis
