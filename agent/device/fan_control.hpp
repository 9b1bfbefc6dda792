// The board's fan as jetson_clocks drives it (R32 pwm-fan, R35+ pwm-fan hwmon and f75308 controllers) and the
// tachometer its speed is read from. Plain values and free functions; any thread.
#pragma once

#include <filesystem>
#include <optional>
#include <vector>

#include "agent/device/board.hpp"

namespace jetsweep::device {

// Fan control files found under root: R32 pwm-fan, or R35+ pwm-fan*/hwmon/hwmon*/pwm1 and every pwmN of an f75308
// controller (/sys/bus/i2c/drivers/f75308/*/hwmon/hwmon*/), as jetson_clocks drives them.
struct FanControl {
  bool legacy = false;                // R32 /sys/devices/pwm-fan
  fs::path temp_control;              // legacy only
  fs::path target_pwm;                // legacy only
  std::vector<fs::path> pwm;          // R35+ pwm files
  // The speed: legacy rpm_measured, the fan hwmon's fan1_input, or a separate tachometer hwmon's rpm /
  // rpm_measured; absent when the board has none.
  std::optional<fs::path> tach;
};
std::optional<FanControl> find_fan(const fs::path& root);
// Whether nvfancontrol.service manages this fan: L4T R35 or newer, or the R35 pwm-fan hwmon layout.
bool fan_service_manages(const Board& board, const FanControl& fan);

}  // namespace jetsweep::device
