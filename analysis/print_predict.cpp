// Printers of `analyze predict`: the prediction's JSON (also nested in optimize), text, and --predictions-out.
#include <fstream>

#include "analysis/print_reports.hpp"
#include "analysis/print_util.hpp"

namespace jetsweep::analysis {

namespace bj = boost::json;

namespace {

bj::object linear_json(const LinearModel& m, const std::vector<const char*>& names) {
  bj::object o;
  bj::object c;
  for (size_t i = 0; i < names.size() && i < m.coef.size(); ++i) c[names[i]] = jnum(m.coef[i], 8);
  o["coefficients"] = std::move(c);
  o["intercept"] = jnum(m.intercept, 8);
  o["rank"] = m.rank;
  return o;
}

bj::object search_json(const RepresentativeSearch& search, const PredictRequest& req) {
  bj::object s;
  s["criterion"] = to_string(req.criterion);
  s["features"] = to_string(req.features);
  s["pool_size"] = search.pool.size();
  s["combinations"] = search.combinations;
  s["score"] = jnum(search.score, 6);
  bj::array refs;
  for (const auto& r : search.references) {
    bj::object ro;
    ro["workload"] = r.workload;
    ro["rmse_ms"] = jnum(r.rmse_ms, 6);
    ro["time_mape_pct"] = jnum(r.mape_pct, 5);
    refs.push_back(std::move(ro));
  }
  s["references"] = std::move(refs);
  return s;
}

bj::object reference_json(const ReferenceModelInfo& ref) {
  bj::object r;
  r["workload"] = ref.workload;
  r["device"] = ref.device;
  r["modes"] = ref.modes;
  r["loaded"] = ref.loaded;
  r["seconds"] = jnum(ref.seconds, 4);
  r["time_model_path"] = ref.time_path;
  r["power_model_path"] = ref.power_path;
  return r;
}

bj::object training_json(const NnTrainingReport& t) {
  bj::object x;
  x["train"] = t.samples_train;
  x["validation"] = t.samples_validation;
  x["best_epoch"] = t.best_epoch;
  x["best_validation_mse"] = jnum(t.best_validation_mse, 5);
  x["seconds"] = jnum(t.seconds, 4);
  return x;
}

// The method, target, seed, training modes and held-out errors.
void outcome_json(bj::object& o, const PredictOutcome& p, const ConfigLabels& labels) {
  o["method"] = to_string(p.method);
  o["target"] = p.target;
  o["device"] = p.device;
  o["config"] = config_json(p.config);
  o["config_label"] = labels(p.config);
  o["simulated"] = p.simulated;
  o["seed"] = p.seed;
  o["train_modes"] = p.train_modes.size();
  bj::array tm;
  for (const auto& m : p.train_modes) tm.push_back(mode_json(m));
  o["training_modes"] = std::move(tm);
  o["held_out_modes"] = p.held_out.size();
  o["time_mape_pct"] = jnum(p.time_mape_pct, 5);
  o["power_mape_pct"] = jnum(p.power_mape_pct, 5);
  o["energy_mape_pct"] = jnum(p.energy_mape_pct, 5);
  o["fit_seconds"] = jnum(p.fit_seconds, 4);
}

}  // namespace

bj::object prediction_json(const PredictOutcome& p, const PredictRequest& req, const ConfigLabels& labels) {
  bj::object o;
  outcome_json(o, p, labels);
  if (p.search) o["representative_search"] = search_json(*p.search, req);
  const bool inverse = req.features == LinearFeatures::kInverse;
  if (p.time_model)
    o["time_model"] = linear_json(*p.time_model, inverse ? std::vector<const char*>{"inv_cpu_ghz", "inv_cores", "inv_gpu_ghz", "inv_emc_ghz"}
                                                         : std::vector<const char*>{"cpu_mhz", "cores", "gpu_mhz", "emc_mhz"});
  if (p.energy_model)
    o["energy_model"] = linear_json(*p.energy_model, {"cpu_mhz", "cores", "gpu_mhz", "emc_mhz", "time_ms"});
  if (p.reference) o["reference_model"] = reference_json(*p.reference);
  if (p.method != Method::kLinear) {
    o["time_training"] = training_json(p.time_training);
    o["power_training"] = training_json(p.power_training);
  }
  bj::array notes;
  for (const auto& n : p.notes) notes.push_back(bj::value(n));
  o["notes"] = std::move(notes);
  return o;
}

bj::object report_json(const PredictReport& r) {
  bj::object o = prediction_json(r.outcome, r.request, r.context.labels);
  selection_json(o, r.context);
  return o;
}

namespace {

void print_search(std::ostream& out, const PredictOutcome& p, const PredictRequest& req) {
  out << "Representative modes: exhaustive C(" << p.search->pool.size() << "," << p.train_modes.size()
      << ") = " << p.search->combinations << " sets over " << p.search->references.size()
      << " reference workload(s), criterion sum of " << to_string(req.criterion) << ", features "
      << to_string(req.features) << "\n";
  for (const auto& r : p.search->references)
    out << "  reference " << pad(r.workload, 20) << " RMSE " << fixed(r.rmse_ms, 3) << " ms, MAPE "
        << fixed(r.mape_pct, 2) << "%\n";
}

}  // namespace

void print_text(std::ostream& out, const PredictReport& r) {
  const PredictOutcome& p = r.outcome;
  const std::string l = r.context.labels(p.config);
  out << "Method " << to_string(p.method) << " for " << p.target << " on " << p.device << (l.empty() ? "" : " " + l)
      << sim_mark(p.simulated) << " (seed " << p.seed << ")\n";
  if (p.search) print_search(out, p, r.request);
  if (p.reference)
    out << "Reference model: " << p.reference->workload << "@" << p.reference->device << ", " << p.reference->modes
        << " modes, " << (p.reference->loaded ? "reused from " + p.reference->time_path : std::string("trained"))
        << " (" << fixed(p.reference->seconds, 2) << " s)\n";
  out << "Trained on " << p.train_modes.size() << " mode(s):";
  size_t shown = 0;
  for (const auto& m : p.train_modes) {
    if (shown++ == 8) {
      out << " ...";
      break;
    }
    out << " " << m.label();
  }
  out << "\nFit time " << fixed(p.fit_seconds, 3) << " s\n";
  out << "Held-out modes: " << p.held_out.size() << "\n";
  out << "  time_mape_pct   " << fixed(p.time_mape_pct, 2) << "\n";
  out << "  power_mape_pct  " << fixed(p.power_mape_pct, 2) << "\n";
  out << "  energy_mape_pct " << fixed(p.energy_mape_pct, 2) << "\n";
  for (const auto& n : p.notes) out << "note: " << n << "\n";
  print_selection(out, r.context);
}

Status write_predictions_csv(const std::string& path, const PredictOutcome& p) {
  std::ofstream f(path);
  if (!f) return io_error(path + ": cannot write --predictions-out");
  f << "device,workload,cores,cpu_mhz,gpu_mhz,emc_mhz,minibatch_ms,power_mw,observed_minibatch_ms,observed_power_mw\n";
  for (const auto& x : p.held_out) {
    f << p.device << ',' << p.target << ',' << x.mode.cores << ',' << x.mode.cpu_mhz << ',' << x.mode.gpu_mhz << ','
      << x.mode.emc_mhz << ',' << x.time_ms << ',' << (x.power_mw ? fixed(*x.power_mw, 3) : "") << ','
      << (x.observed_time_ms ? fixed(*x.observed_time_ms, 4) : "") << ','
      << (x.observed_power_mw ? fixed(*x.observed_power_mw, 3) : "") << '\n';
  }
  return f ? Status::ok() : io_error(path + ": write failed");
}

}  // namespace jetsweep::analysis
