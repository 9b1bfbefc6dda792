// Adaptive campaigns end to end (issue 33): real PostgreSQL, the real controller and simulated AGX Orin and Orin
// Nano agents. The controller profiles each plan in rounds it chooses until the budget, is killed with -9 in the
// middle of a round and restarted, and nothing is lost or repeated: every plan ends with exactly its budget of
// distinct modes, each run once, its rounds contiguous, its fit stored.
#include "support/fleet.hpp"

using namespace jetsweep;
using namespace jetsweep::testing;
using namespace std::chrono_literals;

namespace {

constexpr int kBudget = 8;

// The board simulator's corpus of resnet18/cifar10 on `board`, the plans' reference: every mode (its measured times
// and powers rank the candidates directly), or `modes` of them (a reference network is trained to predict the rest).
std::string write_reference(const Fleet& fleet, const std::string& board, int modes = 0) {
  const std::string path = (fleet.dir() / (board + "-resnet18.csv")).string();
  std::string out, err;
  const int rc = run_command(kBin + "/jetsweep", {"analyze", "synth", "--simulator", "--device", board, "--workloads",
                                                  "resnet18/cifar10", "--modes", std::to_string(modes), "--out", path},
                             &out, &err);
  REQUIRE_MESSAGE(rc == 0, err);
  return path;
}

// Every plan done with exactly its budget of distinct modes, every run done once, its epochs once; its rounds
// contiguous; its fit stored.
void check_plans_exactly_once(const TestDatabase& db) {
  // Every plan done with exactly its budget of distinct modes, every run done once, its epochs once.
  CHECK(db.count("SELECT count(*) FROM adaptive_plans WHERE state = 'done'") == 2);
  CHECK(db.count("SELECT count(*) FROM runs") == 2 * kBudget);
  CHECK(db.count("SELECT count(*) FROM runs WHERE status = 'done' AND adaptive_plan_id IS NOT NULL") == 2 * kBudget);
  CHECK(db.count("SELECT count(*) FROM (SELECT adaptive_plan_id, config->'power_mode' FROM runs "
                 "GROUP BY 1, 2 HAVING count(*) > 1) twice") == 0);
  CHECK(db.count("SELECT count(*) FROM epochs") == 2 * kBudget * 2);
  CHECK(db.count("SELECT count(*) FROM (SELECT run_id, epoch FROM epochs GROUP BY 1, 2) e") == 2 * kBudget * 2);
  // Rounds numbered 0..n-1, each with the runs it recorded; the first the space-filling half of the budget.
  CHECK(db.count("SELECT count(*) FROM adaptive_plans p WHERE p.rounds <> (SELECT count(*) FROM adaptive_rounds r "
                 "WHERE r.plan_id = p.id) OR p.rounds - 1 <> (SELECT max(round) FROM adaptive_rounds r "
                 "WHERE r.plan_id = p.id)") == 0);
  CHECK(db.count("SELECT count(*) FROM adaptive_rounds r WHERE r.runs <> (SELECT count(*) FROM runs x "
                 "WHERE x.adaptive_plan_id = r.plan_id AND x.adaptive_round = r.round)") == 0);
  CHECK(db.count("SELECT count(*) FROM adaptive_rounds WHERE round = 0 AND runs = 6") == 2);
  CHECK(db.count("SELECT count(*) FROM adaptive_rounds WHERE round > 0 AND runs > 2") == 0);   // <= the class's boards
  // The fit stored with the plan: every observation, the predictor over its candidates, the front, the picks.
  CHECK(db.count("SELECT count(*) FROM adaptive_plans WHERE (fit->'summary'->>'observations')::int = " +
                 std::to_string(kBudget) +
                 " AND jsonb_array_length(fit->'front') > 0 AND jsonb_array_length(fit->'budgets') = 12 "
                 "AND jsonb_array_length(fit->'time_ms') = jsonb_array_length(spec->'candidates')") == 2);
}

// The report of campaign `campaign`: the plan's fit, a mode per power budget, measured and predicted apart, and each
// budget's contender wherever the stored fit has one.
void check_report(const std::string& report, const TestDatabase& db, int64_t campaign) {
  CHECK_MESSAGE(report.find("Adaptive plan") != std::string::npos, report);
  CHECK_MESSAGE(report.find("predicted time-power front") != std::string::npos, report);
  auto occurrences = [&](const std::string& what) {
    int64_t n = 0;
    for (size_t at = report.find(what); at != std::string::npos; at = report.find(what, at + 1)) ++n;
    return n;
  };
  auto budgets_where = [&](const std::string& condition) {
    return db.count("SELECT count(*) FROM adaptive_plans p, jsonb_array_elements(p.fit->'budgets') b "
                    "WHERE p.campaign_id = " + std::to_string(campaign) + " AND " + condition);
  };
  // A budget line per chosen mode ends its mode with where its values come from.
  const int64_t chosen = budgets_where("jsonb_typeof(b->'candidate') = 'number'");
  CHECK_MESSAGE(occurrences(" measured\n") + occurrences(" measured; ") + occurrences(" predicted\n") +
                        occurrences(" predicted; ") == chosen, report);
  CHECK(chosen > 0);
  // A budget whose choice has a contender (a mode that may also fit, predicted faster) says so, one line each; a
  // budget with nothing expected to fit names the mode that may.
  const int64_t contended = budgets_where("jsonb_typeof(b->'contender') = 'number' AND jsonb_typeof(b->'candidate') = 'number'");
  const int64_t unchosen_contended =
      budgets_where("jsonb_typeof(b->'contender') = 'number' AND jsonb_typeof(b->'candidate') <> 'number'");
  MESSAGE(contended << " budget lines of the report name a contender, " << unchosen_contended << " without a choice");
  CHECK_MESSAGE(occurrences("; may fit and predicted ") == contended, report);
  CHECK_MESSAGE(occurrences(" may fit\n") == unchosen_contended, report);
  CHECK(contended > 0);   // 9 or 10, and 2 without a choice, in runs on 2026-12-05: the lines were checked
}

}  // namespace

TEST_CASE("adaptive campaign: simulated AGX Orin and Orin Nano fleets profiled in rounds; a controller killed mid-round "
          "loses and repeats nothing") {
  TestDatabase db;
  Fleet fleet(db);
  const std::string orin_ref = write_reference(fleet, "agx-orin");
  const std::string nano_ref = write_reference(fleet, "orin-nano");
  for (int i = 1; i <= 2; ++i) fleet.add_agent("orin-" + std::to_string(i), {"--sim", "agx-orin/" + std::to_string(i)});
  fleet.add_agent("nano-1", {"--sim", "orin-nano/1"});
  REQUIRE_MESSAGE(wait_until(60s, [&] { return fleet.agents_connected(3); }), fleet.logs());

  // A plan per board class, each with its class's reference (a transfer across classes would need cross_board),
  // anchored on the reference's measured values: its networks (the default) would train on all 18,096 AGX Orin modes
  // (tests/controller/test_adaptive_planner.cpp holds the default to a smaller reference).
  const std::string yaml =
      "campaign: adaptive-fleet\nmatrix:\n  model: lenet5\n  dataset: fashion-mnist\n  batch_size: 16\n  workers: 2\n"
      "  epochs: 2\n  max_minibatches: 30\n  sample_hz: 20\n  device: [agx-orin, orin-nano]\n"
      "  power_mode: {generate: adaptive, budget: " + std::to_string(kBudget) +
      ", every: 3, seed: 5, anchor: measured, reference: REF}\n";
  auto with_ref = [&](const std::string& device, const std::string& ref) {
    std::string y = yaml;
    y.replace(y.find("[agx-orin, orin-nano]"), 21, device);
    y.replace(y.find("REF"), 3, "'" + ref + "'");
    return y;
  };
  const auto orin_file = fleet.dir() / "orin.yaml";
  const auto nano_file = fleet.dir() / "nano.yaml";
  write_file(orin_file, with_ref("agx-orin", orin_ref));
  write_file(nano_file, with_ref("orin-nano", nano_ref));

  // The Orin's reference for the Orin Nano's plan, without cross_board: refused at submission, naming the place.
  const auto wrong_file = fleet.dir() / "wrong.yaml";
  write_file(wrong_file, with_ref("orin-nano", orin_ref));
  std::string out, err;
  CHECK(run_command(kBin + "/jetsweep", {"--controller", fleet.url(), "submit", wrong_file.string()}, &out, &err) == 2);
  CHECK_MESSAGE(err.find("wrong.yaml:11:15: 'power_mode.reference' " + orin_ref +
                         ": has no workload measured on orin-nano (a reference of another board class needs "
                         "'cross_board: true')") != std::string::npos,
                err);
  CHECK(db.count("SELECT count(*) FROM campaigns") == 0);

  const int64_t orin = submit(fleet, orin_file);
  const int64_t nano = submit(fleet, nano_file);
  // Mid-round: the first rounds under way, some of their runs done and others open.
  REQUIRE_MESSAGE(wait_until(300s, [&] {
                    return db.count("SELECT count(*) FROM runs WHERE status = 'done'") >= 3 &&
                           db.count("SELECT count(*) FROM runs WHERE status IN ('assigned', 'running')") > 0;
                  }),
                  fleet.logs());
  fleet.controller().signal(SIGKILL);
  fleet.controller().wait(10s);
  fleet.start_controller(std::to_string(fleet.port()), {});
  REQUIRE_MESSAGE(wait_until(600s, [&] { return fleet.finished(orin) && fleet.finished(nano); }), fleet.logs());

  check_plans_exactly_once(db);
  const std::string status = fleet.cli({"status", std::to_string(orin)});
  CHECK_MESSAGE(status.find("adaptive plan") != std::string::npos, status);
  CHECK_MESSAGE(status.find("(agx-orin, lenet5/fashion-mnist): done") != std::string::npos, status);
  CHECK_MESSAGE(status.find(std::to_string(kBudget) + "/" + std::to_string(kBudget) + " modes profiled") !=
                    std::string::npos,
                status);
  CHECK_MESSAGE(status.find("predicted front") != std::string::npos, status);
  // The round history: one line per round stored, the first decided from nothing, a later one from a fit.
  const int64_t rounds = db.count("SELECT count(*) FROM adaptive_rounds r JOIN adaptive_plans p ON p.id = r.plan_id "
                                  "WHERE p.campaign_id = " + std::to_string(orin));
  size_t lines = 0;
  for (size_t at = status.find("\n    round "); at != std::string::npos; at = status.find("\n    round ", at + 1)) ++lines;
  CHECK_MESSAGE(static_cast<int64_t>(lines) == rounds, status);
  CHECK_MESSAGE(status.find("round 0: ") != std::string::npos, status);
  CHECK_MESSAGE(status.find("decided from 0 profiled") != std::string::npos, status);
  CHECK_MESSAGE(status.find("; leave-one-out time ") != std::string::npos, status);

  check_report(fleet.cli({"report", std::to_string(orin)}), db, orin);

  // `analyze optimize --method adaptive` chooses from the campaign's fit: the profiled modes measured, the others
  // predicted, every candidate of the plan.
  out.clear();
  err.clear();
  REQUIRE_MESSAGE(run_command(kBin + "/jetsweep", {"analyze", "optimize", "--db", db.dsn(), "--campaign",
                                                   std::to_string(orin), "--workload", "lenet5/fashion-mnist",
                                                   "--method", "adaptive", "--power-budget-w", "25", "--json"},
                              &out, &err) == 0,
                  err);
  const bj::object opt = bj::parse(out).as_object();
  CHECK(opt.at("adaptive_plan").as_int64() > 0);
  CHECK(opt.at("measured_candidates").as_int64() == kBudget);
  CHECK(opt.at("candidates").to_number<int64_t>() ==
        db.count("SELECT jsonb_array_length(spec->'candidates') FROM adaptive_plans WHERE device_class = 'agx-orin'"));
  REQUIRE(opt.at("chosen").is_object());
  CHECK(opt.at("chosen").as_object().contains("measured"));
  // Without --campaign the stored fit cannot be found: the flag is named.
  CHECK(run_command(kBin + "/jetsweep", {"analyze", "optimize", "--db", db.dsn(), "--workload", "lenet5/fashion-mnist",
                                         "--method", "adaptive", "--power-budget-w", "25"},
                    &out, &err) == 2);
  CHECK_MESSAGE(err.find("--method: 'adaptive' uses the predictor an adaptive campaign fitted") != std::string::npos, err);
}

TEST_CASE("adaptive campaign: a controller stopped (SIGTERM) while it decides a round saves and records nothing; the "
          "next controller decides that round") {
  TestDatabase db;
  TempDir models;   // --model-dir: where a finished reference network is saved
  const std::vector<std::string> extra = {"--model-dir", models.str()};
  Fleet fleet(db, extra);
  // 1,500 of the simulator's AGX Orin modes as the reference: the decision trains a network on them for many epochs
  // (the stop lands while it does) to predict the other candidates. No boards are needed: the first round is
  // decided before any run.
  const std::string ref = write_reference(fleet, "agx-orin", 1500);
  const auto file = fleet.dir() / "plan.yaml";
  write_file(file, "campaign: adaptive-stop\nmatrix:\n  model: lenet5\n  dataset: fashion-mnist\n  batch_size: 16\n"
                   "  epochs: 2\n  max_minibatches: 10\n  device: agx-orin\n"
                   "  power_mode: {generate: adaptive, budget: " + std::to_string(kBudget) + ", seed: 5, reference: '" +
                       ref + "'}\n");
  submit(fleet, file);
  REQUIRE_MESSAGE(wait_until(120s, [&] {
                    return fleet.controller().log().find(": deciding its next round from 0 runs") != std::string::npos;
                  }),
                  fleet.controller().log());
  fleet.controller().signal(SIGTERM);
  CHECK(fleet.controller().wait(120s) == 0);
  const std::string log = fleet.controller().log();
  CHECK_MESSAGE(log.find(": deciding cut short after ") != std::string::npos, log);
  CHECK(db.count("SELECT count(*) FROM adaptive_rounds") == 0);
  CHECK(db.count("SELECT count(*) FROM runs") == 0);
  CHECK(db.count("SELECT count(*) FROM adaptive_plans WHERE state = 'profiling'") == 1);
  CHECK_MESSAGE(std::filesystem::is_empty(models.path()), "a network half-trained was saved");

  // The next controller decides the first round from scratch, and this time keeps the reference networks.
  fleet.start_controller(std::to_string(fleet.port()), extra);
  REQUIRE_MESSAGE(wait_until(600s, [&] { return db.count("SELECT count(*) FROM adaptive_rounds") == 1; }),
                  fleet.controller().log());
  CHECK(db.count("SELECT count(*) FROM adaptive_rounds WHERE round = 0 AND runs > 0") == 1);
  CHECK(db.count("SELECT count(*) FROM runs") == db.count("SELECT runs FROM adaptive_rounds WHERE round = 0"));
  CHECK(std::distance(std::filesystem::directory_iterator(models.path()), std::filesystem::directory_iterator()) == 2);
}
