// The jetson backend on fake board trees: power modes applied before a run, INA3221 energy,
// refusal messages, restore byte for byte, and restore of a dead agent's leftovers at start.
#include <doctest/doctest.h>

#include "agent/device/fs_util.hpp"
#include "agent/device/nvpmodel.hpp"
#include "agent/device/power_control.hpp"
#include "agent/device/restore_state.hpp"
#include "agent/run_executor.hpp"
#include "agent/trainer.hpp"
#include "agent/telemetry.hpp"
#include "device/fake_board.hpp"
#include "support/dataset_gen.hpp"
#include "support/collecting_sink.hpp"
#include "support/run_checks.hpp"
#include "support/temp_dir.hpp"

using namespace jetsweep;
using namespace jetsweep::agent;
using jetsweep::testing::CollectingSink;
using jetsweep::device::testing::diff_snapshots;
using jetsweep::device::testing::FakeBoard;
using jetsweep::device::testing::FakeKind;

namespace {

std::unique_ptr<RunExecutor> jetson(const FakeBoard& fb) {
  ExecutorOptions o;
  o.backend = "jetson";
  o.root = fb.root().string();
  o.state_dir = fb.state_dir().string();
  auto ex = RunExecutor::open(o);
  REQUIRE_MESSAGE(ex.is_ok(), ex.status().to_string());
  return std::move(ex).value();
}

RunConfig tiny_run(const std::string& data) {
  RunConfig c = testing::make_run("lenet5", "mnist", 16, 0, 1);
  c.data = data;
  c.sample_hz = 50;
  // The jetson backend trains on CUDA unless told otherwise; these fake boards come without a GPU.
  c.accelerator = "auto";
  return c;
}

std::string val(const std::filesystem::path& p) { return device::trim(*device::read_raw(p)); }

// A fake board of `kind`, `images` generated IDX images, the board's files before the test and a jetson
// backend on it.
struct JetsonRig {
  JetsonRig(FakeKind kind, int64_t images) : fb(kind) {
    testing::write_idx_dataset(data.str(), images, false);
    before = fb.snapshot();
    ex = jetson(fb);
  }
  // What changed on the board since the rig was made ("" = nothing).
  std::string changes() const { return diff_snapshots(before, fb.snapshot()); }
  RunConfig run() const { return tiny_run(data.str()); }

  FakeBoard fb;
  testing::TempDir data;
  std::map<std::string, std::string> before;
  std::unique_ptr<RunExecutor> ex;
};

}  // namespace

TEST_CASE("jetson backend on a fake AGX Xavier: mode applied, energy from the rails, restore byte for byte") {
  JetsonRig rig(FakeKind::kAgxXavierR32, 64);
  const FakeBoard& fb = rig.fb;
  const auto& spec = fb.spec();
  auto& ex = rig.ex;
  proto::DeviceFacts facts;
  ex->describe(facts);
  CHECK(facts.backend == "jetson");
  CHECK(facts.device_class == "agx-xavier");
  CHECK(facts.kernel.find("L4T " + spec.l4t) != std::string::npos);
  CHECK(facts.kernel.find(spec.module_part) != std::string::npos);
  CHECK(ex->has_power_sensor());
  CHECK_FALSE(ex->board_modified());

  RunConfig c = rig.run();
  c.power_mode.cores = 4;
  c.power_mode.cpu_khz = spec.cpu_khz[spec.cpu_khz.size() / 2];
  c.power_mode.gpu_hz = spec.gpu_hz[spec.gpu_hz.size() / 2];
  c.power_mode.emc_hz = spec.emc_hz.front();
  c.pin_clocks = true;
  CollectingSink sink;
  std::atomic<bool> cancel{false};
  auto fin = ex->execute(11, c, sink, cancel);
  REQUIRE_MESSAGE(fin.status == "done", fin.error);
  CHECK(ex->board_modified());

  auto board = device::open_board(fb.root());
  REQUIRE(board.is_ok());
  for (int cpu = 1; cpu < spec.cores; ++cpu)
    CHECK(val(fb.path("/sys/devices/system/cpu/cpu" + std::to_string(cpu) + "/online")) == (cpu < 4 ? "1" : "0"));
  for (const auto& cl : board->tables.clusters) {
    if (cl.cpus.front() >= 4) continue;
    CHECK(val(cl.cpufreq_dir / "scaling_max_freq") == std::to_string(c.power_mode.cpu_khz));
    CHECK(val(cl.cpufreq_dir / "scaling_min_freq") == std::to_string(c.power_mode.cpu_khz));   // pinned
  }
  CHECK(val(board->tables.gpu.devfreq_dir / "max_freq") == std::to_string(c.power_mode.gpu_hz));
  CHECK(val(fb.path("/sys/kernel/debug/bpmp/debug/clk/emc/rate")) == std::to_string(c.power_mode.emc_hz));

  auto epochs = sink.epochs();
  REQUIRE(epochs.size() == 1);
  REQUIRE(epochs[0].energy_j.has_value());
  REQUIRE(epochs[0].mean_power_w.has_value());
  CHECK(*epochs[0].mean_power_w == doctest::Approx(spec.total_power_w).epsilon(1e-6));   // fake rails are constant
  CHECK(*epochs[0].energy_j > 0);

  REQUIRE(ex->restore_board().is_ok());
  CHECK_FALSE(ex->board_modified());
  CHECK(rig.changes() == "");
  CHECK_FALSE(device::exists_file(device::restore_state_path(fb.state_dir())));
}

TEST_CASE("jetson backend: a refused mode fails the run naming path and value, and changes nothing") {
  JetsonRig rig(FakeKind::kAgxOrinR35, 32);
  RunConfig c = rig.run();
  c.power_mode.cores = 2;
  c.power_mode.gpu_hz = 123;
  testing::expect_refused(*rig.ex, 12, c, {"GPU frequency 123 Hz is not in", "available_frequencies"});
  CHECK_FALSE(rig.ex->board_modified());
  CHECK(rig.changes() == "");

  RunConfig named = rig.run();
  named.power_mode.name = "NO_SUCH_MODE";
  testing::expect_refused(*rig.ex, 13, named, {"no nvpmodel mode 'NO_SUCH_MODE' in"});
  CHECK(rig.changes() == "");
}

TEST_CASE("jetson backend: partial explicit modes and named modes, then restore") {
  for (FakeKind kind : device::testing::all_fake_kinds()) {
    JetsonRig rig(kind, 16);
    const FakeBoard& fb = rig.fb;
    const auto& spec = fb.spec();
    CAPTURE(spec.name);
    auto& ex = rig.ex;
    proto::DeviceFacts facts;
    ex->describe(facts);
    CHECK(facts.device_class == spec.sim_class);
    auto board = device::open_board(fb.root());
    REQUIRE(board.is_ok());
    const std::string gpu_max_before = val(board->tables.gpu.devfreq_dir / "max_freq");

    // What the reference state (the default nvpmodel mode) sets the GPU cap to.
    auto conf = device::read_nvpmodel_conf(fb.root());
    REQUIRE(conf.is_ok());
    REQUIRE(conf->default_mode.has_value());
    auto ref = device::plan_named_mode(*board, std::to_string(*conf->default_mode), device::ApplyOptions{});
    REQUIRE(ref.is_ok());
    const std::string gpu_ref = ref->gpu_min_max_hz ? std::to_string(ref->gpu_min_max_hz->second) : gpu_max_before;

    RunConfig c = rig.run();
    c.power_mode.cores = 1;   // only the cores: everything else from the reference state, not from what ran before
    std::atomic<bool> cancel{false};
    CollectingSink sink;
    auto fin = ex->execute(1, c, sink, cancel);
    REQUIRE_MESSAGE(fin.status == "done", fin.error);
    CHECK(val(fb.path("/sys/devices/system/cpu/cpu1/online")) == "0");
    CHECK(val(board->tables.gpu.devfreq_dir / "max_freq") == gpu_ref);
    REQUIRE(std::holds_alternative<proto::RunStarted>(sink.messages.front()));
    const auto& started = std::get<proto::RunStarted>(sink.messages.front());
    REQUIRE(started.applied.has_value());
    CHECK(started.applied->cores_online == 1);
    CHECK(started.applied->mode_name.empty());
    CHECK(std::to_string(started.applied->gpu_hz) == gpu_ref);
    CHECK_FALSE(started.reference_state);
    REQUIRE(sink.epochs().size() == 1);
    CHECK(sink.epochs()[0].energy_j.has_value());

    RunConfig named = rig.run();
    named.power_mode.name = spec.mode_names.back();
    CollectingSink sink2;
    auto fin2 = ex->execute(2, named, sink2, cancel);
    // A mode whose GPU masks are not the board's (AGX Orin's MODE_50W: 0, Orin Nano's 7W: 252; both boards booted
    // with 240) needs nvpmodel and a reboot: refused before it trains. Any other mode runs.
    auto named_gating = conf->find(named.power_mode.name)->gating(conf->source);
    auto board_gating = device::read_board_gating(fb.root(), &*conf, board->info.l4t_major());
    REQUIRE(named_gating.is_ok());
    REQUIRE(board_gating.is_ok());
    const bool needs_reboot =
        (named_gating->tpc_pg_mask && named_gating->tpc_pg_mask != board_gating->gating.tpc_pg_mask) ||
        (named_gating->fbp_pg_mask && named_gating->fbp_pg_mask != board_gating->gating.fbp_pg_mask);
    CHECK(needs_reboot == (spec.sim_class == "agx-orin" || spec.sim_class == "orin-nano"));
    if (needs_reboot) {
      CHECK(fin2.status == "failed");
      CHECK(fin2.error.find("and a reboot") != std::string::npos);
    } else {
      REQUIRE_MESSAGE(fin2.status == "done", fin2.error);
    }
    REQUIRE(ex->restore_board().is_ok());
    CHECK(rig.changes() == "");
  }
}

TEST_CASE("jetson backend: every run records the GPU gating; the reference state runs on the gating as booted") {
  JetsonRig rig(FakeKind::kAgxOrinR35, 16);
  std::atomic<bool> cancel{false};
  auto started_of = [&](int64_t id, const RunConfig& c) {
    CollectingSink sink;
    auto fin = rig.ex->execute(id, c, sink, cancel);
    REQUIRE_MESSAGE(fin.status == "done", fin.error);
    REQUIRE(std::holds_alternative<proto::RunStarted>(sink.messages.front()));
    return std::get<proto::RunStarted>(sink.messages.front());
  };
  // Out of the box: mode 2, MODE_30W, 4 of 8 TPCs, and the record says so.
  proto::RunStarted booted = started_of(1, rig.run());
  REQUIRE(booted.applied.has_value());
  CHECK(booted.applied->mode_name == "MODE_30W");
  CHECK(booted.applied->tpc_pg_mask == 240);
  CHECK(booted.applied->to_string().find("tpc_pg=240") != std::string::npos);
  RunConfig sweep = rig.run();   // a PowerTrain-style setting on that board: still on 4 TPCs, and recorded so
  sweep.power_mode.gpu_hz = 816000000;
  CHECK(started_of(2, sweep).applied->tpc_pg_mask == 240);
  // After `nvpmodel -m 0` and a reboot the masks read 0: the reference state's (MODE_30W's) cores and clocks run
  // on all 8 TPCs, so the run is not labelled MODE_30W; MAXN now applies live.
  REQUIRE(rig.ex->restore_board().is_ok());
  rig.fb.write("/sys/devices/gpu.0/tpc_pg_mask", "0\n");
  proto::RunStarted ungated = started_of(3, rig.run());
  CHECK(ungated.applied->tpc_pg_mask == 0);
  CHECK(ungated.applied->mode_name.empty());
  CHECK(ungated.applied->cores_online == 8);
  RunConfig maxn = rig.run();
  maxn.power_mode.name = "MAXN";
  proto::RunStarted full = started_of(4, maxn);
  CHECK(full.applied->mode_name == "MAXN");
  CHECK(full.applied->tpc_pg_mask == 0);
  CHECK(full.applied->cores_online == 12);
  REQUIRE(rig.ex->restore_board().is_ok());
}

TEST_CASE("jetson backend: what needs a reboot (named and base modes), the modes that apply as booted, base_mode sweeps") {
  JetsonRig rig(FakeKind::kAgxOrinR35, 16);
  std::atomic<bool> cancel{false};
  proto::DeviceFacts facts;
  rig.ex->describe(facts);
  // Booted in MODE_30W (240): it applies live, MAXN (0), MODE_15W (248) and MODE_50W (0) need a reboot.
  CHECK(facts.live_modes == std::vector<std::string>{"MODE_30W", "2"});
  auto reboot_for = [&](const RunConfig& c) {
    auto r = rig.ex->reboot_for(c);
    REQUIRE_MESSAGE(r.is_ok(), r.status().to_string());
    return r.value();
  };
  RunConfig sweep = rig.run();
  sweep.power_mode.gpu_hz = 816000000;
  CHECK_FALSE(reboot_for(sweep).has_value());   // no base named: runs on the gating in force
  sweep.base_mode = "MAXN";
  const auto need = reboot_for(sweep);
  REQUIRE(need.has_value());
  CHECK(need->mode_name == "MAXN");
  CHECK(need->nvpmodel_id == 0);
  CHECK(need->tpc_pg_mask_from == std::optional<int64_t>(240));
  CHECK(need->tpc_pg_mask_to == std::optional<int64_t>(0));
  // Without the reboot the sweep is refused before anything is written, naming its base and the reboot.
  const auto before = rig.fb.snapshot();
  CollectingSink refused;
  auto fin = rig.ex->execute(1, sweep, refused, cancel);
  CHECK(fin.status == "failed");
  CHECK_MESSAGE(fin.error.find("base_mode MAXN") != std::string::npos, fin.error);
  CHECK(fin.error.find("`nvpmodel -m 0` and a reboot") != std::string::npos);
  CHECK(diff_snapshots(before, rig.fb.snapshot()).empty());
  RunConfig fifteen = rig.run();
  fifteen.power_mode.name = "MODE_15W";
  REQUIRE(reboot_for(fifteen).has_value());
  CHECK(reboot_for(fifteen)->tpc_pg_mask_to == std::optional<int64_t>(248));
  // After `nvpmodel -m 0` and a reboot: MAXN and MODE_50W apply live, and the sweep runs on MAXN's 8 TPCs and
  // 12 cores with its GPU setting.
  rig.fb.write("/sys/devices/gpu.0/tpc_pg_mask", "0\n");
  proto::DeviceFacts after;
  rig.ex->describe(after);
  CHECK(after.live_modes == std::vector<std::string>{"MAXN", "0", "MODE_50W", "3"});
  CHECK_FALSE(reboot_for(sweep).has_value());
  CollectingSink ran;
  fin = rig.ex->execute(2, sweep, ran, cancel);
  REQUIRE_MESSAGE(fin.status == "done", fin.error);
  const auto& started = std::get<proto::RunStarted>(ran.messages.front());
  CHECK_FALSE(started.reference_state);
  CHECK(started.applied->tpc_pg_mask == 0);
  CHECK(started.applied->cores_online == 12);
  CHECK(started.applied->gpu_hz == 816000000);
  REQUIRE(rig.ex->restore_board().is_ok());
}

TEST_CASE("jetson backend: an over-current alarm and a measured GPU clock below the pin mark the epoch throttled") {
  JetsonRig rig(FakeKind::kAgxOrinR35, 16);
  std::atomic<bool> cancel{false};
  auto epoch_of = [&](int64_t id, const RunConfig& c) {
    CollectingSink sink;
    auto fin = rig.ex->execute(id, c, sink, cancel);
    REQUIRE_MESSAGE(fin.status == "done", fin.error);
    REQUIRE(sink.epochs().size() == 1);
    return sink.epochs()[0];
  };
  const std::string alarm = "/sys/devices/platform/c240000.i2c/i2c-1/1-0040/hwmon/hwmon4/curr1_crit_alarm";
  // Caps at the clocks the fake board's cur_freq files show (they do not follow caps), so only the cause under
  // test can throttle.
  RunConfig at_current = rig.run();
  at_current.power_mode.cpu_khz = 2201600;
  at_current.power_mode.gpu_hz = 816000000;
  const proto::EpochResult quiet = epoch_of(1, at_current);
  CHECK_MESSAGE(!quiet.throttled, quiet.throttle_reason);
  rig.fb.write(alarm, "1\n");
  const proto::EpochResult oc = epoch_of(2, at_current);
  CHECK(oc.throttled);
  CHECK(oc.throttle_reason.rfind("over-current alarm VDD_GPU_SOC curr1_crit_alarm (", 0) == 0);
  rig.fb.write(alarm, "0\n");
  RunConfig pinned = at_current;
  pinned.pin_clocks = true;
  for (const char* gpc : {"nafll_gpc0", "nafll_gpc1"})
    rig.fb.write(std::string("/sys/kernel/debug/bpmp/debug/clk/") + gpc + "/pto_counter", "600000000\n");
  const proto::EpochResult slow = epoch_of(3, pinned);
  CHECK(slow.throttled);
  CHECK(slow.throttle_reason == "GPU measured at 600.0 MHz (nafll_gpc pto_counter), pinned at 816.0 MHz");
  REQUIRE(rig.ex->restore_board().is_ok());
}

TEST_CASE("jetson backend: settings a dead agent left are restored when the backend opens") {
  FakeBoard fb(FakeKind::kXavierNxR35);
  const auto before = fb.snapshot();
  {
    auto board = device::open_board(fb.root());
    REQUIRE(board.is_ok());
    device::PowerController ctl(std::move(board).value(), fb.state_dir());
    const auto& spec = fb.spec();
    REQUIRE(ctl.apply(device::PowerMode{2, spec.cpu_khz.front(), spec.gpu_hz.front(), spec.emc_hz.front()},
                      device::ApplyOptions{true, false})
                .is_ok());
  }
  CHECK(diff_snapshots(before, fb.snapshot()) != "");
  auto ex = jetson(fb);
  CHECK(diff_snapshots(before, fb.snapshot()) == "");
  CHECK_FALSE(ex->board_modified());
}

TEST_CASE("jetson backend: drop_caches goes through the device layer; host backend refuses power modes") {
  JetsonRig rig(FakeKind::kNanoR32, 16);
  const FakeBoard& fb = rig.fb;
  auto& ex = rig.ex;
  const testing::TempDir& data = rig.data;
  RunConfig c = rig.run();
  c.drop_caches = true;
  CollectingSink sink;
  std::atomic<bool> cancel{false};
  REQUIRE(ex->execute(1, c, sink, cancel).status == "done");
  CHECK(val(fb.path("/proc/sys/vm/drop_caches")) == "3");

  RunExecutor host(fb.root().string());
  RunConfig m = tiny_run(data.str());
  m.power_mode.name = "MAXN";
  CollectingSink hs;
  auto fin = host.execute(2, m, hs, cancel);
  CHECK(fin.status == "failed");
  CHECK(fin.error.find("backend is 'host'") != std::string::npos);
}

TEST_CASE("BoardPowerSource reads the module total of every fake board") {
  for (FakeKind kind : device::testing::all_fake_kinds()) {
    FakeBoard fb(kind);
    CAPTURE(fb.spec().name);
    auto src = BoardPowerSource::open(fb.root().string());
    REQUIRE_MESSAGE(src.is_ok(), src.status().to_string());
    CHECK((*src)->rule() == fb.spec().total_rule);
    auto p = (*src)->read_power_w(0.0);
    REQUIRE(p.has_value());
    CHECK(*p == doctest::Approx(fb.spec().total_power_w).epsilon(1e-6));
  }
  testing::TempDir empty;
  CHECK_FALSE(BoardPowerSource::open(empty.str()).is_ok());
}

TEST_CASE("jetson backend: a run without a power mode runs in the reference state, whatever ran before") {
  JetsonRig rig(FakeKind::kAgxOrinR35, 16);
  const FakeBoard& fb = rig.fb;
  auto& ex = rig.ex;
  const testing::TempDir& data = rig.data;
  auto conf = device::read_nvpmodel_conf(fb.root());
  REQUIRE(conf.is_ok());
  REQUIRE(conf->default_mode.has_value());
  const device::NvpMode* def = conf->find(std::to_string(*conf->default_mode));
  REQUIRE(def != nullptr);
  std::atomic<bool> cancel{false};
  auto started = [](const CollectingSink& sink) {
    REQUIRE(std::holds_alternative<proto::RunStarted>(sink.messages.front()));
    return std::get<proto::RunStarted>(sink.messages.front());
  };

  RunConfig two = tiny_run(data.str());
  two.power_mode.cores = 2;
  two.pin_clocks = true;
  CollectingSink first;
  REQUIRE(ex->execute(1, two, first, cancel).status == "done");
  CHECK(started(first).applied->cores_online == 2);
  CHECK(started(first).applied->clocks_pinned);

  CollectingSink second;
  REQUIRE(ex->execute(2, tiny_run(data.str()), second, cancel).status == "done");
  const auto s = started(second);
  CHECK(s.reference_state);
  REQUIRE(s.applied.has_value());
  CHECK(s.applied->mode_name == def->name);
  CHECK(s.applied->nvpmodel_id == def->id);
  CHECK(s.applied->cores_online > 2);
  CHECK_FALSE(s.applied->clocks_pinned);
  // The same state as a first run that names no mode on a fresh agent.
  REQUIRE(ex->restore_board().is_ok());
  CHECK(rig.changes() == "");
  auto fresh = jetson(fb);
  CollectingSink third;
  REQUIRE(fresh->execute(3, tiny_run(data.str()), third, cancel).status == "done");
  CHECK(started(third).applied == s.applied);
  REQUIRE(fresh->restore_board().is_ok());
}

TEST_CASE("accelerator: a run that needs CUDA fails naming CUDA; auto records the device it trained on") {
  JetsonRig rig(FakeKind::kOrinNanoR36, 16);
  const FakeBoard& fb = rig.fb;
  auto& ex = rig.ex;
  const testing::TempDir& data = rig.data;
  CHECK(ex->default_accelerator() == "cuda");
  std::atomic<bool> cancel{false};
  RunConfig c = tiny_run(data.str());
  c.accelerator = "";   // the jetson backend's default: cuda
  CollectingSink needs;
  auto fin = ex->execute(1, c, needs, cancel);
  if (cuda_available()) {
    CHECK(fin.status == "done");
  } else {
    CHECK(fin.status == "failed");
    CHECK(fin.error.find("accelerator: cuda: the run needs CUDA") != std::string::npos);
    CHECK(fin.error.find("without CUDA") != std::string::npos);
    CHECK(needs.messages.size() == 1);                        // nothing but run_finished: no silent fallback
    CHECK(rig.changes() == "");                               // and the board was not touched
    CHECK(ex->accelerator_fact().rfind("none: ", 0) == 0);
  }
  REQUIRE(ex->restore_board().is_ok());

  RunExecutor host(fb.root().string());
  CHECK(host.default_accelerator() == "auto");
  RunConfig a = tiny_run(data.str());
  a.accelerator = "cpu";
  CollectingSink cpu;
  REQUIRE(host.execute(2, a, cpu, cancel).status == "done");
  REQUIRE(std::holds_alternative<proto::RunStarted>(cpu.messages.front()));
  CHECK(std::get<proto::RunStarted>(cpu.messages.front()).compute_device == "cpu");
  a.accelerator = "auto";
  CollectingSink any;
  REQUIRE(host.execute(3, a, any, cancel).status == "done");
  CHECK(std::get<proto::RunStarted>(any.messages.front()).compute_device == (cuda_available() ? "cuda:0 (" + cuda_device_name() + ")" : "cpu"));
  CHECK(compute_device_for("tpu").status().message() == "accelerator 'tpu': expected auto, cuda or cpu");
}
