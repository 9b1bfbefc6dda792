// Frequency tables of each Jetson board class (nano, xavier-nx, agx-xavier, agx-orin, orin-nano), used by
// the campaign language to generate power modes and by simulated boards. Real boards always read their
// own tables from sysfs (agent/device/). Immutable data; any thread.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.hpp"

namespace jetsweep {

struct BoardClassTables {
  std::string board_class;          // "nano", "xavier-nx", "agx-xavier", "agx-orin", "orin-nano"
  std::string module;               // "Nano", "Xavier NX", ...
  int cores = 0;
  std::vector<int64_t> cpu_khz;
  std::vector<int64_t> gpu_hz;
  std::vector<int64_t> emc_hz;
  uint64_t mode_count() const;      // cores x |cpu| x |gpu| x |emc|
};

// The class names accepted by board_class_tables().
std::vector<std::string> board_classes();
// kInvalidArgument naming the class and listing the known ones.
Result<BoardClassTables> board_class_tables(std::string_view board_class);

}  // namespace jetsweep
