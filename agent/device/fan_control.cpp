#include "agent/device/fan_control.hpp"

#include "agent/device/fs_util.hpp"

namespace jetsweep::device {

std::optional<FanControl> find_fan(const fs::path& root) {
  fs::path legacy = under(root, "/sys/devices/pwm-fan");
  if (exists_file(legacy / "target_pwm")) {
    FanControl f;
    f.legacy = true;
    f.temp_control = legacy / "temp_control";
    f.target_pwm = legacy / "target_pwm";
    if (exists_file(legacy / "rpm_measured")) f.tach = legacy / "rpm_measured";
    return f;
  }
  FanControl f;
  for (const auto& dev : list_prefixed(under(root, "/sys/devices/platform"), "pwm-fan")) {
    for (const auto& hw : list_prefixed(dev / "hwmon", "hwmon")) {
      if (exists_file(hw / "pwm1")) f.pwm.push_back(hw / "pwm1");
      if (!f.tach && exists_file(hw / "fan1_input")) f.tach = hw / "fan1_input";
    }
  }
  // R35 carriers with an f75308 fan controller: jetson_clocks drives every pwmN it has.
  for (const auto& dev : list_prefixed(under(root, "/sys/bus/i2c/drivers/f75308"), "")) {
    for (const auto& hw : list_prefixed(dev / "hwmon", "hwmon")) {
      for (const auto& p : list_prefixed(hw, "pwm")) {
        if (numeric_suffix(p.filename().string(), "pwm") && exists_file(p)) f.pwm.push_back(p);
      }
      if (!f.tach && exists_file(hw / "fan1_input")) f.tach = hw / "fan1_input";
    }
  }
  if (f.pwm.empty()) return std::nullopt;
  // A tachometer on its own hwmon (Orin: the pwm-tachometer's rpm): the first hwmon under /sys/class/hwmon that
  // has an rpm, rpm_measured or (named after a tachometer) fan1_input file.
  if (!f.tach) {
    for (const auto& hw : list_prefixed(under(root, "/sys/class/hwmon"), "hwmon")) {
      auto name = read_trimmed(hw / "name");
      const bool tach_named = name.is_ok() && name->find("tach") != std::string::npos;
      for (const char* leaf : {"rpm", "rpm_measured", "fan1_input"}) {
        if (f.tach || (std::string(leaf) == "fan1_input" && !tach_named)) continue;
        if (exists_file(hw / leaf)) f.tach = hw / leaf;
      }
    }
  }
  return f;
}

bool fan_service_manages(const Board& board, const FanControl& fan) {
  return board.info.l4t_major() >= 35 || !fan.legacy;
}

}  // namespace jetsweep::device
