// Glue between a run's power-mode request and the device layer: turns a named or partial explicit
// mode (0 = leave as is) into a DeviceTarget, and names a board's class the way RunConfig::device
// does. Free functions on immutable inputs; any thread.
#pragma once

#include <cstdint>
#include <string>

#include "agent/device/board.hpp"
#include "agent/device/power_control.hpp"
#include "common/status.hpp"

namespace jetsweep::device {

struct RunModeRequest {
  std::string name;       // nvpmodel mode name or id; when set the explicit fields must be 0
  int64_t cores = 0;      // 0 = leave as is
  int64_t cpu_khz = 0;
  int64_t gpu_hz = 0;
  int64_t emc_hz = 0;
  bool pin_clocks = false;
  std::string to_string() const;  // "nvpmodel MAXN" or "cores=2 cpu_khz=1036800 (others as is)"
};

// Validates every given value against the board's tables (errors name the table file and value)
// and plans only the knobs the request sets; pin_clocks pins the knobs it sets (min = max, cpuidle
// off, GPU railgate off, EMC locked when an EMC rate is given).
Result<DeviceTarget> plan_run_mode(const Board& board, const RunModeRequest& request);

// "nano", "xavier-nx", "agx-xavier", "agx-orin", "orin-nx", "orin-nano"; "jetson-<family>" otherwise.
std::string device_class_of(const BoardInfo& info);

}  // namespace jetsweep::device
