// Controller: the rounds of adaptive-profiling plans (issue 33). A pass reads the plans due (DbWorker), has the
// planner decide each (its thread), and records each decision (DbWorker) in one transaction: a round's runs are
// created with the round, so a controller that restarts at any point neither loses nor repeats one (a round
// recorded already is left as it is; a plan whose round was not recorded is due again and decided again).
#include <cstdio>

#include "common/log.hpp"
#include "controller/agent_session.hpp"
#include "controller/controller.hpp"
#include "controller/io_thread.hpp"

namespace jetsweep::controller {
namespace bj = boost::json;

size_t Controller::boards_of_class(const std::string& device_class) const {
  size_t n = 0;
  for (const auto& [id, weak] : agents_)
    if (auto s = weak.lock(); s && s->device_class() == device_class) ++n;
  return n;
}

void Controller::plan_adaptive() {
  JS_CHECK_IO_THREAD(ioc_);
  if (stopped_ || planning_) return;
  planning_ = true;
  auto self = shared_from_this();
  db_.post<Result<std::vector<DuePlan>>>(
      executor(), [](Store& s) { return s.adaptive_plans_due(); },
      [self](Result<std::vector<DuePlan>> due) {
        if (!due) JS_LOG_WARN << "reading the adaptive plans due failed: " << due.status().to_string();
        if (!due || due->empty() || self->stopped_) {
          self->planning_ = false;
          return;
        }
        auto left = std::make_shared<size_t>(due->size());
        for (auto& plan : *due) {
          const size_t boards = self->boards_of_class(plan.spec.base.device);
          const int64_t id = plan.plan_id;
          const bool queued = self->planner_.plan(self->executor(), std::move(plan), boards,
                                                  [self, left](AdaptiveDecision d) { self->apply_decision(std::move(d), left); });
          if (!queued) {
            JS_LOG_WARN << "adaptive plan " << id << ": the planner is busy; its round is decided on a later sweep";
            self->end_planning_pass(left);
          }
        }
      });
}

void Controller::end_planning_pass(std::shared_ptr<size_t> left) {
  JS_CHECK_IO_THREAD(ioc_);
  if (--*left > 0) return;
  planning_ = false;
  queue_changed();
  dispatch_all();
}

void Controller::apply_decision(AdaptiveDecision d, std::shared_ptr<size_t> left) {
  JS_CHECK_IO_THREAD(ioc_);
  auto self = shared_from_this();
  const int64_t id = d.plan_id;
  if (d.kind == AdaptiveDecision::Kind::kCancelled) {   // the planner stopped (and logged it): due again at start
    end_planning_pass(std::move(left));
    return;
  }
  std::string what;
  if (d.kind == AdaptiveDecision::Kind::kRound)
    what = "round " + std::to_string(d.round) + ": " + std::to_string(d.modes.size()) + " modes";
  else if (d.kind == AdaptiveDecision::Kind::kDone)
    what = "done: its budget is spent";
  else
    what = "failed: " + d.error;
  if (const auto* s = d.fit.if_contains("summary"); s && s->is_object())
    what += " (fit " + bj::serialize(*s) + ")";
  char took[48];
  std::snprintf(took, sizeof took, "; decided in %.3f s", d.seconds);
  what += took;
  db_.post<Status>(
      executor(),
      [d = std::move(d)](Store& s) -> Status {
        if (d.kind == AdaptiveDecision::Kind::kRound) return s.add_adaptive_round(d.plan_id, d.round, d.modes, d.fit).status();
        return s.finish_adaptive_plan(d.plan_id, d.kind == AdaptiveDecision::Kind::kDone ? "done" : "failed", d.fit,
                                      d.error);
      },
      [self, left, id, what](Status st) {
        if (st.is_ok()) JS_LOG_INFO << "adaptive plan " << id << ": " << what;
        else JS_LOG_WARN << "adaptive plan " << id << ": recording " << what << " failed: " << st.to_string();
        self->end_planning_pass(left);
      });
}

}  // namespace jetsweep::controller
