// Telemetry on every fake board: rails for both INA3221 drivers, total-power rule, loads, CPU,
// memory, temperatures, fan.
#include <doctest/doctest.h>

#include <algorithm>

#include "agent/device/board_state.hpp"
#include "agent/device/fs_util.hpp"
#include "agent/device/power_control.hpp"
#include "agent/device/board_telemetry.hpp"
#include "tests/device/device_checks.hpp"

namespace jetsweep::device {
namespace {

TelemetryReader open_reader(const FakeBoard& fb) {
  auto r = TelemetryReader::open(fb.root());
  REQUIRE_MESSAGE(r.is_ok(), r.status().to_string());
  return std::move(r).value();
}

TEST_CASE("telemetry reads rails and total power on every board") {
  for_each_fake_board([](const FakeBoard& fb, const testing::FakeSpec& spec) {
    TelemetryReader reader = open_reader(fb);
    BoardSample s = reader.read();
    CHECK(s.errors.empty());
    std::vector<std::string> names;
    for (const auto& r : s.rails) names.push_back(r.name);
    CHECK(names == spec.rail_names);
    for (const auto& r : s.rails) CHECK(r.power_mw.has_value());
    REQUIRE(s.total_power_w.has_value());
    CHECK(*s.total_power_w == doctest::Approx(spec.total_power_w).epsilon(1e-9));
    CHECK(s.total_power_rule == spec.total_rule);
    REQUIRE(s.gpu_load_pct.has_value());
    CHECK(*s.gpu_load_pct == doctest::Approx(73.4));
    REQUIRE(reader.gpu_load_path().has_value());
    CHECK(fs::equivalent(*reader.gpu_load_path(), fb.path(spec.gpu_load_path)));
    REQUIRE(s.gpu_freq_hz.has_value());
    CHECK(*s.gpu_freq_hz == static_cast<double>(spec.gpu_hz[spec.gpu_hz.size() / 2]));
    REQUIRE(s.emc_freq_hz.has_value());
    CHECK(*s.emc_freq_hz == static_cast<double>(spec.emc_hz.back()));
    REQUIRE(s.emc_util_pct.has_value());
    CHECK(*s.emc_util_pct > 0);
    CHECK(*s.emc_util_pct <= 100);
    CHECK(s.cores.size() == static_cast<size_t>(spec.cores));
    for (const auto& c : s.cores) {
      CHECK(c.online);
      REQUIRE(c.freq_khz.has_value());
      CHECK(*c.freq_khz == static_cast<double>(spec.cpu_khz.back()));
      CHECK_FALSE(c.util_pct.has_value());  // first read: no delta yet
    }
    CHECK(s.temps.size() == static_cast<size_t>(spec.live_thermal_zones));
    for (const auto& t : s.temps) CHECK(t.celsius > -256.0);
    REQUIRE(s.ram_total_mb.has_value());
    REQUIRE(s.ram_used_mb.has_value());
    CHECK(*s.ram_used_mb < *s.ram_total_mb);
    CHECK(s.nvmap_mb.has_value() == (spec.l4t_major >= 35));
    REQUIRE(s.fan_pwm.has_value());
    CHECK(*s.fan_pwm == (spec.legacy_fan ? 77.0 : 120.0));
    CHECK(s.fan_rpm == spec.fan_rpm);
    // Every rail shows its over-current limits; no alarm is raised on a quiet board.
    for (const auto& r : s.rails) {
      CHECK(r.warn_limit_ma == 6000.0);
      CHECK(r.crit_limit_ma == 8000.0);
      CHECK_FALSE(r.warn_alarm);
      CHECK_FALSE(r.crit_alarm);
    }
    // The measured GPU clock where BPMP has nafll_gpc counters (the Orins).
    CHECK(s.gpu_measured_freq_hz == spec.gpu_measured_hz);
    CHECK(spec.gpu_measured_hz.has_value() == (spec.family == Family::kT234));
  });
}

TEST_CASE("hwmon power is mV x mA / 1000 and in7 is not a rail") {
  FakeBoard fb(FakeKind::kXavierNxR35);
  TelemetryReader reader = open_reader(fb);
  CHECK(reader.rail_sources().size() == 3);
  BoardSample s = reader.read();
  REQUIRE(s.rails.size() == 3);
  CHECK(s.rails[0].name == "VDD_IN");
  CHECK(*s.rails[0].voltage_mv == 5000);
  CHECK(*s.rails[0].current_ma == 960);
  CHECK(*s.rails[0].power_mw == doctest::Approx(4800.0));
  CHECK(*s.rails[1].power_mw == doctest::Approx(750.0));
}

TEST_CASE("AGX Orin total power does not add VDDQ_VDD2_1V8AO on top of VIN_SYS_5V0, and skips NC") {
  FakeBoard fb(FakeKind::kAgxOrinR35);
  BoardSample s = open_reader(fb).read();
  CHECK(s.rails.size() == 6);
  double all = 0;
  for (const auto& r : s.rails) all += *r.power_mw;
  REQUIRE(s.total_power_w.has_value());
  CHECK(*s.total_power_w * 1000 < all);  // VDDQ left out
  CHECK(*s.total_power_w == doctest::Approx((4992.0 * 481 + 4992.0 * 80 + 4984.0 * 809) / 1e6));
  CHECK(s.total_power_rule.find("VDDQ") == std::string::npos);
  CHECK(s.total_power_rule.find("NC") == std::string::npos);
}

TEST_CASE("hwmon numbers are not assumed: renumbered hwmon folders still give the same rails") {
  FakeBoard fb(FakeKind::kAgxOrinR36);
  fs::path dev = fb.path("/sys/devices/platform/bus@0/c240000.i2c/i2c-1/1-0040/hwmon");
  fs::rename(dev / "hwmon1", dev / "hwmon11");
  BoardSample s = open_reader(fb).read();
  CHECK(s.rails.size() == 6);
  CHECK(s.total_power_w.has_value());
}

TEST_CASE("total_power rules") {
  CHECK_FALSE(total_power({}).watts.has_value());
  std::vector<Rail> rails = {Rail::with_power("VDD_CPU_GPU_CV", 500.0), Rail::with_power("VDD_IN", 4000.0), Rail::with_power("VDD_SOC", 1000.0)};
  TotalPower a = total_power(rails);
  CHECK(*a.watts == doctest::Approx(4.0));
  CHECK(a.rule == "VDD_IN");
  std::vector<Rail> sum = {Rail::with_power("GPU", 1000.0), Rail::with_power("NC", 50.0), Rail::with_power("CPU", 500.0)};
  TotalPower b = total_power(sum);
  CHECK(*b.watts == doctest::Approx(1.5));
  CHECK(b.rule == "sum(GPU+CPU)");
  // Without its feeder, VDDQ_VDD2_1V8AO counts.
  std::vector<Rail> no_feeder = {Rail::with_power("VDD_GPU_SOC", 1000.0), Rail::with_power("VDDQ_VDD2_1V8AO", 300.0)};
  CHECK(*total_power(no_feeder).watts == doctest::Approx(1.3));
}

TEST_CASE("CPU utilisation from /proc/stat deltas, offline cores after a mode change") {
  FakeBoard fb(FakeKind::kOrinNanoR36);
  TelemetryReader reader = open_reader(fb);
  BoardSample first = reader.read();
  CHECK_FALSE(first.cpu_util_pct.has_value());
  // Deltas: cpu0 75% busy, cpu1 25%, others idle-only (0%).
  std::vector<std::pair<uint64_t, uint64_t>> next;
  for (int i = 0; i < 6; ++i) {
    uint64_t busy = 1000 + 10 * static_cast<uint64_t>(i), idle = 9000;
    if (i == 0) busy += 75, idle += 25;
    else if (i == 1) busy += 25, idle += 75;
    else idle += 100;
    next.emplace_back(busy, idle);
  }
  fb.set_proc_stat(next);
  BoardSample second = reader.read();
  REQUIRE(second.cores[0].util_pct.has_value());
  CHECK(*second.cores[0].util_pct == doctest::Approx(75.0));
  CHECK(*second.cores[1].util_pct == doctest::Approx(25.0));
  CHECK(*second.cores[5].util_pct == doctest::Approx(0.0));
  REQUIRE(second.cpu_util_pct.has_value());
  CHECK(*second.cpu_util_pct == doctest::Approx(100.0 / 6.0));
  CHECK(second.t_s >= first.t_s);

  auto board = open_board(fb.root());
  REQUIRE(board.is_ok());
  PowerController ctl(std::move(board).value(), fb.state_dir());
  REQUIRE(ctl.apply(PowerMode{4, 960000, 408000000, 2133000000}, ApplyOptions{}).is_ok());
  BoardSample third = reader.read();
  CHECK(third.cores[3].online);
  CHECK_FALSE(third.cores[4].online);
  CHECK_FALSE(third.cores[4].freq_khz.has_value());
  REQUIRE(ctl.restore().is_ok());
}

TEST_CASE("unreadable sensor files are reported, not fatal") {
  FakeBoard fb(FakeKind::kAgxXavierR32);
  TelemetryReader reader = open_reader(fb);
  fb.remove("/sys/devices/3160000.i2c/i2c-1/1-0041/iio:device1/in_power2_input");
  BoardSample s = reader.read();
  CHECK_FALSE(s.rails[5].power_mw.has_value());
  CHECK(std::any_of(s.errors.begin(), s.errors.end(),
                    [](const std::string& e) { return e.find("in_power2_input") != std::string::npos; }));
  REQUIRE(s.total_power_w.has_value());
  CHECK(*s.total_power_w == doctest::Approx((1155 + 385 + 2502 + 0 + 192) / 1000.0));
}

TEST_CASE("BoardSample JSON carries the fields") {
  FakeBoard fb(FakeKind::kNanoR32);
  auto j = to_json(open_reader(fb).read());
  CHECK(j.at("total_power_rule").as_string() == "POM_5V_IN");
  CHECK(j.at("rails").as_array().size() == 3);
  CHECK(j.at("cores").as_array().size() == 4);
  CHECK(j.at("nvmap_mb").is_null());
  CHECK(j.at("gpu_load_pct").as_double() == doctest::Approx(73.4));
}

TEST_CASE("an f75308 fan controller and a separate tachometer: every pwm at full speed, the tachometer's rpm") {
  FakeBoard fb(FakeKind::kAgxOrinR35);
  auto fan = find_fan(fb.root());
  REQUIRE(fan.has_value());
  REQUIRE(fan->pwm.size() == 3);  // pwm-fan pwm1, f75308 pwm1 and pwm2 (pwm1_enable is no channel)
  CHECK(fan->pwm[1].filename() == "pwm1");
  CHECK(fan->pwm[1].parent_path().filename() == "hwmon5");
  REQUIRE(fan->tach.has_value());
  CHECK(fan->tach->filename() == "rpm");
  CHECK(*open_reader(fb).read().fan_rpm == 2150);
}

TEST_CASE("over-current alarms and a measured GPU clock below the pinned rate are throttle reasons") {
  FakeBoard fb(FakeKind::kAgxOrinR36);
  Board board = fb.board();
  proto::BoardState applied = read_board_state(fb.root(), &board);
  applied.clocks_pinned = true;
  applied.gpu_hz = 816000000;
  fb.write("/sys/kernel/debug/bpmp/debug/clk/nafll_gpc0/pto_counter", "816000000\n");
  fb.write("/sys/kernel/debug/bpmp/debug/clk/nafll_gpc1/pto_counter", "0\n");  // a gated GPC reads 0: not judged
  CHECK(board_throttle_reason(fb.root(), applied) == "");
  // The requested clock is unchanged, the measured one is not.
  fb.write("/sys/kernel/debug/bpmp/debug/clk/nafll_gpc1/pto_counter", "612000000\n");
  std::string why = board_throttle_reason(fb.root(), applied);
  CHECK(why == "GPU measured at 612.0 MHz (nafll_gpc pto_counter), pinned at 816.0 MHz");
  applied.clocks_pinned = false;  // unpinned, a lower clock is DVFS at work
  CHECK(board_throttle_reason(fb.root(), applied) == "");
  // An over-current alarm throttles the board whatever its clocks read.
  const std::string hw = "/sys/devices/platform/bus@0/c240000.i2c/i2c-1/1-0040/hwmon/hwmon1";
  fb.write(hw + "/curr1_crit_alarm", "1\n");
  why = board_throttle_reason(fb.root(), applied);
  CAPTURE(why);
  CHECK(why.rfind("over-current alarm VDD_GPU_SOC curr1_crit_alarm (", 0) == 0);
  BoardSample s = open_reader(fb).read();
  REQUIRE_FALSE(s.rails.empty());
  CHECK(s.rails[0].crit_alarm);
  CHECK_FALSE(s.rails[0].warn_alarm);
  auto j = to_json(s);
  CHECK(j.at("rails").as_array()[0].as_object().at("crit_alarm").as_bool());
}

}  // namespace
}  // namespace jetsweep::device
