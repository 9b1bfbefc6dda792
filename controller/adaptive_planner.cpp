// AdaptivePlanner: a plan's reference anchor, its next round and its fit (issue 33).
#include "controller/adaptive_planner.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <set>
#include <tuple>

#include "analysis/adaptive.hpp"
#include "analysis/csv_corpus.hpp"
#include "analysis/db_source.hpp"
#include "analysis/pareto.hpp"
#include "analysis/prediction.hpp"
#include "common/log.hpp"

namespace jetsweep::controller {
namespace bj = boost::json;
namespace an = jetsweep::analysis;

namespace {

an::ModeKey key_of(const ModeSettings& m) {
  return {static_cast<int>(m.cores), static_cast<double>(m.cpu_khz) / 1000.0, static_cast<double>(m.gpu_hz) / 1e6,
          static_cast<double>(m.emc_hz) / 1e6};
}

// A mode's identity at 0.1 MHz: corpora write frequencies in MHz with some rounding.
using ModeId = std::tuple<int, long long, long long, long long>;
ModeId id_of(const an::ModeKey& k) {
  return {k.cores, std::llround(k.cpu_mhz * 10), std::llround(k.gpu_mhz * 10), std::llround(k.emc_mhz * 10)};
}

bj::array settings_json(const ModeSettings& m) { return {m.cores, m.cpu_khz, m.gpu_hz, m.emc_hz}; }

}  // namespace

struct AdaptivePlanner::Reference {
  std::string source;   // the spec's reference, as given
  an::Corpus corpus;
  an::WorkloadData workload;
  std::map<ModeId, std::pair<double, double>> measured;   // mode -> (time ms, power mW)
  // Its PowerTrain networks once a decision trained (or loaded) them: kept for the plan's later rounds, so a
  // reference is trained once per controller (and once in all with --model-dir). Guarded by the planner's mu_.
  mutable std::shared_ptr<const an::ReferenceModels> networks;
};

AdaptivePlanner::AdaptivePlanner(Options options) : options_(std::move(options)), worker_(64) {}
AdaptivePlanner::~AdaptivePlanner() { stop(); }
void AdaptivePlanner::start() {
  stopping_ = false;
  worker_.start();
}
void AdaptivePlanner::stop() {
  stopping_ = true;
  worker_.stop();
}

bool AdaptivePlanner::plan(boost::asio::any_io_executor ex, DuePlan due, size_t boards,
                           std::function<void(AdaptiveDecision)> done) {
  return worker_.post<AdaptiveDecision>(
      ex, [this, due = std::move(due), boards] { return decide(due, boards); }, std::move(done));
}

Result<std::shared_ptr<const AdaptivePlanner::Reference>> AdaptivePlanner::reference(const AdaptivePlanSpec& spec) {
  // Without reference_workload, the reference is the one workload besides the plan's own: that one is in the key.
  const std::string key = spec.reference + "\n" + spec.reference_workload + "\n" + spec.base.device + "\n" +
                          (spec.cross_board ? "x" : "") + "\n" +
                          (spec.reference_workload.empty() ? spec.workload() : std::string());
  {
    std::lock_guard lock(mu_);
    if (auto it = references_.find(key); it != references_.end()) return it->second;
  }
  const std::string at = spec.where + ": 'power_mode.reference' " + spec.reference;
  auto ref = std::make_shared<Reference>();
  ref->source = spec.reference;
  std::error_code ec;
  const bool is_file = std::filesystem::is_regular_file(spec.reference, ec);
  if (is_file) {
    auto corpus = an::read_corpus_csv(spec.reference);
    if (!corpus) return invalid_argument(at + ": " + corpus.status().message());
    ref->corpus = std::move(*corpus);
  } else if (spec.reference.size() > 4 && spec.reference.substr(spec.reference.size() - 4) == ".csv") {
    return invalid_argument(at + ": no such file on the controller's machine");
  } else if (options_.dsn.empty()) {
    return invalid_argument(at + ": not a CSV file on the controller's machine, and campaign references need the "
                                 "controller's PostgreSQL");
  } else {
    auto corpus = an::load_corpus_from_db(options_.dsn, an::DbFilter{spec.reference});
    if (!corpus) return Status(corpus.status().code(), at + ": " + corpus.status().message());
    ref->corpus = std::move(*corpus);
  }
  // "WORKLOAD" or "WORKLOAD@CLASS"; without a class, the plan's own (or, across classes, the only one).
  an::WorkloadRef wref = an::parse_workload_ref(spec.reference_workload);
  if (wref.device.empty() && !spec.cross_board) wref.device = spec.base.device;
  if (wref.workload.empty()) {
    std::set<std::string> names;
    for (const auto& r : ref->corpus.rows)
      if (spec.cross_board || r.device == spec.base.device) names.insert(r.workload);
    names.erase(spec.workload());
    if (names.size() != 1) {
      std::string list;
      for (const auto& n : names) list += (list.empty() ? "" : ", ") + n;
      return invalid_argument(at + ": " + (names.empty() ? "has no workload measured on " + spec.base.device +
                                                               (spec.cross_board ? "" : " (a reference of another board "
                                                                                        "class needs 'cross_board: true')")
                                                         : "has several workloads (" + list +
                                                               "): name one in 'power_mode.reference_workload'"));
    }
    wref.workload = *names.begin();
  }
  auto selected = an::select_workload(ref->corpus, wref, "'power_mode.reference_workload'");
  if (!selected) return invalid_argument(at + ": " + selected.status().message());
  ref->workload = std::move(*selected);
  if (ref->workload.device != spec.base.device && !spec.cross_board)
    return invalid_argument(at + ": '" + ref->workload.workload + "' was measured on " + ref->workload.device +
                            ", the plan runs on " + spec.base.device +
                            "; a transfer across board classes needs 'cross_board: true'");
  if (ref->workload.workload == spec.workload() && ref->workload.device == spec.base.device)
    return invalid_argument(at + ": the reference is the plan's own workload");
  for (const auto& m : ref->workload.modes) {
    if (!m.power_mw || !(*m.power_mw > 0) || !(m.minibatch_ms > 0)) continue;
    ref->measured[id_of(m.mode)] = {m.minibatch_ms, *m.power_mw};
  }
  if (ref->measured.empty())
    return invalid_argument(at + ": '" + ref->workload.workload + "' has no mode with measured power and time");
  std::lock_guard lock(mu_);
  references_[key] = ref;
  return std::shared_ptr<const Reference>(ref);
}

Status AdaptivePlanner::check(const AdaptivePlanSpec& spec) { return reference(spec).status(); }

namespace {

// The reference's measured time (ms) and power (mW) of each of `modes`; false unless it measured every one.
bool measured_values(const std::map<ModeId, std::pair<double, double>>& measured, const std::vector<an::ModeKey>& modes,
                     std::vector<double>& time_ms, std::vector<double>& power_mw) {
  for (const auto& m : modes) {
    auto it = measured.find(id_of(m));
    if (it == measured.end()) return false;
    time_ms.push_back(it->second.first);
    power_mw.push_back(it->second.second);
  }
  return true;
}

}  // namespace

// The anchor of the plan's candidates (AdaptivePlanSpec::anchor): the reference's PowerTrain networks' predictions
// (trained on all its modes), or, with anchor "measured", its own values where it measured every candidate.
struct AdaptivePlanner::Anchor {
  std::vector<double> time_ms, power_mw;
  std::string kind;      // "measured" | "powertrain"
  std::string network;   // powertrain: "trained" | "loaded" (from --model-dir) | "kept" (by an earlier decision)
};

Result<AdaptivePlanner::Anchor> AdaptivePlanner::anchor_of(const Reference& ref, const std::vector<an::ModeKey>& modes,
                                                         const AdaptivePlanSpec& spec) {
  if (spec.anchor == "measured") {
    Anchor a;
    a.kind = "measured";
    if (measured_values(ref.measured, modes, a.time_ms, a.power_mw)) return a;
    JS_LOG_INFO << spec.where << ": 'anchor: measured' but the reference did not measure every candidate: its "
                << "networks anchor the plan";
  }
  std::shared_ptr<const an::ReferenceModels> networks;
  {
    std::lock_guard lock(mu_);
    networks = ref.networks;
  }
  std::string how = "kept";
  if (!networks) {   // trained outside the lock: check() may run meanwhile (decisions are one at a time)
    an::PredictRequest req;
    req.method = an::Method::kPowerTrain;
    req.target = {spec.workload(), spec.base.device};
    req.references = {{ref.workload.workload, ref.workload.device}};
    req.seed = static_cast<uint64_t>(spec.seed);
    req.model_dir = options_.model_dir;
    req.nn.cancel = &stopping_;
    an::WorkloadData target;
    target.device = spec.base.device;
    target.workload = spec.workload();
    JS_ASSIGN_OR_RETURN(an::ReferenceModels models, an::powertrain_reference(ref.corpus, req, target));
    how = models.info.loaded ? "loaded" : "trained";
    networks = std::make_shared<const an::ReferenceModels>(std::move(models));
    std::lock_guard lock(mu_);
    ref.networks = networks;
  }
  return Anchor{networks->time->predict(modes), networks->power->predict(modes), "powertrain", how};
}

namespace {

// The plan's observations: its measured modes (the latest measurement of a mode), and the modes whose runs failed
// and were not measured since. kInvalidArgument when a run measured no power.
struct Observed {
  std::vector<an::Observation> measured;
  std::set<ModeSettings> failed;
};
Result<Observed> observed_of(const DuePlan& due) {
  const AdaptivePlanSpec& spec = due.spec;
  Observed out;
  std::map<ModeSettings, an::Observation> by_mode;
  for (const auto& o : due.observations) {
    if (o.status != "done" || !o.figures.minibatch_ms || !(*o.figures.minibatch_ms > 0)) {
      out.failed.insert(o.mode);
      continue;
    }
    if (!o.figures.power_w || !(*o.figures.power_w > 0))
      return invalid_argument(spec.where + ": the target " + spec.workload() + " on " + spec.base.device +
                              " has no measurable power (run " + std::to_string(o.run_id) +
                              " measured none): adaptive profiling needs boards with power rails");
    by_mode[o.mode] = an::Observation{key_of(o.mode), *o.figures.minibatch_ms, *o.figures.power_w * 1000.0};
  }
  for (auto& [m, o] : by_mode) {
    out.failed.erase(m);   // measured on a later attempt
    out.measured.push_back(o);
  }
  return out;
}

// The fit's description (the format in adaptive_planner.hpp) over the plan's candidates; `candidates` are those
// the profiler was given (the plan's without its failed modes), in the plan's order.
void describe_fit(const an::AdaptiveProfiler& profiler, const an::AdaptiveFit& fit,
                  const std::vector<an::Observation>& observed, const std::vector<ModeSettings>& candidates,
                  const DuePlan& due, bj::object& out, bj::object& summary) {
  const AdaptivePlanSpec& spec = due.spec;
  std::vector<double> t = fit.time_ms, w(fit.power_mw.size());
  for (size_t i = 0; i < w.size(); ++i) w[i] = fit.power_mw[i] / 1000.0;
  std::vector<bool> measured(candidates.size(), false);
  for (const auto& o : observed)
    if (auto i = profiler.index_of(o.mode)) {
      measured[*i] = true;
      t[*i] = o.time_ms;
      if (!w.empty()) w[*i] = *o.power_mw / 1000.0;
    }
  bj::array cand, tj, wj, mj;
  std::vector<int64_t> plan_index;   // profiler's candidate -> the plan's
  for (size_t i = 0, k = 0; i < spec.candidates.size(); ++i) {
    cand.push_back(settings_json(spec.candidates[i]));
    const bool fitted = k < candidates.size() && candidates[k] == spec.candidates[i];
    tj.push_back(fitted ? bj::value(t[k]) : bj::value(nullptr));
    wj.push_back(fitted && !w.empty() ? bj::value(w[k]) : bj::value(nullptr));
    mj.push_back(fitted && measured[k]);
    if (fitted) {
      plan_index.push_back(static_cast<int64_t>(i));
      ++k;
    }
  }
  out["candidates"] = std::move(cand);
  out["time_ms"] = std::move(tj);
  out["power_w"] = std::move(wj);
  out["measured"] = std::move(mj);
  summary["time_loo_pct"] = fit.time_loo_pct;
  if (w.empty()) return;
  summary["power_loo_pct"] = fit.power_loo_pct;
  bj::array front;
  std::set<int64_t> now;
  for (size_t i : an::pareto_front(t, w)) {
    front.push_back(plan_index[i]);
    now.insert(plan_index[i]);
  }
  summary["front_size"] = static_cast<int64_t>(front.size());
  if (due.fit && due.fit->contains("front") && due.fit->at("front").is_array()) {   // modes in or out since
    std::set<int64_t> before;
    for (const auto& v : due.fit->at("front").get_array())
      if (v.is_int64()) before.insert(v.get_int64());
    int64_t changed = 0;
    for (int64_t i : now) changed += before.count(i) ? 0 : 1;
    for (int64_t i : before) changed += now.count(i) ? 0 : 1;
    summary["front_changed"] = changed;
  }
  out["front"] = std::move(front);
  bj::array picks;
  for (const auto& p : profiler.choose(fit, observed, profiler.budgets(fit))) {
    bj::object o{{"budget_w", p.budget_w}, {"measured", p.measured}, {"candidate", nullptr}};
    if (p.candidate) {
      o["candidate"] = plan_index[*p.candidate];
      o["time_ms"] = p.time_ms;
      o["power_w"] = p.power_w;
    }
    o["contender"] = nullptr;   // the fastest unprofiled mode that may fit and is predicted faster (BudgetPick)
    if (p.contender) {
      o["contender"] = plan_index[*p.contender];
      o["contender_time_ms"] = p.contender_time_ms;
      o["contender_power_w"] = p.contender_power_w;
    }
    picks.push_back(std::move(o));
  }
  out["budgets"] = std::move(picks);
}

}  // namespace

AdaptiveDecision AdaptivePlanner::decide(const DuePlan& due, size_t boards) {
  // Logged here, on the planner's thread: a stopping controller's I/O loop may not run the decision's completion.
  JS_LOG_INFO << "adaptive plan " << due.plan_id << ": deciding its next round from " << due.observations.size()
              << " runs (" << boards << " " << due.spec.base.device << " boards connected)";
  const auto start = std::chrono::steady_clock::now();
  AdaptiveDecision d = decide_timed(due, boards);
  d.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (d.kind == AdaptiveDecision::Kind::kCancelled)
    JS_LOG_INFO << "adaptive plan " << due.plan_id << ": deciding cut short after " << d.seconds
                << " s (the controller is stopping): nothing recorded or saved; it is decided again when a "
                   "controller starts";
  return d;
}

AdaptiveDecision AdaptivePlanner::decide_timed(const DuePlan& due, size_t boards) {
  AdaptiveDecision d;
  d.plan_id = due.plan_id;
  const AdaptivePlanSpec& spec = due.spec;
  auto fail = [&](const std::string& why) {
    d.kind = AdaptiveDecision::Kind::kFailed;
    d.error = why;
    return d;
  };
  try {
    auto ref = reference(spec);
    if (!ref) return fail(ref.status().message());
    auto observed = observed_of(due);
    if (!observed) return fail(observed.status().message());
    if (static_cast<int64_t>(observed->failed.size()) > spec.budget)
      return fail(spec.where + ": " + std::to_string(observed->failed.size()) +
                  " of the plan's modes failed, more than its budget");
    std::vector<ModeSettings> candidates;   // a mode whose run failed is not tried again
    std::vector<an::ModeKey> keys;
    for (const auto& m : spec.candidates)
      if (!observed->failed.count(m)) {
        candidates.push_back(m);
        keys.push_back(key_of(m));
      }
    auto anchor = anchor_of(**ref, keys, spec);
    if (!anchor && (anchor.status().code() == Code::kCancelled || stopping_)) {
      d.kind = AdaptiveDecision::Kind::kCancelled;
      return d;
    }
    if (!anchor) return fail(spec.where + ": the reference's predictions: " + anchor.status().message());
    an::AdaptiveOptions opt;
    auto strategy = an::parse_adaptive_strategy(spec.strategy);
    if (!strategy) return fail(spec.where + ": " + strategy.status().message());
    opt.strategy = *strategy;
    opt.budget = static_cast<size_t>(std::min<int64_t>(spec.budget, static_cast<int64_t>(candidates.size())));
    opt.power_budgets_w = spec.power_budgets_w;
    opt.seed = static_cast<uint64_t>(spec.seed);
    auto profiler = an::AdaptiveProfiler::create(keys, anchor->time_ms, anchor->power_mw, opt);
    if (!profiler) return fail(spec.where + ": " + profiler.status().message());
    // The space-filling first round whole (its runs go to the boards as they free up), then rounds of the free boards.
    const size_t first_round = std::max(an::kAdaptiveMinBudget, (opt.budget + 1) / 2);
    const auto& measured = observed->measured;
    auto proposal = profiler->propose(measured, measured.size() < first_round ? opt.budget : std::max<size_t>(1, boards));
    if (!proposal) return fail(spec.where + ": " + proposal.status().message());
    bj::object summary{{"observations", static_cast<int64_t>(measured.size())}};
    d.fit["reference"] = bj::object{{"source", (*ref)->source},
                                    {"workload", (*ref)->workload.workload},
                                    {"device", (*ref)->workload.device},
                                    {"anchor", anchor->kind}};
    if (!anchor->network.empty()) d.fit["reference"].as_object()["network"] = anchor->network;
    if (measured.size() >= 2) {
      auto fit = profiler->fit(measured);
      if (!fit) return fail(spec.where + ": " + fit.status().message());
      describe_fit(*profiler, *fit, measured, candidates, due, d.fit, summary);
    }
    d.fit["summary"] = std::move(summary);
    if (proposal->empty()) {
      d.kind = AdaptiveDecision::Kind::kDone;
      return d;
    }
    d.kind = AdaptiveDecision::Kind::kRound;
    d.round = due.rounds;
    for (size_t i : *proposal) d.modes.push_back(candidates[i]);
    return d;
  } catch (const std::exception& e) {   // torch, Eigen or the standard library: the plan fails, the controller stays
    return fail(spec.where + ": adaptive plan " + std::to_string(due.plan_id) + ": " + e.what());
  }
}

}  // namespace jetsweep::controller
