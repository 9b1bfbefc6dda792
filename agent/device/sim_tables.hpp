// Frequency tables of the simulated boards (data for the sim backend; the real-board path always
// reads its tables from the board). Immutable data; any thread.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.hpp"

namespace jetsweep::device {

struct SimBoardTables {
  std::string board_class;          // "nano", "xavier-nx", "agx-xavier", "agx-orin", "orin-nano"
  std::string module;               // "Nano", "Xavier NX", ...
  int cores = 0;
  std::vector<int64_t> cpu_khz;
  std::vector<int64_t> gpu_hz;
  std::vector<int64_t> emc_hz;
  uint64_t mode_count() const;      // cores x |cpu| x |gpu| x |emc|
};

// The names accepted by sim_board_tables().
std::vector<std::string> sim_board_classes();
// kInvalidArgument naming the class and listing the known ones.
Result<SimBoardTables> sim_board_tables(std::string_view board_class);

}  // namespace jetsweep::device
