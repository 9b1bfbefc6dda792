#include "analysis/prediction.hpp"

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <random>
#include <set>

#include "analysis/stats.hpp"

namespace jetsweep::analysis {

namespace {

double seconds_since(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
}

std::vector<ModeKey> modes_of(const WorkloadData& w) {
  std::vector<ModeKey> out;
  for (const auto& r : w.modes) out.push_back(r.mode);
  return out;
}

// Fills observations and the MAPE figures for the held-out modes.
void score(const WorkloadData& target, const std::vector<ModeKey>& train, PredictOutcome& out) {
  std::set<ModeKey> trained(train.begin(), train.end());
  std::vector<ModeKey> held;
  for (const auto& r : target.modes)
    if (!trained.count(r.mode)) held.push_back(r.mode);
  out.held_out = out.predict(held);
  std::vector<double> t_obs, t_pred, p_obs, p_pred, e_obs, e_pred;
  bool power_complete = !out.held_out.empty();
  for (auto& p : out.held_out) {
    const ModeRecord* r = target.find(p.mode);
    p.observed_time_ms = r->minibatch_ms;
    p.observed_power_mw = r->power_mw;
    t_obs.push_back(r->minibatch_ms);
    t_pred.push_back(p.time_ms);
    if (r->power_mw && p.power_mw) {
      p_obs.push_back(*r->power_mw);
      p_pred.push_back(*p.power_mw);
      e_obs.push_back(*r->power_mw * r->minibatch_ms);
      e_pred.push_back(*p.power_mw * p.time_ms);
    } else {
      power_complete = false;
    }
  }
  if (!t_obs.empty()) out.time_mape_pct = mape_pct(t_obs, t_pred);
  if (!p_obs.empty()) {
    out.power_mape_pct = mape_pct(p_obs, p_pred);
    out.energy_mape_pct = mape_pct(e_obs, e_pred);
    if (!power_complete) out.notes.push_back("power MAPE over the held-out modes that have power data only");
  }
  if (held.empty()) out.notes.push_back("no held-out modes: every profiled mode was used for training");
}

Result<std::vector<WorkloadData>> load_refs(const Corpus& corpus, const PredictRequest& req, const WorkloadData& target) {
  std::vector<WorkloadRef> refs = req.references;
  if (refs.empty()) {
    // Default: every other workload profiled on the target's board.
    for (const auto& w : workloads_of(corpus, target.device))
      if (w != target.workload) refs.push_back({w, target.device});
  }
  std::vector<WorkloadData> out;
  for (const auto& r : refs) {
    JS_ASSIGN_OR_RETURN(auto w, select_workload(corpus, r, "--reference"));
    if (w.workload == target.workload && w.device == target.device)
      return invalid_argument("--reference: '" + r.to_string() + "' is the target workload itself");
    out.push_back(std::move(w));
  }
  if (out.empty()) return invalid_argument("--reference: no reference workload (the corpus holds only the target)");
  return out;
}

Result<PredictOutcome> run_linear(const Corpus& corpus, const PredictRequest& req, const WorkloadData& target) {
  PredictOutcome out;
  JS_ASSIGN_OR_RETURN(auto refs, load_refs(corpus, req, target));
  const int k = req.train_modes > 0 ? req.train_modes : 4;
  std::vector<ModeKey> pool = common_modes(refs);
  // Candidates must also be profiled for the target, which is then profiled in the chosen ones.
  pool.erase(std::remove_if(pool.begin(), pool.end(), [&](const ModeKey& m) { return target.find(m) == nullptr; }),
             pool.end());
  if (req.pool > 0 && pool.size() > req.pool) {
    out.notes.push_back("search pool: " + std::to_string(req.pool) + " of " + std::to_string(pool.size()) +
                        " common modes, chosen with the seed");
    pool = sample_modes(pool, req.pool, req.seed);
  }
  const auto t0 = std::chrono::steady_clock::now();
  JS_ASSIGN_OR_RETURN(auto search, search_representative_modes(refs, pool, k, req.features, req.criterion));
  JS_ASSIGN_OR_RETURN(auto time_model, fit_time_model(target, search.best, req.features));
  std::optional<LinearModel> energy_model;
  bool refs_have_power = std::all_of(refs.begin(), refs.end(), [](const WorkloadData& w) { return w.has_power(); });
  if (refs_have_power) {
    JS_ASSIGN_OR_RETURN(auto em, fit_energy_model(refs));
    energy_model = em;
  } else {
    out.notes.push_back("no energy model: a reference workload lacks power data");
  }
  out.fit_seconds = seconds_since(t0);
  out.train_modes = search.best;
  out.search = search;
  out.time_model = time_model;
  out.energy_model = energy_model;
  const LinearFeatures f = req.features;
  out.predict = [time_model, energy_model, f](const std::vector<ModeKey>& modes) {
    std::vector<ModePrediction> p;
    p.reserve(modes.size());
    for (const auto& m : modes) {
      ModePrediction mp;
      mp.mode = m;
      mp.time_ms = time_model.predict(time_features(m, f));
      if (energy_model && mp.time_ms > 0) {
        const double energy_mj = energy_model->predict(energy_features(m, mp.time_ms));
        mp.power_mw = 1000.0 * energy_mj / mp.time_ms;  // mJ / ms = W
      }
      p.push_back(mp);
    }
    return p;
  };
  return out;
}

uint64_t fnv1a(const std::string& s) {
  uint64_t h = 1469598103934665603ULL;
  for (unsigned char c : s) {
    h ^= c;
    h *= 1099511628211ULL;
  }
  return h;
}

std::string safe_name(std::string s) {
  for (char& c : s)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '-' && c != '_' && c != '.') c = '_';
  return s;
}

}  // namespace

Result<ReferenceModels> powertrain_reference(const Corpus& corpus, const PredictRequest& req,
                                             const WorkloadData& target) {
  if (req.references.empty()) return invalid_argument("--reference: powertrain needs a reference workload");
  JS_ASSIGN_OR_RETURN(auto ref, select_workload(corpus, req.references.front(), "--reference"));
  if (ref.workload == target.workload && ref.device == target.device)
    return invalid_argument("--reference: the reference is the target workload itself");
  if (!ref.has_power()) return invalid_argument("--reference: workload '" + ref.workload + "' lacks power data");
  ReferenceModels out;
  const NnOptions o = transfer_options(req);
  std::vector<ModeKey> rx = modes_of(ref);
  if (req.reference_modes > 0) rx = sample_modes(rx, req.reference_modes, req.reference_seed);
  NnOptions ro = o;
  ro.seed = req.reference_seed;
  std::vector<double> rt, rp;
  ro.full_batch_steps = 0;   // the reference has thousands of modes: the paper's epochs and validation split
  std::string key = "powertrain-ref-v2|" + ref.device + "|" + ref.workload;
  char buf[160];
  for (const auto& m : rx) {
    const ModeRecord* r = ref.find(m);
    rt.push_back(r->minibatch_ms);
    rp.push_back(*r->power_mw);
    std::snprintf(buf, sizeof buf, "|%s=%.9g,%.9g", m.label().c_str(), r->minibatch_ms, *r->power_mw);
    key += buf;
  }
  std::snprintf(buf, sizeof buf, "|e%d b%d lr%.9g d%.9g v%.9g s%llu log%d inv%d", o.epochs, o.batch_size,
                o.learning_rate, o.dropout, o.validation_fraction, static_cast<unsigned long long>(ro.seed),
                o.log_target ? 1 : 0, o.inverse_features ? 1 : 0);
  key += buf;
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(fnv1a(key)));
  ReferenceModelInfo& info = out.info;
  info.workload = ref.workload;
  info.device = ref.device;
  info.modes = rx.size();
  const auto t0 = std::chrono::steady_clock::now();
  if (!req.model_dir.empty()) {
    const std::string base = req.model_dir + "/" + safe_name(ref.workload + "@" + ref.device) + "-" + buf;
    info.time_path = base + "-time.pt";
    info.power_path = base + "-power.pt";
    if (std::filesystem::exists(info.time_path) && std::filesystem::exists(info.power_path)) {
      auto lt = NnRegressor::load(info.time_path);
      auto lp = NnRegressor::load(info.power_path);
      if (lt.is_ok() && lp.is_ok()) {
        out.time = std::make_shared<const NnRegressor>(std::move(lt).value());
        out.power = std::make_shared<const NnRegressor>(std::move(lp).value());
        info.loaded = true;
      } else {
        out.notes.push_back("could not reuse the saved reference model (" +
                            (lt.is_ok() ? lp.status() : lt.status()).message() + "); retraining");
      }
    }
  }
  if (!info.loaded) {
    JS_ASSIGN_OR_RETURN(auto tt, NnRegressor::train(rx, rt, ro));
    JS_ASSIGN_OR_RETURN(auto tp, NnRegressor::train(rx, rp, ro));
    out.time = std::make_shared<const NnRegressor>(std::move(tt));
    out.power = std::make_shared<const NnRegressor>(std::move(tp));
    if (!req.model_dir.empty()) {
      Status s = out.time->save(info.time_path);
      if (s.is_ok()) s = out.power->save(info.power_path);
      if (!s.is_ok()) out.notes.push_back("reference model not saved: " + s.message());
    }
  }
  info.seconds = seconds_since(t0);
  return out;
}

NnOptions transfer_options(const PredictRequest& req) {
  NnOptions o = req.nn;
  o.seed = req.seed;
  if (req.method == Method::kPowerTrain) {
    o.log_target = true;
    o.inverse_features = true;
    if (o.full_batch_steps <= 0) o.full_batch_steps = kPowerTrainFineTuneSteps;
  } else {
    o.full_batch_steps = 0;   // nn and powertrain-paper train as the paper does, on the four knobs
    o.inverse_features = false;
  }
  return o;
}

namespace {

Result<PredictOutcome> run_nn(const Corpus& corpus, const PredictRequest& req, const WorkloadData& target) {
  PredictOutcome out;
  const size_t k = req.train_modes > 0 ? static_cast<size_t>(req.train_modes) : 50;
  const auto train = sample_modes(modes_of(target), k, req.seed);
  if (train.size() >= target.modes.size())
    out.notes.push_back("--train-modes " + std::to_string(k) + " covers every profiled mode of the target");
  std::vector<double> t_y, p_y;
  std::vector<ModeKey> p_x;
  for (const auto& m : train) {
    const ModeRecord* r = target.find(m);
    t_y.push_back(r->minibatch_ms);
    if (r->power_mw) {
      p_x.push_back(m);
      p_y.push_back(*r->power_mw);
    }
  }
  const NnOptions o = transfer_options(req);
  std::shared_ptr<NnRegressor> time_nn, power_nn;

  if (is_transfer(req.method)) {
    JS_ASSIGN_OR_RETURN(ReferenceModels ref, powertrain_reference(corpus, req, target));
    out.reference = ref.info;
    out.notes.insert(out.notes.end(), ref.notes.begin(), ref.notes.end());
    const auto t1 = std::chrono::steady_clock::now();
    JS_ASSIGN_OR_RETURN(auto xt, ref.time->transfer(train, t_y, o));
    time_nn = std::make_shared<NnRegressor>(std::move(xt));
    if (p_x.size() >= 2) {
      JS_ASSIGN_OR_RETURN(auto xp, ref.power->transfer(p_x, p_y, o));
      power_nn = std::make_shared<NnRegressor>(std::move(xp));
    }
    out.fit_seconds = seconds_since(t1);
  } else {
    const auto t1 = std::chrono::steady_clock::now();
    JS_ASSIGN_OR_RETURN(auto nt, NnRegressor::train(train, t_y, o));
    time_nn = std::make_shared<NnRegressor>(std::move(nt));
    if (p_x.size() >= 2) {
      JS_ASSIGN_OR_RETURN(auto np, NnRegressor::train(p_x, p_y, o));
      power_nn = std::make_shared<NnRegressor>(std::move(np));
    }
    out.fit_seconds = seconds_since(t1);
  }
  if (!power_nn) out.notes.push_back("no power model: the target's training modes lack power data");
  out.train_modes = train;
  out.time_training = time_nn->report();
  if (power_nn) out.power_training = power_nn->report();
  out.predict = [time_nn, power_nn](const std::vector<ModeKey>& modes) {
    std::vector<ModePrediction> p(modes.size());
    const auto t = time_nn->predict(modes);
    std::vector<double> pw;
    if (power_nn) pw = power_nn->predict(modes);
    for (size_t i = 0; i < modes.size(); ++i) {
      p[i].mode = modes[i];
      p[i].time_ms = t[i];
      if (power_nn) p[i].power_mw = pw[i];
    }
    return p;
  };
  return out;
}

}  // namespace

Result<Method> parse_method(const std::string& text) {
  if (text == "linear") return Method::kLinear;
  if (text == "nn") return Method::kNn;
  if (text == "powertrain") return Method::kPowerTrain;
  if (text == "powertrain-paper") return Method::kPowerTrainPaper;
  return invalid_argument("--method: unknown method '" + text + "' (known: linear, nn, powertrain, powertrain-paper)");
}

const char* to_string(Method m) {
  switch (m) {
    case Method::kLinear: return "linear";
    case Method::kNn: return "nn";
    case Method::kPowerTrain: return "powertrain";
    case Method::kPowerTrainPaper: return "powertrain-paper";
  }
  return "?";
}

bool is_transfer(Method m) { return m == Method::kPowerTrain || m == Method::kPowerTrainPaper; }

std::vector<ModeKey> sample_modes(const std::vector<ModeKey>& modes, size_t k, uint64_t seed) {
  std::vector<ModeKey> v = modes;
  if (k >= v.size()) return v;
  std::mt19937_64 rng(seed);
  // Partial Fisher-Yates: the first k positions become the sample.
  for (size_t i = 0; i < k; ++i) {
    std::uniform_int_distribution<size_t> d(i, v.size() - 1);
    std::swap(v[i], v[d(rng)]);
  }
  v.resize(k);
  std::sort(v.begin(), v.end());
  return v;
}

namespace {

// The target's name, board, configuration and notes.
void describe_target(const WorkloadData& target, PredictOutcome& out) {
  out.target = target.workload;
  out.device = target.device;
  out.config = target.config;
  out.simulated = target.simulated;
  out.notes.insert(out.notes.end(), target.notes.begin(), target.notes.end());
}

}  // namespace

Result<PredictOutcome> run_prediction(const Corpus& corpus, const PredictRequest& req) {
  JS_ASSIGN_OR_RETURN(auto target, select_workload(corpus, req.target, "--target"));
  Result<PredictOutcome> r = req.method == Method::kLinear ? run_linear(corpus, req, target) : run_nn(corpus, req, target);
  if (!r.is_ok()) return r;
  PredictOutcome out = std::move(r).value();
  out.method = req.method;
  out.seed = req.seed;
  describe_target(target, out);
  score(target, out.train_modes, out);
  return out;
}

}  // namespace jetsweep::analysis
