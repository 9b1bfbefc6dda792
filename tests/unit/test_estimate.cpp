// perf::estimate_campaign without a database: matching measured epoch times from the most specific level
// down, the papers' model as the fallback, and how runs spread over the enrolled boards.
#include <doctest/doctest.h>

#include "common/perf/estimate.hpp"

using namespace jetsweep;

namespace {

RunConfig run(const std::string& device, const std::string& model, int64_t batch, int64_t epochs) {
  RunConfig r;
  r.device = device;
  r.model = model;
  r.dataset = "mnist";
  r.batch_size = batch;
  r.epochs = epochs;
  return r;
}

Campaign campaign(std::vector<RunConfig> runs) {
  Campaign c;
  c.name = "c";
  c.runs = std::move(runs);
  return c;
}

}  // namespace

TEST_CASE("power_mode_key spells the mode as the store groups it") {
  RunConfig r;
  CHECK(perf::power_mode_key(r) == "////");
  r.power_mode.name = "MAXN";
  CHECK(perf::power_mode_key(r) == "MAXN////");
  r.power_mode.name.clear();
  r.power_mode.cores = 4;
  r.power_mode.gpu_hz = 624750000;
  CHECK(perf::power_mode_key(r) == "/4//624750000/");
}

TEST_CASE("the most specific measurement wins; runs of a class spread over its boards") {
  perf::EstimateInputs in;
  // class + model + dataset + batch + mode: 10 s per epoch; the same without the batch size: 100 s.
  in.measured = {{"xavier-nx", "lenet5", "mnist", "16", "////", 20.0, 2},
                 {"xavier-nx", "lenet5", "mnist", "64", "////", 200.0, 2}};
  in.enrolled_boards = {{"xavier-nx", 2}};
  in.class_of_agent = {{"nx-1", "xavier-nx"}, {"nx-2", "xavier-nx"}};
  perf::RunTimeModel model;
  auto e = perf::estimate_campaign(campaign({run("xavier-nx", "lenet5", 16, 3), run("xavier-nx", "lenet5", 32, 1)}),
                                   in, model);
  CHECK(e.campaign == "c");
  CHECK(e.runs == 2);
  CHECK(e.runs_estimated_from.same_class_model_dataset_batch_mode == 1);
  CHECK(e.runs_estimated_from.same_class_model_dataset == 1);   // batch 32 was never measured: mean of 16 and 64
  REQUIRE(e.per_device.size() == 1);
  const auto& t = e.per_device[0];
  CHECK(t.device == "xavier-nx");
  CHECK(t.boards == 2);
  CHECK(t.run_seconds == doctest::Approx(3 * 10.0 + 1 * 55.0));
  CHECK(t.wall_s.value() == doctest::Approx(85.0 / 2));
  CHECK(e.estimated_wall_s == doctest::Approx(85.0 / 2));
}

TEST_CASE("a named board stays on it; CLASS/* runs on every board at once; unmatched runs are counted") {
  perf::EstimateInputs in;
  in.measured = {{"xavier-nx", "lenet5", "mnist", "16", "////", 30.0, 3}};
  in.enrolled_boards = {{"xavier-nx", 3}};
  in.class_of_agent = {{"nx-1", "xavier-nx"}};
  perf::RunTimeModel model;
  auto e = perf::estimate_campaign(
      campaign({run("nx-1", "lenet5", 16, 2), run("xavier-nx/*", "lenet5", 16, 1), run("any", "resnet18", 16, 1)}), in,
      model);
  CHECK(e.runs == 1 + 3 + 1);   // the CLASS/* run once per enrolled board
  CHECK(e.runs_estimated_from.without_measurement == 1);   // resnet18 on any: nothing measured, no class to model
  std::map<std::string, api::EstimateTarget> by;
  for (const auto& t : e.per_device) by[t.device] = t;
  CHECK(by.at("nx-1").boards == 1);
  CHECK(by.at("nx-1").run_seconds == doctest::Approx(20.0));
  CHECK(by.at("xavier-nx/*").runs == 3);
  CHECK(by.at("xavier-nx/*").wall_s.value() == doctest::Approx(10.0));
  CHECK(by.at("any").runs_without_measurement == 1);
  CHECK(e.estimated_wall_s == doctest::Approx(20.0));   // the named board is the busiest
}

TEST_CASE("no board of the class: no wall time for it; the papers' model covers what was never measured") {
  perf::EstimateInputs in;
  perf::RunTimeModel model;
  auto e = perf::estimate_campaign(campaign({run("agx-orin", "lenet5", 16, 1)}), in, model);
  REQUIRE(e.per_device.size() == 1);
  CHECK(e.per_device[0].boards == 0);
  CHECK_FALSE(e.per_device[0].wall_s.has_value());
  CHECK(e.runs_estimated_from.papers_model + e.runs_estimated_from.without_measurement == 1);
  CHECK(e.estimated_wall_s == 0.0);
}

TEST_CASE("gating_refusals: a mode no enrolled board of its class runs as booted, and none may reboot into") {
  RunConfig maxn = run("agx-orin", "lenet5", 16, 1), thirty = maxn, sweep = maxn, nano = run("nano", "lenet5", 16, 1);
  maxn.power_mode.name = "MAXN";
  thirty.power_mode.name = "MODE_30W";
  sweep.base_mode = "MAXN";
  sweep.power_mode.cores = 4;
  nano.power_mode.name = "MAXN";
  const Campaign c = campaign({maxn, maxn, thirty, sweep, nano});
  perf::EstimateInputs in;
  in.gating = {{"orin-1", "agx-orin", {"MODE_30W", "2"}, false}, {"orin-2", "agx-orin", {"MODE_30W", "2"}, false}};
  auto refused = perf::gating_refusals(c, in);
  REQUIRE(refused.size() == 1);   // MAXN named and as base; MODE_30W is live; no nano is enrolled
  CHECK(refused[0] == "agx-orin: 3 run(s) of nvpmodel mode MAXN (TPC_PG_MASK 0 in NVIDIA's conf) cannot run: the 2 "
                      "enrolled board(s) booted with other GPU masks (modes they run as booted: orin-1: MODE_30W; orin-2: "
                      "MODE_30W) and none "
                      "may reboot; start an agent with --allow-reboot (it runs `nvpmodel -m 0` and reboots), or boot a "
                      "board in that mode");
  perf::RunTimeModel model;
  CHECK(perf::estimate_campaign(c, in, model).gating_refused == refused);
  // One board that may reboot, one booted in MAXN, or one whose live modes are not known: nothing refused.
  for (const perf::BoardGatingFacts& ok : {perf::BoardGatingFacts{"orin-3", "agx-orin", {"MODE_30W", "2"}, true},
                                           perf::BoardGatingFacts{"orin-3", "agx-orin", {"MAXN", "0", "MODE_50W", "3"}, false},
                                           perf::BoardGatingFacts{"orin-3", "agx-orin", {}, false}}) {
    perf::EstimateInputs with = in;
    with.gating.push_back(ok);
    CHECK(perf::gating_refusals(c, with).empty());
  }
}
