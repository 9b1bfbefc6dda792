#include "analysis/print_util.hpp"

#include "analysis/print_reports.hpp"
#include "common/text.hpp"

namespace jetsweep::analysis {

namespace bj = boost::json;

void print_json(std::ostream& out, const bj::value& v) { out << bj::serialize(v) << '\n'; }

std::string plot_sim_mark(bool any, bool all) {
  if (all) return " (simulated)";
  return any ? " (simulated rows marked [sim])" : "";
}

std::string mode_label(const ModeRecord& m) { return m.mode_name.empty() ? m.mode.label() : m.mode_name; }

void print_selection(std::ostream& out, const ReportContext& c) {
  if (!c.selected.empty()) {
    out << "selected (--where):";
    for (const auto& [axis, v] : c.selected) out << " " << axis << "=" << v;
    out << "\n";
  }
  if (!c.pooled_over.empty())
    out << "POOLED over " << join(c.pooled_over) << " (--pool-over: rows that differ only in "
        << (c.pooled_over.size() == 1 ? "this axis" : "these axes") << " are combined)\n";
}

void selection_json(bj::object& o, const ReportContext& c) {
  bj::object w;
  for (const auto& [axis, v] : c.selected) w[axis] = v;
  o["where"] = std::move(w);
  bj::array p;
  for (const auto& axis : c.pooled_over) p.push_back(bj::value(axis));
  o["pooled_over"] = std::move(p);
}

std::string workload_heading(const WorkloadData& w, const ConfigLabels& labels) {
  const std::string l = labels(w.config);
  return w.workload + " on " + w.device + (l.empty() ? "" : " " + l) + sim_mark(w.simulated);
}

void workload_json(bj::object& o, const WorkloadData& w, const ReportContext& c) {
  o["device"] = w.device;
  o["workload"] = w.workload;
  o["config"] = config_json(w.config);
  o["config_label"] = c.labels(w.config);
  o["simulated"] = w.simulated;
  selection_json(o, c);
}

}  // namespace jetsweep::analysis
