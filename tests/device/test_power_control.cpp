// Applying modes, read-back, refusal, store/restore byte for byte, page-cache drop.
#include <doctest/doctest.h>

#include <algorithm>
#include <functional>
#include <memory>

#include "agent/device/fs_util.hpp"
#include "agent/device/power_control.hpp"
#include "agent/device/restore_state.hpp"
#include "tests/device/device_checks.hpp"

namespace jetsweep::device {
namespace {

// Index of the write to `path` in the last apply, or -1.
int write_index(const PowerController& ctl, const fs::path& path) {
  const auto& w = ctl.last_writes();
  for (size_t i = 0; i < w.size(); ++i) {
    if (w[i].first == path) return static_cast<int>(i);
  }
  return -1;
}

std::string cpu_path(int cpu, const std::string& leaf) {
  return "/sys/devices/system/cpu/cpu" + std::to_string(cpu) + "/" + leaf;
}

TEST_CASE("set-mode with pinned clocks and fan, then restore, leaves every board byte-for-byte identical") {
  for (FakeKind kind : every_fake_kind()) {
    FakeBoard fb(kind);
    const auto& spec = fb.spec();
    CAPTURE(spec.name);
    auto before = fb.snapshot();
    Board board = fb.board();
    FakeSystemctl systemctl(true);  // nvfancontrol runs (R35+ boards stop it for the fan)
    PowerController ctl(board, fb.state_dir(), std::make_shared<SystemctlServiceControl>(systemctl.path().string()));
    PowerMode mode{std::max(1, spec.cores / 2), spec.cpu_khz[spec.cpu_khz.size() / 2], spec.gpu_hz[spec.gpu_hz.size() / 2],
                   spec.emc_hz.front()};
    Status s = ctl.apply(mode, ApplyOptions{true, true});
    REQUIRE_MESSAGE(s.is_ok(), s.to_string());
    CHECK(exists_file(restore_state_path(fb.state_dir())));

    for (int cpu = 1; cpu < spec.cores; ++cpu) {
      CHECK(val(fb, cpu_path(cpu, "online")) == (cpu < mode.cores ? "1" : "0"));
    }
    for (const auto& cl : board.tables.clusters) {
      if (cl.cpus.front() >= mode.cores) continue;
      CHECK(val(cl.cpufreq_dir / "scaling_min_freq") == std::to_string(mode.cpu_khz));
      CHECK(val(cl.cpufreq_dir / "scaling_max_freq") == std::to_string(mode.cpu_khz));
    }
    for (int cpu = 0; cpu < mode.cores; ++cpu) {
      CHECK(val(fb, cpu_path(cpu, "cpuidle/state0/disable")) == "1");
      CHECK(val(fb, cpu_path(cpu, "cpuidle/state1/disable")) == "1");
    }
    CHECK(val(board.tables.gpu.devfreq_dir / "min_freq") == std::to_string(mode.gpu_hz));
    CHECK(val(board.tables.gpu.devfreq_dir / "max_freq") == std::to_string(mode.gpu_hz));
    CHECK(val(board.tables.gpu.device_dir / "railgate_enable") == "0");
    CHECK(val(fb, spec.emc_cap_path) == std::to_string(mode.emc_hz));
    // Every family locks the EMC first, then writes the rate (R32 jetson_clocks on the Nano; BPMP boards).
    fs::path emc_lock = fb.root() / "sys/kernel/debug/bpmp/debug/clk/emc/mrq_rate_locked";
    fs::path emc_rate = fb.root() / "sys/kernel/debug/bpmp/debug/clk/emc/rate";
    if (spec.family == Family::kT210) {
      emc_lock = fb.root() / "sys/kernel/debug/clk/override.emc/clk_state";
      emc_rate = fb.root() / "sys/kernel/debug/clk/override.emc/clk_update_rate";
    }
    CHECK(val(emc_lock) == "1");
    CHECK(val(emc_rate) == std::to_string(mode.emc_hz));
    REQUIRE(write_index(ctl, emc_lock) >= 0);
    CHECK(write_index(ctl, emc_lock) < write_index(ctl, emc_rate));
    if (spec.legacy_fan) {
      CHECK(val(fb, "/sys/devices/pwm-fan/temp_control") == "0");
      CHECK(val(fb, "/sys/devices/pwm-fan/target_pwm") == "255");
    } else {
      auto fan = find_fan(fb.root());
      REQUIRE(fan.has_value());
      REQUIRE(fan->pwm.size() == static_cast<size_t>(spec.fan_pwm_files));
      for (const auto& pwm : fan->pwm) CHECK(val(pwm) == "255");
    }
    CHECK(fb.snapshot() != before);
    CHECK(systemctl.active() == spec.legacy_fan);

    auto restored = ctl.restore();
    REQUIRE_MESSAGE(restored.is_ok(), restored.status().to_string());
    CHECK(*restored);
    CHECK(systemctl.active());
    CHECK(systemctl.calls().size() == (spec.legacy_fan ? 0u : 3u));
    CHECK_FALSE(exists_file(restore_state_path(fb.state_dir())));
    CHECK(diff_snapshots(before, fb.snapshot()) == "");
  }
}

TEST_CASE("without pinning, a mode caps max and leaves min at the table minimum") {
  FakeBoard fb(FakeKind::kAgxXavierR32);
  Board board = fb.board();
  PowerController ctl(board, fb.state_dir());
  REQUIRE(ctl.apply(PowerMode{8, 1190400, 624750000, 1331200000}, ApplyOptions{}).is_ok());
  check_files(fb, {{"/sys/devices/system/cpu/cpufreq/policy6/scaling_min_freq", "115200"},
                   {"/sys/devices/system/cpu/cpufreq/policy6/scaling_max_freq", "1190400"},
                   {"/sys/devices/17000000.gv11b/devfreq/17000000.gv11b/min_freq", "114750000"},
                   {"/sys/devices/17000000.gv11b/devfreq/17000000.gv11b/max_freq", "624750000"},
                   {"/sys/devices/17000000.gv11b/railgate_enable", "1"},
                   {"/sys/devices/system/cpu/cpu3/cpuidle/state1/disable", "0"},
                   {"/sys/devices/pwm-fan/target_pwm", "77"}});
}

TEST_CASE("lowering writes min before max; raising writes max before min") {
  FakeBoard fb(FakeKind::kAgxOrinR35);
  auto before = fb.snapshot();
  Board board = fb.board();
  PowerController ctl(board, fb.state_dir());
  fs::path min_p = board.tables.clusters[0].cpufreq_dir / "scaling_min_freq";
  fs::path max_p = board.tables.clusters[0].cpufreq_dir / "scaling_max_freq";
  fs::path gmin = board.tables.gpu.devfreq_dir / "min_freq", gmax = board.tables.gpu.devfreq_dir / "max_freq";

  REQUIRE(ctl.apply(PowerMode{4, 729600, 408000000, 665600000}, ApplyOptions{true, false}).is_ok());
  CHECK(write_index(ctl, min_p) >= 0);
  CHECK(write_index(ctl, min_p) < write_index(ctl, max_p));
  CHECK(write_index(ctl, gmin) < write_index(ctl, gmax));
  // Offlining happens after all clocks are set; cpu11 goes first.
  CHECK(write_index(ctl, fb.path(cpu_path(11, "online"))) < write_index(ctl, fb.path(cpu_path(4, "online"))));
  CHECK(write_index(ctl, fb.path(cpu_path(4, "online"))) > write_index(ctl, gmax));

  REQUIRE(ctl.apply(PowerMode{12, 2201600, 1300500000, 3199000000}, ApplyOptions{true, false}).is_ok());
  CHECK(write_index(ctl, max_p) < write_index(ctl, min_p));
  CHECK(write_index(ctl, gmax) < write_index(ctl, gmin));
  // Onlining happens before the clocks of the re-enabled clusters are written.
  fs::path c2max = board.tables.clusters[2].cpufreq_dir / "scaling_max_freq";
  CHECK(write_index(ctl, fb.path(cpu_path(8, "online"))) < write_index(ctl, c2max));
  CHECK(val(fb, cpu_path(11, "online")) == "1");

  // Two applies, one restore: the first recorded contents win.
  auto r = ctl.restore();
  REQUIRE(r.is_ok());
  CHECK(diff_snapshots(before, fb.snapshot()) == "");
}

TEST_CASE("restore order: online CPUs first, min/max pairs in a valid order, unlock after rate, offline last") {
  FakeBoard fb(FakeKind::kAgxXavierR32);
  fb.write("/sys/devices/system/cpu/cpu7/online", "0\n");  // one CPU was offline before the campaign
  auto before = fb.snapshot();
  Board board = fb.board();
  PowerController ctl(board, fb.state_dir());
  // Lower everything (cpu7 comes online, cpu2-6 go offline).
  DeviceTarget t = *plan_power_mode(board, PowerMode{2, 345600, 318750000, 408000000}, ApplyOptions{true, false});
  t.online[7] = true;
  REQUIRE(ctl.apply(t).is_ok());
  std::vector<fs::path> order;
  auto r = restore_pending(fb.state_dir(), &order);
  REQUIRE_MESSAGE(r.is_ok(), r.status().to_string());
  auto idx = [&](const std::string& board_path) {
    auto it = std::find(order.begin(), order.end(), fb.path(board_path));
    REQUIRE_MESSAGE(it != order.end(), board_path);
    return static_cast<int>(it - order.begin());
  };
  // Restoring raises the clocks again: max before min.
  CHECK(idx("/sys/devices/system/cpu/cpu0/cpufreq/scaling_max_freq") < idx("/sys/devices/system/cpu/cpu0/cpufreq/scaling_min_freq"));
  const std::string devfreq = "/sys/devices/17000000.gv11b/devfreq/17000000.gv11b";
  CHECK(idx(devfreq + "/max_freq") < idx(devfreq + "/min_freq"));
  // CPUs that were online come back before any clock is touched; cpu7 goes offline last.
  CHECK(idx("/sys/devices/system/cpu/cpu6/online") < idx("/sys/devices/system/cpu/cpu0/cpufreq/scaling_max_freq"));
  CHECK(idx("/sys/devices/system/cpu/cpu7/online") == static_cast<int>(order.size()) - 1);
  // EMC: the rate goes back while still locked, then the lock is released; railgate after GPU clocks.
  CHECK(idx("/sys/kernel/debug/bpmp/debug/clk/emc/rate") < idx("/sys/kernel/debug/bpmp/debug/clk/emc/mrq_rate_locked"));
  CHECK(idx(devfreq + "/min_freq") < idx("/sys/devices/17000000.gv11b/railgate_enable"));
  CHECK(diff_snapshots(before, fb.snapshot()) == "");
}

TEST_CASE("EMC lock order as jetson_clocks does it: lock then rate (R32 Nano and BPMP boards); R28 Nano rate first") {
  for (FakeKind kind : {FakeKind::kNanoR32, FakeKind::kAgxXavierR32, FakeKind::kAgxOrinR35}) {
    FakeBoard fb(kind);
    CAPTURE(fb.spec().name);
    auto before = fb.snapshot();
    Board board = fb.board();
    PowerController ctl(board, fb.state_dir());
    REQUIRE(ctl.apply(*plan_pin_current(board, ApplyOptions{})).is_ok());
    const EmcPaths emc = board.ops->emc_paths(board.root, board.info.l4t_major());
    const int lock = write_index(ctl, emc.lock), rate = write_index(ctl, emc.rate);
    REQUIRE(lock >= 0);
    REQUIRE(rate >= 0);
    CHECK(lock < rate);
    // The live rate is the EMC clock's own, not the override clock's.
    if (kind == FakeKind::kNanoR32) CHECK(emc.current_rate == fb.path("/sys/kernel/debug/clk/emc/clk_rate"));
    REQUIRE(ctl.restore().is_ok());
    CHECK(diff_snapshots(before, fb.snapshot()) == "");
  }
  // The older R28 script wrote the rate first.
  CHECK(family_ops_t210().emc_paths("/nonexistent", 28).rate_before_lock);
  CHECK_FALSE(family_ops_t210().emc_paths("/nonexistent", 32).rate_before_lock);
}

TEST_CASE("values outside the board's tables are refused before anything is written") {
  FakeBoard fb(FakeKind::kAgxXavierR32);
  auto before = fb.snapshot();
  Board board = fb.board();
  PowerController ctl(board, fb.state_dir());
  const PowerMode good{8, 2265600, 1377000000, 2133000000};

  auto expect_refusal = [&](PowerMode m, const std::string& path_part, const std::string& value) {
    Status s = ctl.apply(m, ApplyOptions{true, true});
    REQUIRE_FALSE(s.is_ok());
    CHECK(s.code() == Code::kInvalidArgument);
    CHECK_MESSAGE(s.message().find(path_part) != std::string::npos, s.message());
    CHECK_MESSAGE(s.message().find(value) != std::string::npos, s.message());
    CHECK(diff_snapshots(before, fb.snapshot()) == "");
    CHECK_FALSE(exists_file(restore_state_path(fb.state_dir())));
  };
  PowerMode m = good;
  m.cpu_khz = 2000000;
  expect_refusal(m, fb.path("/sys/devices/system/cpu/cpu0/cpufreq/scaling_available_frequencies").string(), "2000000");
  m = good;
  m.gpu_hz = 1300000000;
  expect_refusal(m, "17000000.gv11b/available_frequencies", "1300000000");
  m = good;
  m.emc_hz = 3199000000;
  expect_refusal(m, fb.path("/sys/kernel/debug/bpmp/debug/emc/possible_rates").string(), "3199000000");
  m = good;
  m.cores = 9;
  expect_refusal(m, "/sys/devices/system/cpu", "9");
  m = good;
  m.cores = 0;
  expect_refusal(m, "/sys/devices/system/cpu", "cores 0");
}

TEST_CASE("a missing control file is refused naming it, with nothing written") {
  FakeBoard fb(FakeKind::kXavierNxR35);
  fb.remove("/sys/devices/17000000.gv11b/devfreq/17000000.gv11b/max_freq");
  auto before = fb.snapshot();
  Board board = fb.board();
  PowerController ctl(board, fb.state_dir());
  Status s = ctl.apply(PowerMode{6, 1420800, 1109250000, 1600000000}, ApplyOptions{});
  REQUIRE_FALSE(s.is_ok());
  CHECK(s.code() == Code::kIoError);
  CHECK(s.message().find(fb.path("/sys/devices/17000000.gv11b/devfreq/17000000.gv11b/max_freq").string()) != std::string::npos);
  CHECK(diff_snapshots(before, fb.snapshot()) == "");
  CHECK_FALSE(exists_file(restore_state_path(fb.state_dir())));
}

TEST_CASE("a read-back mismatch stops the apply naming path and value; restore undoes the partial change") {
  FakeBoard fb(FakeKind::kAgxOrinR36);
  // The EMC rate accepts writes but reads back something else (here: nothing).
  fb.remove("/sys/kernel/debug/bpmp/debug/clk/emc/rate");
  fs::create_symlink("/dev/null", fb.path("/sys/kernel/debug/bpmp/debug/clk/emc/rate"));
  auto before = fb.snapshot();
  PowerController ctl(fb.board(), fb.state_dir());
  Status s = ctl.apply(PowerMode{8, 1728000, 612000000, 2133000000}, ApplyOptions{});
  REQUIRE_FALSE(s.is_ok());
  CHECK(s.code() == Code::kIoError);
  CHECK(s.message().find(fb.path("/sys/kernel/debug/bpmp/debug/clk/emc/rate").string()) != std::string::npos);
  CHECK(s.message().find("2133000000") != std::string::npos);
  CHECK(val(fb, "/sys/kernel/debug/bpmp/debug/clk/emc/mrq_rate_locked") == "1");  // partial change happened
  CHECK(val(fb, cpu_path(8, "online")) == "1");  // offlining had not started
  CHECK(exists_file(restore_state_path(fb.state_dir())));
  auto r = restore_pending(fb.state_dir());
  REQUIRE_MESSAGE(r.is_ok(), r.status().to_string());
  CHECK(diff_snapshots(before, fb.snapshot()) == "");
}

TEST_CASE("a failed write in a second apply; restore puts back the first originals") {
  FakeBoard fb(FakeKind::kNanoR32);
  auto before = fb.snapshot();
  PowerController ctl(fb.board(), fb.state_dir());
  REQUIRE(ctl.apply(PowerMode{2, 921600, 614400000, 1065600000}, ApplyOptions{true, false}).is_ok());
  // railgate_enable was recorded by the first apply; now it cannot be written.
  fb.remove("/sys/devices/gpu.0/railgate_enable");
  fs::create_directories(fb.path("/sys/devices/gpu.0/railgate_enable"));
  Status s = ctl.apply(PowerMode{4, 1479000, 921600000, 1600000000}, ApplyOptions{true, true});
  REQUIRE_FALSE(s.is_ok());
  CHECK(s.code() == Code::kIoError);
  CHECK(s.message().find(fb.path("/sys/devices/gpu.0/railgate_enable").string()) != std::string::npos);
  CHECK(s.message().find("'0'") != std::string::npos);
  CHECK(val(fb, cpu_path(3, "online")) == "1");  // the second apply had brought cpu3 back
  fb.remove("/sys/devices/gpu.0/railgate_enable");
  fb.write("/sys/devices/gpu.0/railgate_enable", "0");
  auto r = restore_pending(fb.state_dir());
  REQUIRE_MESSAGE(r.is_ok(), r.status().to_string());
  CHECK(*r);
  CHECK(diff_snapshots(before, fb.snapshot()) == "");
}

using BoardFiles = std::vector<std::pair<std::string, std::string>>;

// On a fresh board of `kind`: `apply` succeeds, the files hold the values given, and a restore puts back every byte.
void check_apply_then_restore(FakeKind kind, const std::function<Status(PowerController&)>& apply, const BoardFiles& files) {
  FakeBoard fb(kind);
  auto before = fb.snapshot();
  PowerController ctl(fb.board(), fb.state_dir());
  Status s = apply(ctl);
  REQUIRE_MESSAGE(s.is_ok(), s.to_string());
  check_files(fb, files);
  REQUIRE(ctl.restore().is_ok());
  CHECK(diff_snapshots(before, fb.snapshot()) == "");
}

TEST_CASE("named nvpmodel modes") {
  SUBCASE("AGX Xavier MODE_15W") {
    BoardFiles files;
    for (int cpu = 1; cpu < 8; ++cpu) files.emplace_back(cpu_path(cpu, "online"), cpu < 4 ? "1" : "0");
    files.insert(files.end(),
                 {{"/sys/devices/system/cpu/cpufreq/policy0/scaling_max_freq", "1190400"},
                  {"/sys/devices/system/cpu/cpufreq/policy0/scaling_min_freq", "1190400"},
                  {"/sys/devices/system/cpu/cpufreq/policy2/scaling_max_freq", "1190400"},
                  {"/sys/devices/system/cpu/cpufreq/policy4/scaling_max_freq", "2265600"},  // offline: untouched
                  // 670 MHz is between table entries: rounded down as devfreq does.
                  {"/sys/devices/17000000.gv11b/devfreq/17000000.gv11b/max_freq", "624750000"},
                  {"/sys/devices/17000000.gv11b/devfreq/17000000.gv11b/min_freq", "114750000"},
                  {"/sys/kernel/nvpmodel_emc_cap/emc_iso_cap", "1331200000"},
                  {"/sys/kernel/debug/bpmp/debug/clk/emc/mrq_rate_locked", "0"}});
    check_apply_then_restore(
        FakeKind::kAgxXavierR32, [](PowerController& ctl) { return ctl.apply_named("MODE_15W", ApplyOptions{}); }, files);
  }
  SUBCASE("Nano 5W by id, pinned") {
    auto apply = [](PowerController& ctl) { return ctl.apply_named("1", ApplyOptions{true, false}); };
    check_apply_then_restore(FakeKind::kNanoR32, apply,
                             {{cpu_path(2, "online"), "0"},
                              {cpu_path(1, "online"), "1"},
                              {"/sys/devices/system/cpu/cpufreq/policy0/scaling_max_freq", "825600"},
                              {"/sys/devices/system/cpu/cpufreq/policy0/scaling_min_freq", "825600"},
                              {"/sys/devices/gpu.0/devfreq/57000000.gpu/max_freq", "614400000"},
                              {"/sys/devices/gpu.0/devfreq/57000000.gpu/min_freq", "614400000"},
                              {"/sys/kernel/nvpmodel_emc_cap/emc_iso_cap", "1600000000"},
                              {"/sys/kernel/debug/clk/override.emc/clk_state", "1"},
                              {"/sys/kernel/debug/clk/override.emc/clk_update_rate", "1600000000"}});
  }
  SUBCASE("AGX Orin MODE_15W on R35 and R36 (cap file moved), once the board booted with its TPC mask") {
    for (FakeKind kind : {FakeKind::kAgxOrinR35, FakeKind::kAgxOrinR36}) {
      FakeBoard fb(kind);
      CAPTURE(fb.spec().name);
      // Out of the box the board runs MODE_30W's TPC_PG_MASK 240: MODE_15W's 248 needs nvpmodel and a reboot.
      auto refused = plan_named_mode(fb.board(), "MODE_15W", ApplyOptions{});
      REQUIRE_FALSE(refused.is_ok());
      CHECK(refused.status().code() == Code::kInvalidArgument);
      const std::string why = refused.status().message();
      CAPTURE(why);
      CHECK(why.find("MODE_15W (id 1") != std::string::npos);
      CHECK(why.find("TPC_PG_MASK 248") != std::string::npos);
      CHECK(why.find("TPC_PG_MASK 240") != std::string::npos);
      CHECK(why.find(kind == FakeKind::kAgxOrinR36 ? "platform/gpu.0/tpc_pg_mask" : "/sys/devices/gpu.0/tpc_pg_mask") !=
            std::string::npos);
      CHECK(why.find("`nvpmodel -m 1` and a reboot") != std::string::npos);
      // After that reboot the mask reads 248 and the mode applies live.
      fb.write(kind == FakeKind::kAgxOrinR36 ? "/sys/devices/platform/gpu.0/tpc_pg_mask" : "/sys/devices/gpu.0/tpc_pg_mask",
               "248\n");
      auto before = fb.snapshot();
      PowerController ctl(fb.board(), fb.state_dir());
      auto target = plan_named_mode(ctl.board(), "MODE_15W", ApplyOptions{});
      REQUIRE_MESSAGE(target.is_ok(), target.status().to_string());
      CHECK(std::any_of(target->notes.begin(), target->notes.end(),
                        [](const std::string& n) { return n.find("TPC_PG_MASK 248 in force") != std::string::npos; }));
      CHECK(target->clusters.size() == 1);  // clusters 4-7 and 8-11 go offline
      CHECK(std::any_of(target->notes.begin(), target->notes.end(),
                        [](const std::string& n) { return n.find("DLA0_CORE") != std::string::npos; }));
      REQUIRE(ctl.apply(*target).is_ok());
      CHECK(val(fb, cpu_path(3, "online")) == "1");
      CHECK(val(fb, cpu_path(4, "online")) == "0");
      CHECK(val(fb, cpu_path(11, "online")) == "0");
      CHECK(val(fb, "/sys/devices/system/cpu/cpufreq/policy0/scaling_max_freq") == "1113600");
      CHECK(val(fb, fb.spec().emc_cap_path) == "2133000000");
      // The conf's paths, KNEXT on R36: the EMC cap and GPU power control "on" before the GPU clock, "auto" after.
      const bool r36 = kind == FakeKind::kAgxOrinR36;
      CHECK(fb.spec().emc_cap_path == (r36 ? "/sys/kernel/nvpmodel_clk_cap/emc" : "/sys/kernel/nvpmodel_emc_cap/emc_iso_cap"));
      const std::string control = r36 ? "/sys/devices/platform/gpu.0/power/control" : "/sys/devices/gpu.0/power/control";
      std::vector<std::string> gpu_sequence;
      for (const auto& [path, value] : ctl.last_writes()) {
        const std::string p = path.string();
        if (p.size() >= control.size() && p.compare(p.size() - control.size(), control.size(), control) == 0)
          gpu_sequence.push_back("control=" + value);
        if (p.find("/devfreq/") != std::string::npos && p.find("max_freq") != std::string::npos)
          gpu_sequence.push_back("gpu_max=" + value);
      }
      std::string seq;
      for (const auto& g : gpu_sequence) seq += g + ";";
      CHECK(seq == "control=on;gpu_max=408000000;control=auto;");
      REQUIRE(ctl.restore().is_ok());
      CHECK(diff_snapshots(before, fb.snapshot()) == "");
    }
  }
  SUBCASE("unknown mode lists the known ones") {
    FakeBoard fb(FakeKind::kOrinNanoR36);
    PowerController ctl(fb.board(), fb.state_dir());
    Status s = ctl.apply_named("MAXN_SUPER", ApplyOptions{});
    REQUIRE_FALSE(s.is_ok());
    CHECK(s.code() == Code::kInvalidArgument);
    CHECK(s.message().find("MAXN_SUPER") != std::string::npos);
    CHECK(s.message().find("1=7W") != std::string::npos);
  }
}

TEST_CASE("a named mode's PARAM TYPE=HWMON over-current limits are written in the hwmon folder the board has") {
  FakeBoard fb(FakeKind::kXavierNxR35);
  const std::string hw = "/sys/devices/platform/c250000.i2c/i2c-7/7-0040/hwmon/hwmon5";
  const auto before = fb.snapshot();
  PowerController ctl(fb.board(), fb.state_dir());
  Status s = ctl.apply_named("MODE_20W_2CORE", ApplyOptions{});
  REQUIRE_MESSAGE(s.is_ok(), s.to_string());
  check_files(fb, {{hw + "/curr1_max", "4000"}, {hw + "/curr1_crit", "5000"}});
  REQUIRE(ctl.restore().is_ok());
  CHECK(diff_snapshots(before, fb.snapshot()) == "");
  REQUIRE(ctl.apply_named("MODE_15W_6CORE", ApplyOptions{}).is_ok());
  check_files(fb, {{hw + "/curr1_max", "3000"}, {hw + "/curr1_crit", "5000"}});
  REQUIRE(ctl.restore().is_ok());
  // hwmon folders are renumbered between boots: the limit follows the folder that has the file.
  fs::rename(fb.path(hw), fb.path("/sys/devices/platform/c250000.i2c/i2c-7/7-0040/hwmon/hwmon2"));
  auto moved = plan_named_mode(fb.board(), "MODE_20W_2CORE", ApplyOptions{});
  REQUIRE_MESSAGE(moved.is_ok(), moved.status().to_string());
  REQUIRE(moved->hwmon_limits.size() == 2);
  CHECK(moved->hwmon_limits[0].path.parent_path().filename() == "hwmon2");
  // No such file: refused before anything is written, naming the conf line and the folder.
  fs::remove(fb.path("/sys/devices/platform/c250000.i2c/i2c-7/7-0040/hwmon/hwmon2/curr1_crit"));
  auto missing = plan_named_mode(fb.board(), "MODE_20W_2CORE", ApplyOptions{});
  REQUIRE_FALSE(missing.is_ok());
  CHECK(missing.status().message().find("nvpmodel.conf:") != std::string::npos);
  CHECK(missing.status().message().find("VDDIN_OC_LIMIT CRIT: no hwmon folder under") != std::string::npos);
}

TEST_CASE("named nvpmodel modes need the GPU masks they set in force") {
  SUBCASE("Orin Nano 7W gates more TPCs than the 15W the board booted in; FBP_PG_MASK 2 in both") {
    FakeBoard fb(FakeKind::kOrinNanoR36);
    auto refused = plan_named_mode(fb.board(), "7W", ApplyOptions{});
    REQUIRE_FALSE(refused.is_ok());
    CHECK(refused.status().message().find("TPC_PG_MASK 252 FBP_PG_MASK 2") != std::string::npos);
    CHECK(refused.status().message().find("runs with TPC_PG_MASK 240") != std::string::npos);
    auto same = plan_named_mode(fb.board(), "15W", ApplyOptions{});
    REQUIRE_MESSAGE(same.is_ok(), same.status().to_string());
    // A mask file that holds no number is named, not taken for "no gating".
    fb.write("/sys/devices/platform/gpu.0/fbp_pg_mask", "on\n");
    auto bad = plan_named_mode(fb.board(), "15W", ApplyOptions{});
    REQUIRE_FALSE(bad.is_ok());
    CHECK(bad.status().message().find("fbp_pg_mask: GPU FBP_PG_MASK 'on' is not a non-negative integer mask") !=
          std::string::npos);
  }
  SUBCASE("a board that shows no mask file cannot take a gating mode") {
    FakeBoard fb(FakeKind::kAgxOrinR35);
    fs::remove(fb.root() / "sys/devices/17000000.ga10b/tpc_pg_mask");
    auto s = plan_named_mode(fb.board(), "MAXN", ApplyOptions{});
    REQUIRE_FALSE(s.is_ok());
    CHECK(s.status().message().find("the board shows no TPC_PG_MASK") != std::string::npos);
  }
}

TEST_CASE("pin current clocks (jetson_clocks) and restore") {
  auto pin_current = [](PowerController& ctl) {
    auto target = plan_pin_current(ctl.board(), ApplyOptions{});
    return target.is_ok() ? ctl.apply(*target) : target.status();
  };
  check_apply_then_restore(FakeKind::kXavierNxR35, pin_current,
                           {{"/sys/devices/system/cpu/cpufreq/policy2/scaling_min_freq", "1907200"},
                            {"/sys/devices/17000000.gv11b/devfreq/17000000.gv11b/min_freq", "1109250000"},
                            {"/sys/kernel/debug/bpmp/debug/clk/emc/rate", "1866000000"},
                            {"/sys/kernel/debug/bpmp/debug/clk/emc/mrq_rate_locked", "1"},
                            {"/sys/devices/system/cpu/cpu5/cpuidle/state1/disable", "1"}});
}

TEST_CASE("EMC pin honours a non-zero nvpmodel cap") {
  FakeBoard fb(FakeKind::kAgxXavierR32);
  fb.write("/sys/kernel/nvpmodel_emc_cap/emc_iso_cap", "1331200000\n");
  PowerController ctl(fb.board(), fb.state_dir());
  auto target = plan_pin_current(ctl.board(), ApplyOptions{});
  REQUIRE(target.is_ok());
  REQUIRE(target->emc_lock_hz.has_value());
  CHECK(*target->emc_lock_hz == 1331200000);
}

TEST_CASE("cpu0 is never offlined") {
  FakeBoard fb(FakeKind::kAgxXavierR32);
  PowerController ctl(fb.board(), fb.state_dir());
  DeviceTarget t;
  t.online[0] = false;
  Status s = ctl.apply(t);
  REQUIRE_FALSE(s.is_ok());
  CHECK(s.message().find("cpu0") != std::string::npos);
}

TEST_CASE("restore at agent start after a crash, and with nothing pending") {
  FakeBoard fb(FakeKind::kOrinNanoR36);
  FakeSystemctl systemctl(false);  // nvfancontrol not running: nothing to stop or start
  SystemctlServiceControl services(systemctl.path().string());
  auto before = fb.snapshot();
  {
    PowerController ctl(fb.board(), fb.state_dir(), std::make_shared<SystemctlServiceControl>(services));
    REQUIRE(ctl.apply(PowerMode{2, 729600, 306000000, 204000000}, ApplyOptions{true, true}).is_ok());
  }  // the agent "dies" here: no restore
  CHECK(diff_snapshots(before, fb.snapshot()) != "");
  auto r = restore_pending(fb.state_dir(), nullptr, &services);
  REQUIRE(r.is_ok());
  CHECK(*r);
  CHECK(diff_snapshots(before, fb.snapshot()) == "");
  auto again = restore_pending(fb.state_dir());
  REQUIRE(again.is_ok());
  CHECK_FALSE(*again);
  CHECK(systemctl.calls() == std::vector<std::string>{"is-active nvfancontrol|-"});
}

TEST_CASE("restore state file: format and corruption") {
  FakeBoard fb(FakeKind::kNanoR32);
  fs::path f = fb.path("/sys/devices/pwm-fan/target_pwm");
  REQUIRE(record_originals(fb.state_dir(), fb.root(), {{EntryRole::kOther, f}}).is_ok());
  REQUIRE(record_originals(fb.state_dir(), fb.root(), {{EntryRole::kOther, f}}).is_ok());  // no duplicate
  auto st = load_restore_state(fb.state_dir());
  REQUIRE(st.is_ok());
  REQUIRE(st->entries.size() == 1);
  CHECK(st->entries[0].original == "77\n");
  CHECK(st->root == fb.root());

  CHECK(record_originals(fb.state_dir(), fb.root() / "", {{EntryRole::kOther, f}}).is_ok());  // same root, trailing slash
  CHECK(normalized_root("/tmp/x/") == fs::path("/tmp/x"));
  CHECK(normalized_root("/") == fs::path("/"));
  auto other_root = record_originals(fb.state_dir(), fb.state_dir(), {{EntryRole::kOther, f}});
  CHECK(other_root.code() == Code::kInvalidArgument);

  REQUIRE(write_raw(restore_state_path(fb.state_dir()), "# jetsweep device restore state v1\nother\tx\tzz\n").is_ok());
  auto bad = load_restore_state(fb.state_dir());
  REQUIRE_FALSE(bad.is_ok());
  CHECK(bad.status().message().find("device-restore.state:2") != std::string::npos);
  auto r = restore_pending(fb.state_dir());
  CHECK_FALSE(r.is_ok());
}

TEST_CASE("drop_page_cache writes 3 to drop_caches") {
  FakeBoard fb(FakeKind::kAgxOrinR35);
  REQUIRE(drop_page_cache(fb.root()).is_ok());
  CHECK(fb.read("/proc/sys/vm/drop_caches") == "3");
  fb.remove("/proc/sys/vm/drop_caches");
  Status s = drop_page_cache(fb.root());
  REQUIRE_FALSE(s.is_ok());
  CHECK(s.message().find("drop_caches") != std::string::npos);
}

}  // namespace
}  // namespace jetsweep::device
