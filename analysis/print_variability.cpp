// Printers of `analyze variability`: per-instance distributions, software per board class, violin plots.
#include "analysis/plots.hpp"

#include <algorithm>

#include "analysis/print_reports.hpp"
#include "analysis/print_util.hpp"
#include "common/text.hpp"

namespace jetsweep::analysis {

namespace bj = boost::json;

namespace {

bj::object distribution_json(const Distribution& d) {
  bj::object o;
  o["n"] = d.n;
  o["median"] = jnum(d.median);
  o["max_deviation_pct"] = jnum(d.max_deviation_pct, 4);
  o["cv_pct"] = jnum(d.cv_pct, 4);
  o["min"] = jnum(d.min);
  o["max"] = jnum(d.max);
  return o;
}

bj::value distribution_json(const std::optional<Distribution>& d) {
  return d ? bj::value(distribution_json(*d)) : bj::value(nullptr);
}

bj::object strings_json(const std::map<std::string, std::string>& m) {
  bj::object o;
  for (const auto& [k, v] : m) o[k] = v;
  return o;
}

bj::array strings_json(const std::vector<std::string>& v) {
  bj::array a;
  for (const auto& s : v) a.push_back(bj::value(s));
  return a;
}

bj::object group_json(const VariabilityGroup& g, const ConfigLabels& labels) {
  bj::object go;
  go["device"] = g.device;
  go["workload"] = g.workload;
  go["mode"] = g.mode;
  go["config"] = config_json(g.config);
  go["config_label"] = labels(g.config);
  go["simulated"] = g.simulated;
  go["time"] = distribution_json(g.time);
  go["energy"] = distribution_json(g.energy);
  go["instance_median_spread_pct"] = jnum(g.instance_median_spread_pct, 4);
  go["instance_energy_spread_pct"] = jnum(g.instance_energy_spread_pct, 4);
  bj::array insts;
  for (const auto& i : g.instances) {
    bj::object io;
    io["instance"] = i.instance;
    io["simulated"] = i.simulated;
    io["time"] = distribution_json(i.time);
    io["energy"] = distribution_json(i.energy);
    io["software"] = strings_json(i.software);
    insts.push_back(std::move(io));
  }
  go["instances"] = std::move(insts);
  return go;
}

bj::object class_json(const ClassSoftware& c) {
  bj::object co;
  co["device"] = c.device;
  co["software_differs"] = c.differs;
  co["compared_instances"] = c.compared_instances;
  co["simulated_instances"] = strings_json(c.simulated_instances);
  co["differing_keys"] = strings_json(c.differing_keys);
  bj::object insts;
  for (const auto& [name, s] : c.instances) insts[name] = strings_json(s);
  co["instances"] = std::move(insts);
  return co;
}

}  // namespace

bj::object report_json(const VariabilityCommandReport& r) {
  const VariabilityReport& rep = r.report;
  bj::object o;
  selection_json(o, r.context);
  o["time_unit"] = rep.time_unit;
  o["energy_unit"] = rep.energy_unit;
  o["warmup_epochs_excluded"] = rep.warmup_epochs_excluded;
  bj::array groups;
  for (const auto& g : rep.groups) groups.push_back(group_json(g, r.context.labels));
  o["groups"] = std::move(groups);
  bj::array classes;
  for (const auto& c : rep.classes) classes.push_back(class_json(c));
  o["classes"] = std::move(classes);
  o["data_fingerprints"] = rep.data_fingerprints;
  o["data_warnings"] = bj::value_from(rep.data_warnings);
  return o;
}

namespace {

// n, time median / max dev / CV, energy median / max dev / CV.
void print_distributions(std::ostream& out, int n, const Distribution& time, const std::optional<Distribution>& energy) {
  out << pad_left(std::to_string(n), 5) << pad_left(fixed(time.median, 4), 14)
      << pad_left(fixed(time.max_deviation_pct, 2), 11) << pad_left(fixed(time.cv_pct, 2), 8)
      << pad_left(energy ? fixed(energy->median, 3) : "-", 15)
      << pad_left(energy ? fixed(energy->max_deviation_pct, 2) : "-", 11)
      << pad_left(energy ? fixed(energy->cv_pct, 2) : "-", 8);
}

void print_group(std::ostream& out, const VariabilityGroup& g, const ConfigLabels& labels) {
  out << "\n" << g.device << "  " << g.workload << "  " << labels(g.config) << sim_mark(g.simulated) << "\n";
  out << "  " << pad("instance", 16) << pad_left("n", 5) << pad_left("time median", 14) << pad_left("max dev %", 11)
      << pad_left("CV %", 8) << pad_left("energy median", 15) << pad_left("max dev %", 11) << pad_left("CV %", 8)
      << "  software\n";
  for (const auto& i : g.instances) {
    const std::string s = join(i.software, " ", [](const auto& kv) { return kv.first + "=" + kv.second; });
    out << "  " << pad(i.instance, 16);
    print_distributions(out, i.time.n, i.time, i.energy);
    out << "  " << (s.empty() ? "-" : s) << "\n";
  }
  out << "  " << pad("all instances", 16);
  print_distributions(out, g.time.n, g.time, g.energy);
  out << "\n";
  out << "  instance medians within " << fixed(g.instance_median_spread_pct, 2) << "% of their median (time)";
  if (g.instance_energy_spread_pct) out << ", " << fixed(*g.instance_energy_spread_pct, 2) << "% (energy)";
  out << "\n";
}

void print_class(std::ostream& out, const ClassSoftware& c) {
  out << "  " << c.device << ": " << c.instances.size() << " instance(s)";
  if (!c.simulated_instances.empty())
    out << " (" << c.simulated_instances.size() << " simulated, not compared: a simulated agent reports its host's software)";
  out << ", ";
  if (c.differs) {
    out << "SOFTWARE DIFFERS in";
    for (const auto& k : c.differing_keys) out << " " << k;
    out << " (SIGMETRICS'23 5.4.4: expect up to 40% variability)\n";
  } else if (c.compared_instances < 2) {
    out << "software not compared (fewer than two real instances)\n";
  } else {
    out << "same software\n";
  }
}

}  // namespace

void print_text(std::ostream& out, const VariabilityCommandReport& r) {
  const VariabilityReport& rep = r.report;
  out << "Variability over epochs 1+ (" << rep.warmup_epochs_excluded << " warm-up epochs excluded); time in "
      << rep.time_unit << ", energy in " << rep.energy_unit << "; one group per board class, workload and "
      << "configuration\n";
  print_selection(out, r.context);
  for (const auto& g : rep.groups) print_group(out, g, r.context.labels);
  out << "\nSoftware per board class (kernel, torch_version, compiler, git_sha, l4t, jetpack; real instances only):\n";
  for (const auto& c : rep.classes) print_class(out, c);
  out << "\nData (the fingerprint of the bytes each run read):";
  if (!rep.data_fingerprints) out << " not recorded (simulated boards, or agents older than the fingerprint)\n";
  else if (rep.data_warnings.empty()) out << " every run of each dataset read the same bytes\n";
  else out << "\n";
  for (const auto& w : rep.data_warnings) out << "  DATA DIFFERS: " << w << "\n";
}

// Violins: one per (instance, configuration), in one panel per board class.
Status plot_variability(const std::string& file, const VariabilityCommandReport& r, bool energy) {
  const VariabilityReport& rep = r.report;
  const ConfigLabels& labels = r.context.labels;
  auto values_of = [&](const InstanceVariability& i) -> const std::vector<double>& {
    return energy ? i.energy_values : i.time_values;
  };
  bool any_sim = false, all_sim = true;
  for (const auto& g : rep.groups)
    for (const auto& i : g.instances)
      if (!values_of(i).empty()) {
        any_sim = any_sim || g.simulated;
        all_sim = all_sim && g.simulated;
      }
  // One panel per board class: each class on its own y axis (a Nano's epochs take many times an Orin's).
  std::vector<ViolinPanel> panels;
  for (const auto& g : rep.groups)
    for (const auto& i : g.instances) {
      if (values_of(i).empty()) continue;
      auto panel = std::find_if(panels.begin(), panels.end(), [&](const ViolinPanel& p) { return p.title == g.device; });
      if (panel == panels.end()) panel = panels.insert(panels.end(), ViolinPanel{g.device, {}});
      std::string label = i.instance;
      // Workload and configuration only where a panel holds more than one.
      const auto same_class = std::count_if(rep.groups.begin(), rep.groups.end(),
                                            [&](const VariabilityGroup& o) { return o.device == g.device; });
      if (same_class > 1) label += " " + g.workload + " " + labels(g.config);
      if (g.simulated && !all_sim) label += " [sim]";
      panel->groups.emplace_back(label, values_of(i));
    }
  if (panels.empty()) return invalid_argument(std::string(energy ? "--plot-energy" : "--plot") + ": no values to draw");
  std::string title = std::string(energy ? "Energy" : "Epoch time") + " per board instance (epochs 1+)";
  // The workload and configuration in the title when every panel shares them.
  const bool one_setting = std::all_of(rep.groups.begin(), rep.groups.end(), [&](const VariabilityGroup& g) {
    return g.workload == rep.groups[0].workload && labels(g.config) == labels(rep.groups[0].config);
  });
  if (!rep.groups.empty() && one_setting) title += ": " + rep.groups[0].workload + " " + labels(rep.groups[0].config);
  if (!r.context.pooled_over.empty()) title += ", pooled over " + join(r.context.pooled_over);
  return plot_violins(file, title + plot_sim_mark(any_sim, all_sim),
                      energy ? "energy (" + rep.energy_unit + ")" : "time (" + rep.time_unit + ")", panels);
}

}  // namespace jetsweep::analysis
