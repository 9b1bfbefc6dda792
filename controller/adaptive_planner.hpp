// AdaptivePlanner: chooses the rounds of a campaign's adaptive-profiling plans (issue 33; analysis/adaptive.hpp).
// Owns one worker thread, where references are loaded and every fit runs (never on the I/O thread), and the
// references it loaded (by reference, workload and board class). plan() and check() may be called from any
// thread: plan() queues the decision on the worker and posts its completion to the caller's executor; check() runs
// on the calling thread (the CampaignWorker's, at submission). start()/stop() from the thread that owns it.
//
// A plan's fit, as stored with each round and with the plan (adaptive_plans.fit, adaptive_rounds.fit; JSON):
//   {"summary": {"observations", "time_loo_pct", "power_loo_pct", "front_size", "front_changed"},
//    "reference": {"source", "workload", "device", "anchor": "measured"|"powertrain",
//                  "network": "trained"|"loaded"|"kept" (powertrain: by this decision, from --model-dir, earlier)},
//    "candidates": [[cores, cpu_khz, gpu_hz, emc_hz], ...],              (the plan's, in its order)
//    "time_ms": [...], "power_w": [...],                                  (per candidate: measured or predicted;
//    "measured": [bool, ...],                                              null for a mode whose run failed)
//    "front": [candidate index, ...],                                     (time-power Pareto front, fastest first)
//    "budgets": [{"budget_w", "candidate" (index or null), "measured", "time_ms", "power_w",
//                 "contender" (index or null: an unprofiled mode that may fit, predicted faster than the choice),
//                 "contender_time_ms", "contender_power_w" (its predictions, with a contender)}, ...]}
// "summary" alone before two modes are profiled.
#pragma once

#include <boost/asio.hpp>
#include <boost/json.hpp>
#include <atomic>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "common/adaptive_plan.hpp"
#include "controller/campaign_worker.hpp"
#include "controller/store.hpp"

namespace jetsweep::analysis {
struct ModeKey;
}

namespace jetsweep::controller {

struct AdaptiveDecision {
  // kCancelled: the planner stopped mid-decision (a reference network's training is cut short); nothing is
  // recorded, and the plan is due again when a controller next starts.
  enum class Kind { kRound, kDone, kFailed, kCancelled };
  int64_t plan_id = 0;
  Kind kind = Kind::kRound;
  int64_t round = 0;                  // kRound: the round these modes are
  std::vector<ModeSettings> modes;    // kRound: the modes to profile next
  boost::json::object fit;            // the predictor the decision was made from (kRound, kDone)
  std::string error;                  // kFailed: why, naming the campaign file's place
  double seconds = 0;                 // the decision's time on the planner's thread (reference training included)
};

class AdaptivePlanner {
 public:
  struct Options {
    std::string dsn;         // PostgreSQL, for references that name a campaign; "" = CSV references only
    std::string model_dir;   // where reference networks are kept between fits; "" = not kept
  };
  explicit AdaptivePlanner(Options options);
  ~AdaptivePlanner();
  void start();
  // Cancels the decision in progress (a reference network in training stops at its next epoch: seconds, not the
  // minute a whole training takes), drops those waiting, and joins the worker.
  void stop();

  // Queues the decision for `due` (its next round for `boards` free boards, or its end) on the worker; then
  // `done(decision)` is posted to `ex`. False when the worker's queue is full (the caller tries again later).
  [[nodiscard]] bool plan(boost::asio::any_io_executor ex, DuePlan due, size_t boards,
                          std::function<void(AdaptiveDecision)> done);
  // The decision itself (what plan() runs on the worker).
  AdaptiveDecision decide(const DuePlan& due, size_t boards);
  // Whether the plan's reference can anchor it: found, of the plan's board class (or cross_board), with
  // measured power. kInvalidArgument naming the campaign file's place (spec.where). Loads and keeps it.
  Status check(const AdaptivePlanSpec& spec);

 private:
  struct Reference;   // a loaded reference workload (adaptive_planner.cpp)
  Result<std::shared_ptr<const Reference>> reference(const AdaptivePlanSpec& spec);
  struct Anchor;      // what a plan's predictor corrects, per candidate (adaptive_planner.cpp)
  // The spec's anchor over `modes`: the reference's networks (trained once, then kept with the reference) or its
  // measured values. kCancelled when stop() cuts a training short.
  Result<Anchor> anchor_of(const Reference& ref, const std::vector<analysis::ModeKey>& modes,
                           const AdaptivePlanSpec& spec);
  AdaptiveDecision decide_timed(const DuePlan& due, size_t boards);   // decide() without its clock

  const Options options_;
  CampaignWorker worker_;
  std::atomic<bool> stopping_{false};   // set by stop(); read by the worker's trainings (NnOptions::cancel)
  std::mutex mu_;   // guards references_ and each Reference's networks
  std::map<std::string, std::shared_ptr<const Reference>> references_;
};

}  // namespace jetsweep::controller
