// The campaign language's adaptive-profiling plans (power_mode: {generate: adaptive}; common/adaptive_plan.hpp):
// what a plan holds, its JSON as the stores keep it, and the errors that name the file's place.
#include <doctest/doctest.h>

#include "common/campaign.hpp"

using namespace jetsweep;
namespace bj = boost::json;

namespace {
Campaign parsed_plans(const std::string& yaml) {
  auto c = parse_campaign(yaml, "a.yaml");
  REQUIRE_MESSAGE(c.is_ok(), c.status().to_string());
  return c.value();
}
std::string plan_error(const std::string& yaml) {
  auto c = parse_campaign(yaml, "bad.yaml");
  REQUIRE_FALSE(c.is_ok());
  CHECK(c.status().code() == Code::kInvalidArgument);
  return c.status().message();
}
}  // namespace

TEST_CASE("adaptive plans: one per combination, the grid its candidates (exclusions applied), its keys checked") {
  const std::string head = "campaign: a\nmatrix:\n  dataset: mnist\n  epochs: 3\n  device: agx-xavier\n";
  auto c = parsed_plans(head + "  model: [lenet5, resnet18]\n  batch_size: 32\n"
                         "  power_mode: {generate: adaptive, budget: 12, reference: ref.csv, reference_workload: mobilenet_v3/cifar10,"
                         " every: 2, cores: [4, 8], seed: 9, strategy: random, anchor: measured, power_budgets_w: [10, 20.5], "
                         "cross_board: true}\n"
                         "exclude:\n  - {model: resnet18, power_mode: {cores: 4, cpu_khz: 115200, gpu_hz: 114750000, "
                         "emc_hz: 204000000}}\n");
  CHECK(c.runs.empty());
  REQUIRE(c.adaptive_plans.size() == 2);
  const AdaptivePlanSpec& lenet = c.adaptive_plans[0];
  CHECK(lenet.base.model == "lenet5");
  CHECK(lenet.base.batch_size == 32);
  CHECK_FALSE(lenet.base.has_power_mode());
  CHECK(lenet.candidates.size() == 2u * 15u * 7u * 5u);   // the grid of `every: 2, cores: [4, 8]`
  CHECK(lenet.candidates[0] == ModeSettings{4, 115200, 114750000, 204000000});
  REQUIRE(c.adaptive_plans[1].candidates.size() == lenet.candidates.size() - 1);   // that mode excluded for resnet18
  CHECK(c.adaptive_plans[1].candidates[0] == lenet.candidates[1]);
  CHECK(lenet.budget == 12);
  CHECK(lenet.reference == "ref.csv");
  CHECK(lenet.reference_workload == "mobilenet_v3/cifar10");
  CHECK(lenet.strategy == "random");
  CHECK(lenet.anchor == "measured");
  CHECK(lenet.seed == 9);
  CHECK(lenet.cross_board);
  CHECK(lenet.power_budgets_w == std::vector<double>{10, 20.5});
  CHECK(lenet.where == "a.yaml:8:15");
  CHECK(lenet.workload() == "lenet5/mnist");
  // The spec's JSON (as the stores keep it) round-trips.
  auto back = adaptive_plan_from_json(to_json(lenet), "plan");
  REQUIRE_MESSAGE(back.is_ok(), back.status().to_string());
  CHECK(back->base == lenet.base);
  CHECK(back->candidates == lenet.candidates);
  CHECK(bj::serialize(to_json(*back)) == bj::serialize(to_json(lenet)));
  CHECK(back->anchor == "measured");
  // The reference's networks anchor a plan unless it says otherwise; a plan stored before the key existed reads as it
  // was planned (its reference's measured values where it measured every candidate); a stored value is checked.
  const AdaptivePlanSpec plain =
      parsed_plans(head + "  model: lenet5\n  power_mode: {generate: adaptive, budget: 8, reference: r.csv}\n")
          .adaptive_plans.at(0);
  CHECK(plain.anchor == "powertrain");
  CHECK(adaptive_plan_from_json(to_json(plain), "plan")->anchor == "powertrain");
  bj::object stored = to_json(plain);
  stored.erase("anchor");
  CHECK(adaptive_plan_from_json(stored, "plan")->anchor == "measured");
  stored["anchor"] = "nearest";
  CHECK(adaptive_plan_from_json(stored, "adaptive plan 4").status().message() ==
        "adaptive plan 4 field 'anchor': 'nearest' is not powertrain or measured");

  const std::string one = head + "  model: lenet5\n";
  CHECK(plan_error(one + "  power_mode: {generate: adaptive, budget: 5, reference: r.csv}\n") ==
        "bad.yaml:7:44: 'power_mode.budget' 5 is below the adaptive strategy's minimum of 6 modes (its first round must "
        "fit the model)");
  CHECK(plan_error(one + "  power_mode: {generate: adaptive, reference: r.csv}\n")
            .find("bad.yaml:7:15: 'power_mode: {generate: adaptive}' needs 'budget'") == 0);
  CHECK(plan_error(one + "  power_mode: {generate: adaptive, budget: 8}\n")
            .find("bad.yaml:7:15: 'power_mode: {generate: adaptive}' needs 'reference'") == 0);
  CHECK(plan_error(one + "  power_mode: {generate: adaptive, budget: 8, reference: r.csv, strategy: greedy}\n") ==
        "bad.yaml:7:75: 'power_mode.strategy' must be 'front' or 'random', not 'greedy'");
  CHECK(plan_error(one + "  power_mode: {generate: adaptive, budget: 8, reference: r.csv, anchor: nearest}\n") ==
        "bad.yaml:7:73: 'power_mode.anchor' must be 'powertrain' or 'measured', not 'nearest'");
  CHECK(plan_error(one + "  power_mode: {generate: adaptive, budget: 8, reference: r.csv, power_budgets_w: [10, -1]}\n") ==
        "bad.yaml:7:87: 'power_mode.power_budgets_w' must be watts in (0, 10000]");
  CHECK(plan_error(one + "  power_mode: {generate: grid, budget: 8}\n") ==
        "bad.yaml:7:32: 'budget' goes with 'generate: adaptive'");
  CHECK(plan_error(one + "  power_mode: {generate: adaptive, budget: 99999, reference: r.csv, every: 4, cores: 8}\n")
            .find("bad.yaml:7:15: 'power_mode.budget' 99999 is more than the ") == 0);
  CHECK(plan_error("campaign: a\nrepetitions: 2\nmatrix:\n  dataset: mnist\n  device: nano\n  model: lenet5\n"
                 "  power_mode: {generate: adaptive, budget: 8, reference: r.csv}\n")
            .find("'repetitions' must be 1") != std::string::npos);
  CHECK(plan_error("campaign: a\nmatrix:\n  dataset: mnist\n  device: nano\n  model: lenet5\n  epochs: 1\n"
                 "  power_mode: {generate: adaptive, budget: 8, reference: r.csv}\n")
            .find("needs 'epochs' >= 2") != std::string::npos);
}
