// AdaptivePlanner (issue 33): a plan's rounds decided from its reference and its observations, as the controller
// asks for them; the reference checked at submission with errors that name the campaign file's place. The target is
// the board simulator's model (analysis/simulator_corpus.hpp), revealed one round at a time.
#include <doctest/doctest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <set>

#include "analysis/csv_corpus.hpp"
#include "analysis/simulator_corpus.hpp"
#include "common/campaign.hpp"
#include "controller/adaptive_planner.hpp"
#include "support/temp_dir.hpp"

using namespace jetsweep;
using namespace jetsweep::controller;

namespace {

// The simulator's corpus of `workloads` on `board` written as a CSV corpus.
std::string write_corpus(const testing::TempDir& dir, const std::string& name, const std::string& board,
                         const std::vector<std::string>& workloads, size_t max_modes = 0) {
  analysis::SimulatorCorpusOptions o;
  o.board_class = board;
  o.workloads = workloads;
  o.max_modes = max_modes;
  auto corpus = analysis::simulator_corpus(o);
  REQUIRE_MESSAGE(corpus.is_ok(), corpus.status().to_string());
  const std::string path = (dir / name).string();
  std::ofstream out(path);
  analysis::write_corpus_csv(out, *corpus);
  return path;
}

AdaptivePlanSpec plan_spec(const std::string& reference, const std::string& board, const std::string& extra = "") {
  const std::string yaml = "campaign: a\nmatrix:\n  device: " + board +
                           "\n  model: lenet5\n  dataset: fashion-mnist\n  epochs: 2\n"
                           "  power_mode: {generate: adaptive, budget: 9, every: 3, seed: 4, reference: '" +
                           reference + "'" + extra + "}\n";
  auto c = parse_campaign(yaml, "plan.yaml");
  REQUIRE_MESSAGE(c.is_ok(), c.status().to_string());
  REQUIRE(c->adaptive_plans.size() == 1);
  return c->adaptive_plans[0];
}

// The simulator's figures for lenet5/fashion-mnist, by mode: what the plan's runs would measure.
std::map<ModeSettings, RunFigures> truth(const std::string& board) {
  analysis::SimulatorCorpusOptions o;
  o.board_class = board;
  o.workloads = {"lenet5/fashion-mnist"};
  auto corpus = analysis::simulator_corpus(o);
  REQUIRE(corpus.is_ok());
  std::map<ModeSettings, RunFigures> out;
  for (const auto& r : corpus->rows)
    out[{r.mode.cores, std::llround(r.mode.cpu_mhz * 1000), std::llround(r.mode.gpu_mhz * 1e6),
         std::llround(r.mode.emc_mhz * 1e6)}] = {r.minibatch_ms, *r.power_mw / 1000.0};
  return out;
}

}  // namespace

TEST_CASE("adaptive planner: rounds until the budget, each mode once, deterministic, a failed mode not retried") {
  testing::TempDir dir;
  const std::string ref = write_corpus(dir, "ref.csv", "agx-orin", {"resnet18/cifar10"});
  AdaptivePlanner planner({});
  const AdaptivePlanSpec spec = plan_spec(ref, "agx-orin", ", anchor: measured");
  REQUIRE(planner.check(spec).is_ok());
  const auto figures = truth("agx-orin");
  const std::set<ModeSettings> candidates(spec.candidates.begin(), spec.candidates.end());

  DuePlan due{1, 1, 0, spec, {}, std::nullopt};
  std::set<ModeSettings> tried;
  int64_t run_id = 0;
  bool failed_one = false;
  for (int pass = 0; pass < 20; ++pass) {
    const AdaptiveDecision d = planner.decide(due, 2);
    CHECK(planner.decide(due, 2).modes == d.modes);   // deterministic for the plan's seed
    REQUIRE_MESSAGE(d.kind != AdaptiveDecision::Kind::kFailed, d.error);
    REQUIRE(d.fit.contains("summary"));
    if (d.kind == AdaptiveDecision::Kind::kDone) break;
    CHECK(d.round == due.rounds);
    if (due.rounds == 0) CHECK(d.modes.size() == 6);   // the space-filling first round: max(6, ceil(9 / 2))
    else CHECK(d.modes.size() <= 2);                    // then rounds sized to the two free boards
    for (const auto& m : d.modes) {
      CHECK(candidates.count(m) == 1);
      CHECK_MESSAGE(tried.insert(m).second, "a mode proposed twice");
      PlanObservation o{m, ++run_id, "done", figures.at(m)};
      if (!failed_one && due.rounds == 1) {   // one run of round 1 fails: its mode is not proposed again
        o.status = "failed";
        o.figures = {};
        failed_one = true;
      }
      due.observations.push_back(o);
    }
    due.fit = d.fit;
    ++due.rounds;
  }
  REQUIRE(failed_one);
  const AdaptiveDecision last = planner.decide(due, 2);
  REQUIRE(last.kind == AdaptiveDecision::Kind::kDone);
  CHECK(tried.size() == 10);   // the budget of 9 measured modes, and the one that failed
  const auto& summary = last.fit.at("summary").as_object();
  CHECK(summary.at("observations").as_int64() == 9);
  CHECK(summary.contains("time_loo_pct"));
  CHECK(summary.contains("front_changed"));
  // The predictor over every candidate, measured points marked, and a decision per budget.
  REQUIRE(last.fit.at("time_ms").as_array().size() == spec.candidates.size());
  int64_t measured = 0;
  for (const auto& m : last.fit.at("measured").as_array()) measured += m.as_bool() ? 1 : 0;
  CHECK(measured == 9);
  CHECK(last.fit.at("front").as_array().size() == static_cast<size_t>(summary.at("front_size").as_int64()));
  CHECK(last.fit.at("budgets").as_array().size() == 12);
  // Each budget names its contender (null or an unprofiled candidate predicted faster than the choice).
  for (const auto& v : last.fit.at("budgets").as_array()) {
    const auto& b = v.as_object();
    REQUIRE(b.contains("contender"));
    if (b.at("contender").is_null()) continue;
    const size_t k = b.at("contender").to_number<size_t>();
    REQUIRE(k < spec.candidates.size());
    CHECK_FALSE(last.fit.at("measured").as_array()[k].as_bool());
    CHECK(b.at("contender_time_ms").to_number<double>() == last.fit.at("time_ms").as_array()[k].to_number<double>());
    if (!b.at("candidate").is_null()) {
      CHECK(b.at("candidate") != b.at("contender"));
      CHECK(b.at("contender_time_ms").to_number<double>() < b.at("time_ms").to_number<double>());
    }
  }
  CHECK(last.fit.at("reference").at("anchor").as_string() == "measured");
}

TEST_CASE("adaptive planner: a target without power, a reference of another class, a missing one: errors name the place") {
  testing::TempDir dir;
  const std::string orin = write_corpus(dir, "orin.csv", "agx-orin", {"resnet18/cifar10"});
  AdaptivePlanner planner({});
  // No measurable power on the target's board.
  AdaptivePlanSpec spec = plan_spec(orin, "agx-orin");
  DuePlan due{7, 1, 1, spec, {}, std::nullopt};
  due.observations.push_back({spec.candidates[0], 11, "done", {40.0, std::nullopt}});
  const AdaptiveDecision d = planner.decide(due, 1);
  CHECK(d.kind == AdaptiveDecision::Kind::kFailed);
  CHECK_MESSAGE(d.error.find("plan.yaml:7:15: the target lenet5/fashion-mnist on agx-orin has no measurable power "
                             "(run 11 measured none)") == 0,
                d.error);
  // A reference measured on another board class, unless the transfer is flagged.
  const AdaptivePlanSpec nano = plan_spec(orin, "orin-nano");
  const Status other = planner.check(nano);
  CHECK(other.code() == Code::kInvalidArgument);
  CHECK_MESSAGE(other.message().find("plan.yaml:7:15: 'power_mode.reference' " + orin + ": has no workload measured on "
                                     "orin-nano (a reference of another board class needs 'cross_board: true')") == 0,
                other.message());
  const AdaptivePlanSpec named = plan_spec(orin, "orin-nano", ", reference_workload: resnet18/cifar10@agx-orin");
  const Status named_other = planner.check(named);
  CHECK(named_other.code() == Code::kInvalidArgument);
  CHECK_MESSAGE(named_other.message().find("'resnet18/cifar10' was measured on agx-orin, the plan runs on orin-nano; a "
                                           "transfer across board classes needs 'cross_board: true'") !=
                    std::string::npos,
                named_other.message());
  // A missing CSV; a campaign reference without a database.
  CHECK(planner.check(plan_spec((dir / "none.csv").string(), "agx-orin")).message().find("no such file") !=
        std::string::npos);
  CHECK(planner.check(plan_spec("some-campaign", "agx-orin")).message().find("campaign references need") !=
        std::string::npos);
}

TEST_CASE("adaptive planner: across board classes with cross_board, the reference network anchors the plan") {
  testing::TempDir dir;
  // 600 of the reference's modes: its network trains in seconds.
  const std::string orin = write_corpus(dir, "orin.csv", "agx-orin", {"resnet18/cifar10"}, 600);
  AdaptivePlanner planner({"", (dir / "models").string()});
  const AdaptivePlanSpec spec = plan_spec(orin, "orin-nano", ", cross_board: true");
  REQUIRE(planner.check(spec).is_ok());
  DuePlan due{3, 1, 0, spec, {}, std::nullopt};
  const AdaptiveDecision first = planner.decide(due, 1);
  REQUIRE_MESSAGE(first.kind == AdaptiveDecision::Kind::kRound, first.error);
  CHECK(first.modes.size() == 6);
  CHECK(first.fit.at("reference").at("anchor").as_string() == "powertrain");
  CHECK(first.fit.at("reference").at("device").as_string() == "agx-orin");
}

TEST_CASE("adaptive planner: the reference's networks anchor a plan by default, trained once for all its rounds; "
          "'anchor: measured' takes the reference's values") {
  testing::TempDir dir;
  // The reference measured exactly the plan's candidates (every third AGX Orin mode): both anchors are possible.
  const AdaptivePlanSpec probe = plan_spec("unused.csv", "agx-orin");
  const std::set<ModeSettings> wanted(probe.candidates.begin(), probe.candidates.end());
  analysis::SimulatorCorpusOptions o;
  o.board_class = "agx-orin";
  o.workloads = {"resnet18/cifar10"};
  auto corpus = analysis::simulator_corpus(o);
  REQUIRE(corpus.is_ok());
  std::erase_if(corpus->rows, [&](const analysis::ModeRecord& r) {
    return !wanted.count({r.mode.cores, std::llround(r.mode.cpu_mhz * 1000), std::llround(r.mode.gpu_mhz * 1e6),
                          std::llround(r.mode.emc_mhz * 1e6)});
  });
  REQUIRE(corpus->rows.size() == wanted.size());
  const std::string ref = (dir / "ref.csv").string();
  {
    std::ofstream out(ref);
    analysis::write_corpus_csv(out, *corpus);
  }
  AdaptivePlanner planner({});
  const auto figures = truth("agx-orin");
  DuePlan due{5, 1, 0, plan_spec(ref, "agx-orin"), {}, std::nullopt};
  const AdaptiveDecision first = planner.decide(due, 2);
  REQUIRE_MESSAGE(first.kind == AdaptiveDecision::Kind::kRound, first.error);
  CHECK(first.fit.at("reference").at("anchor").as_string() == "powertrain");
  CHECK(first.fit.at("reference").at("network").as_string() == "trained");
  int64_t run_id = 0;
  for (const auto& m : first.modes) due.observations.push_back({m, ++run_id, "done", figures.at(m)});
  due.rounds = 1;
  const AdaptiveDecision second = planner.decide(due, 2);   // the next round: the networks are not trained again
  REQUIRE_MESSAGE(second.kind == AdaptiveDecision::Kind::kRound, second.error);
  CHECK(second.fit.at("reference").at("network").as_string() == "kept");
  CHECK(second.fit.at("time_ms").as_array().size() == due.spec.candidates.size());

  due.spec = plan_spec(ref, "agx-orin", ", anchor: measured");
  const AdaptiveDecision measured = planner.decide(due, 2);
  REQUIRE_MESSAGE(measured.kind == AdaptiveDecision::Kind::kRound, measured.error);
  CHECK(measured.fit.at("reference").at("anchor").as_string() == "measured");
  CHECK_FALSE(measured.fit.at("reference").as_object().contains("network"));
  CHECK(measured.fit.at("time_ms") != second.fit.at("time_ms"));   // another predictor from the same observations
}

TEST_CASE("adaptive planner: stopped while a reference network trains, the decision is cancelled and nothing kept") {
  testing::TempDir dir;
  const std::string orin = write_corpus(dir, "orin.csv", "agx-orin", {"resnet18/cifar10"}, 600);
  const std::string models = (dir / "models").string();
  const AdaptivePlanSpec spec = plan_spec(orin, "orin-nano", ", cross_board: true");
  DuePlan due{3, 1, 0, spec, {}, std::nullopt};
  {
    AdaptivePlanner planner({"", models});
    REQUIRE(planner.check(spec).is_ok());
    planner.start();
    planner.stop();   // what the controller's stop does; the training below then ends at its first epoch
    const AdaptiveDecision d = planner.decide(due, 1);
    CHECK(d.kind == AdaptiveDecision::Kind::kCancelled);   // not kFailed: the plan must stay due
    CHECK(d.error.empty());
    CHECK(d.modes.empty());
    size_t kept = 0;   // no half-trained reference network saved for the next start to reuse
    if (std::filesystem::exists(models))
      for (const auto& e : std::filesystem::directory_iterator(models)) kept += e.path().extension() == ".pt";
    CHECK(kept == 0);
  }
  AdaptivePlanner next({"", models});   // the next controller decides the same plan from scratch
  next.start();
  const AdaptiveDecision d = next.decide(due, 1);
  REQUIRE_MESSAGE(d.kind == AdaptiveDecision::Kind::kRound, d.error);
  CHECK(d.modes.size() == 6);
  next.stop();
}
