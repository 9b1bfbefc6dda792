// Simulated boards follow NVIDIA's GPU power-gating rules (issue 28, item 6): a board boots with the masks of its
// class's default nvpmodel mode, records them with every run, models a gated mode as fewer TPCs, and runs a mode
// with other masks only after a (modelled) reboot.
#include <doctest/doctest.h>

#include <algorithm>

#include "agent/run_executor.hpp"
#include "common/perf/board_model.hpp"
#include "common/perf/sim_board.hpp"
#include "support/collecting_sink.hpp"
#include "support/run_checks.hpp"

using namespace jetsweep;
using namespace jetsweep::agent;
using jetsweep::testing::CollectingSink;

namespace {

RunConfig orin_run(const std::string& model, const std::string& dataset) {
  RunConfig c = testing::make_run(model, dataset, 16, 4, 1);
  c.device = "agx-orin";
  c.max_minibatches = 40;
  c.sample_hz = 10;
  return c;
}

bool has(const std::vector<std::string>& v, const std::string& x) { return std::find(v.begin(), v.end(), x) != v.end(); }

}  // namespace

TEST_CASE("a simulated AGX Orin boots as NVIDIA ships it: MODE_30W, TPC_PG_MASK 240, only its masks' modes live") {
  auto board = perf::SimBoard::open("agx-orin");
  REQUIRE(board.is_ok());
  CHECK(board->state().mode_name == "MODE_30W");
  CHECK(board->state().tpc_pg_mask == 240);
  CHECK_FALSE(board->state().fbp_pg_mask.has_value());
  const auto live = board->live_modes();
  CHECK((has(live, "MODE_30W") && has(live, "2") && live.size() == 2));

  RunConfig maxn = orin_run("lenet5", "mnist");
  maxn.power_mode.name = "MAXN";
  auto need = board->reboot_needed(maxn);
  REQUIRE(need.has_value());
  CHECK((need->mode_name == "MAXN" && need->nvpmodel_id == 0));
  CHECK((need->tpc_pg_mask_from == 240 && need->tpc_pg_mask_to == 0));
  const Status refused = board->apply(maxn);
  CHECK(refused.message().find("simulated agx-orin: nvpmodel mode MAXN (TPC_PG_MASK 0) cannot apply on the GPU masks "
                               "the board booted with (TPC_PG_MASK 240): it needs `nvpmodel -m 0` and a reboot") !=
        std::string::npos);
  CHECK(board->state().mode_name == "MODE_30W");   // nothing applied

  // A sweep on base_mode MAXN needs the same reboot; explicit settings alone run on the gating as booted.
  RunConfig sweep = orin_run("lenet5", "mnist");
  sweep.power_mode.cores = 4;
  CHECK_FALSE(board->reboot_needed(sweep).has_value());
  auto on_booted = board->resolve(sweep);
  REQUIRE(on_booted.is_ok());
  CHECK(on_booted->tpcs == 4);
  sweep.base_mode = "MAXN";
  CHECK(board->reboot_needed(sweep).has_value());
  auto on_maxn = board->resolve(sweep);   // what it will run with (the controller's estimates)
  REQUIRE(on_maxn.is_ok());
  CHECK(on_maxn->tpcs == 8);

  // After the reboot: MAXN's masks, its clocks, and the modes that share them are live.
  REQUIRE(board->reboot_into(0).is_ok());
  CHECK(board->state().tpc_pg_mask == 0);
  CHECK(board->state().mode_name == "MAXN");
  CHECK_FALSE(board->modified());   // the state it booted in
  const auto after = board->live_modes();
  CHECK((has(after, "MAXN") && has(after, "MODE_50W") && !has(after, "MODE_30W")));
  CHECK(board->apply(maxn).is_ok());
  RunConfig reference = orin_run("lenet5", "mnist");   // no power mode: MODE_30W's clocks on the masks as booted,
  REQUIRE(board->apply(reference).is_ok());              // not labelled MODE_30W (its masks are not in force)
  CHECK(board->state().mode_name.empty());
  CHECK(board->state().tpc_pg_mask == 0);
  board->restore();
  CHECK(board->state().mode_name == "MAXN");
}

TEST_CASE("the Orin Nano's masks: both R35 modes gate, the 7W mode to 2 of the module's 4 TPCs") {
  auto board = perf::SimBoard::open("orin-nano");
  REQUIRE(board.is_ok());
  CHECK((board->state().tpc_pg_mask == 240 && board->state().fbp_pg_mask == 2));   // 15W
  RunConfig seven = testing::make_run("lenet5", "mnist", 16, 4, 1);
  seven.power_mode.name = "7W";
  auto s = board->resolve(seven);
  REQUIRE(s.is_ok());
  CHECK(s->tpcs == 2);
  auto booted = board->resolve(RunConfig{});
  REQUIRE(booted.is_ok());
  CHECK(booted->tpcs == 4);
  // Nano (t210) and AGX Xavier at its default: nothing gated, or every TPC on.
  auto nano = perf::SimBoard::open("nano");
  REQUIRE(nano.is_ok());
  CHECK_FALSE(nano->state().tpc_pg_mask.has_value());
  CHECK(nano->resolve(RunConfig{})->tpcs == 0);
  auto xavier = perf::SimBoard::open("agx-xavier");
  REQUIRE(xavier.is_ok());
  CHECK(xavier->state().tpc_pg_mask == 0);
  CHECK(xavier->resolve(RunConfig{})->tpcs == 4);
}

TEST_CASE("a gated mode is modelled as fewer TPCs: the GPU's share of compute stretches, its power drops") {
  auto model = perf::SimModel::nominal("agx-orin");
  REQUIRE(model.is_ok());
  perf::Settings all = model->calibration().reference;   // MAXN: 8 TPCs
  REQUIRE(all.tpcs == 8);
  perf::Settings half = all;
  half.tpcs = 4;
  auto epoch = [&](const std::string& m, const std::string& d, const perf::Settings& s) {
    auto e = model->epoch(orin_run(m, d), s, 1, false);
    REQUIRE_MESSAGE(e.is_ok(), e.status().to_string());
    return e.value();
  };
  const auto resnet8 = epoch("resnet18", "cifar10", all), resnet4 = epoch("resnet18", "cifar10", half);
  // ResNet-18 is GPU-bound (gpu_share 0.75): half the TPCs cost about 1 + 0.75 x (2 - 1) / M of its compute.
  CHECK(resnet4.compute_mb_s / resnet8.compute_mb_s > 1.5);
  CHECK(resnet4.compute_mb_s / resnet8.compute_mb_s < 2.0);
  CHECK(resnet4.stall_mb_s == doctest::Approx(resnet8.stall_mb_s));   // the loader does not use the GPU
  CHECK(resnet4.power_w < resnet8.power_w);
  // LeNet is CPU-bound (gpu_share 0.03): the gating hardly shows.
  const auto lenet8 = epoch("lenet5", "mnist", all), lenet4 = epoch("lenet5", "mnist", half);
  CHECK(lenet4.compute_mb_s / lenet8.compute_mb_s < 1.05);
  CHECK(lenet4.compute_mb_s > lenet8.compute_mb_s);
}

TEST_CASE("a default-booted simulated AGX Orin labels every run with its masks; a named mode with others is refused") {
  auto ex = testing::sim_executor("agx-orin", "g", 0.0);
  proto::DeviceFacts facts;
  ex->describe(facts);
  CHECK(facts.live_modes == std::vector<std::string>{"MODE_30W", "2"});

  RunConfig sweep = orin_run("resnet18", "cifar10");
  sweep.power_mode.cores = 8;
  sweep.power_mode.gpu_hz = 726750000;   // a step of the papers' table
  CollectingSink sink;
  std::atomic<bool> cancel{false};
  const auto fin = ex->execute(1, sweep, sink, cancel);
  REQUIRE_MESSAGE(fin.status == "done", fin.error);
  const auto started = sink.all<proto::RunStarted>();
  REQUIRE((started.size() == 1 && started[0].applied.has_value()));
  CHECK(started[0].applied->tpc_pg_mask == 240);   // ran on 4 of 8 TPCs, and says so
  CHECK(started[0].applied->to_string().find("tpc_pg=240") != std::string::npos);

  RunConfig maxn = orin_run("resnet18", "cifar10");
  maxn.power_mode.name = "MAXN";
  testing::expect_refused(*ex, 2, maxn, {"nvpmodel mode MAXN (TPC_PG_MASK 0)", "needs `nvpmodel -m 0` and a reboot",
                                          "--allow-reboot"});
  // The modelled reboot (RunExecutor::reboot_into): then MAXN runs, on all 8 TPCs, and the live modes follow.
  auto need = ex->reboot_for(maxn);
  REQUIRE((need.is_ok() && need->has_value()));
  auto back = ex->reboot_into({}, **need, cancel);
  REQUIRE((back.is_ok() && *back));
  CollectingSink on_maxn;
  REQUIRE(ex->execute(3, maxn, on_maxn, cancel).status == "done");
  CHECK(on_maxn.all<proto::RunStarted>().at(0).applied->tpc_pg_mask == 0);
  CHECK(on_maxn.epochs().at(0).compute_s < sink.epochs().at(0).compute_s);   // 8 TPCs at a higher clock
  ex->describe(facts);
  CHECK(facts.live_modes == std::vector<std::string>{"MAXN", "0", "MODE_50W", "3"});
}
