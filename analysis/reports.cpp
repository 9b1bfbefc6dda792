#include "analysis/reports.hpp"

#include <algorithm>
#include <tuple>

#include "analysis/pareto.hpp"
#include "analysis/stats.hpp"

namespace jetsweep::analysis {

ConfigLabels::ConfigLabels(const Corpus& corpus) : show(varying_axes(corpus)) {
  show.insert("mode");
  for (const auto& [axis, v] : corpus.selected) show.insert(axis);  // what --where chose stays visible
}

Result<VariabilityCommandReport> variability_report(const Corpus& corpus, const std::string& workload) {
  VariabilityCommandReport r{ReportContext(corpus), compute_variability(corpus, workload)};
  if (r.report.groups.empty())
    return invalid_argument(workload.empty() ? "no epochs 1+ to analyse" : "--workload: no epochs 1+ for '" + workload + "'");
  return r;
}

namespace {

std::string unit_of(const std::string& axis) {
  return axis == "time" ? "time_ms" : axis == "power" ? "power_w" : "energy_mj";
}

double axis_value(const ModeRecord& r, const std::string& axis) {
  if (axis == "time") return r.minibatch_ms;
  if (axis == "power") return *r.power_mw / 1000.0;
  return *r.energy_mj();
}

}  // namespace

Result<ParetoReport> pareto_report(const Corpus& corpus, const ParetoQuery& query) {
  JS_ASSIGN_OR_RETURN(WorkloadData w, select_workload(corpus, query.workload, "--workload"));
  ParetoReport r{ReportContext(corpus), std::move(w), unit_of(query.x), unit_of(query.y), {}, {}, {}, {}, 0};
  for (const auto& m : r.workload.modes) {
    if (!m.power_mw) {
      ++r.modes_without_power;
      continue;
    }
    r.x.push_back(axis_value(m, query.x));
    r.y.push_back(axis_value(m, query.y));
    r.modes.push_back(m);
  }
  if (r.modes.empty()) return invalid_argument("--workload: '" + r.workload.workload + "' has no modes with power data");
  r.front = pareto_front(r.x, r.y);
  return r;
}

Result<PredictReport> predict_report(const Corpus& corpus, const PredictRequest& request) {
  JS_ASSIGN_OR_RETURN(PredictOutcome p, run_prediction(corpus, request));
  return PredictReport{ReportContext(corpus), request, std::move(p)};
}

double other_seconds(const EpochSample& e) {
  return std::max(0.0, e.time - e.stall_s.value_or(0) - e.compute_s.value_or(0));
}

namespace {

bool selected_epoch(const EpochSample& e, const EpochsQuery& q) {
  return (!q.run || e.run_id == q.run) && (q.workload.empty() || e.workload == q.workload) &&
         (q.device.empty() || e.device == q.device) && (q.instance.empty() || e.instance == q.instance);
}

void summarise(EpochGroup& g) {
  std::vector<double> e2e, stall, compute, e0;
  for (const EpochSample* ep : g.epochs) {
    const EpochSample& e = *ep;
    if (e.epoch == 0) {
      e0.push_back(e.time);
      continue;
    }
    e2e.push_back(e.time);
    stall.push_back(e.stall_s.value_or(0));
    compute.push_back(e.compute_s.value_or(0));
  }
  g.later_epochs = e2e.size();
  g.warmup_epochs = e0.size();
  if (!e0.empty()) g.epoch0_e2e_s = mean(e0);
  if (e2e.empty()) return;
  g.later_e2e_s = mean(e2e);
  g.later_stall_s = mean(stall);
  g.later_compute_s = mean(compute);
}

}  // namespace

Result<EpochsReport> epochs_report(const Corpus& corpus, const EpochsQuery& query) {
  const bool mode_pooled =
      std::find(corpus.pooled_over.begin(), corpus.pooled_over.end(), "mode") != corpus.pooled_over.end();
  using Key = std::tuple<std::string, std::string, bool, AxisMap>;
  std::map<Key, std::vector<const EpochSample*>> groups;
  const EpochSample* previous = nullptr;   // consecutive epochs of one run share a group: its lookup is skipped
  std::vector<const EpochSample*>* group = nullptr;
  for (const auto& e : corpus.epochs) {
    if (!selected_epoch(e, query)) continue;
    if (!previous || previous->device != e.device || previous->workload != e.workload ||
        previous->simulated != e.simulated || previous->axes != e.axes || !(previous->mode == e.mode) ||
        previous->mode_name != e.mode_name) {
      AxisMap config = e.axes;
      if (!mode_pooled && !config.count("mode")) config["mode"] = mode_axis_value(e.mode, e.mode_name);
      group = &groups[{e.device, e.workload, e.simulated, std::move(config)}];
    }
    group->push_back(&e);
    previous = &e;
  }
  if (groups.empty())
    return invalid_argument(query.run ? "--run: no epochs for run " + std::to_string(query.run) : "--workload: no epochs match");
  EpochsReport r{ReportContext(corpus), query, {}};
  for (auto& [key, epochs] : groups) {
    EpochGroup g;
    std::tie(g.device, g.workload, g.simulated, g.config) = key;
    g.epochs = std::move(epochs);
    summarise(g);
    r.groups.push_back(std::move(g));
  }
  return r;
}

}  // namespace jetsweep::analysis
