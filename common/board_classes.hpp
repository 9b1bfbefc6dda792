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
  int64_t mem_gb = 0;               // nominal shared RAM (SIGMETRICS'23 sec.4.1, PowerTrain Table 5)
  std::vector<int64_t> cpu_khz;
  std::vector<int64_t> gpu_hz;
  std::vector<int64_t> emc_hz;
  uint64_t mode_count() const;      // cores x |cpu| x |gpu| x |emc|
  // What such a board reports as MemTotal: the nominal size less the carve-outs of the kernel and firmware,
  // taken as 3% (a Nano 4GB reports ~3.9 GiB); simulated boards advertise this.
  int64_t mem_total_bytes() const { return mem_gb * (int64_t{1} << 30) * 97 / 100; }
};

// The class names accepted by board_class_tables().
std::vector<std::string> board_classes();
// kInvalidArgument naming the class and listing the known ones.
Result<BoardClassTables> board_class_tables(std::string_view board_class);

// A run's `device` is a board class ("agx-xavier"), every enrolled board of a class ("agx-xavier/*",
// expanded by the controller at submission), an agent's name, or "any". The class it names, or "".
std::string device_target_class(std::string_view device);
// True for "CLASS/*".
bool is_every_instance(std::string_view device);

}  // namespace jetsweep
