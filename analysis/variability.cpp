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

VariabilityReport compute_variability(const Corpus& corpus, const std::string& workload) {
  VariabilityReport rep;
  rep.time_unit = corpus.epoch_times ? "s per epoch" : "ms per minibatch";
  rep.energy_unit = corpus.epoch_times ? "J per epoch" : "mJ per minibatch";
  using Key = std::tuple<std::string, std::string, std::string>;
  std::map<Key, std::map<std::string, InstanceVariability>> groups;
  std::map<std::string, std::map<std::string, std::map<std::string, std::string>>> software;
  for (const auto& e : corpus.epochs) {
    if (!workload.empty() && e.workload != workload) continue;
    const std::string inst = e.instance.empty() ? "(unnamed)" : e.instance;
    if (!e.software.empty()) software[e.device][inst] = e.software;
    else software[e.device].emplace(inst, std::map<std::string, std::string>{});
    if (e.epoch == 0) {
      ++rep.warmup_epochs_excluded;
      continue;
    }
    const std::string mode = e.mode.explicit_settings() ? e.mode.label() : (e.mode_name.empty() ? "default" : e.mode_name);
    auto& iv = groups[{e.device, e.workload, mode}][inst];
    iv.instance = inst;
    iv.time_values.push_back(e.time);
    if (e.energy) iv.energy_values.push_back(*e.energy);
    if (!e.software.empty()) iv.software = e.software;
  }
  for (auto& [key, insts] : groups) {
    VariabilityGroup g;
    std::tie(g.device, g.workload, g.mode) = key;
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
  for (auto& [device, insts] : software) {
    ClassSoftware c;
    c.device = device;
    c.instances = insts;
    std::set<std::string> keys;
    for (const auto& [i, sw] : insts)
      for (const auto& [k, v] : sw) keys.insert(k);
    for (const auto& k : keys) {
      std::set<std::string> values;
      for (const auto& [i, sw] : insts) {
        auto it = sw.find(k);
        values.insert(it == sw.end() ? std::string("(unknown)") : it->second);
      }
      if (values.size() > 1) c.differing_keys.push_back(k);
    }
    c.differs = !c.differing_keys.empty();
    rep.classes.push_back(std::move(c));
  }
  return rep;
}

}  // namespace jetsweep::analysis
