// Reads back the state a run executes in (proto::BoardState: cores online, frequency caps, clocks pinned,
// fan) and the clocks at an epoch boundary (proto::ClockReading), from a sysfs root; and decides whether an
// epoch left the applied setting (throttled). Works on a Jetson Board and on a plain host (board = nullptr:
// CPU only). Free functions without shared state; any thread.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "agent/device/board.hpp"
#include "common/protocol.hpp"

namespace jetsweep::device {

// What the board shows now. mode_name / nvpmodel_id are left empty: only the caller knows which mode it
// applied. Files that cannot be read leave their field 0 ("unknown").
proto::BoardState read_board_state(const fs::path& root, const Board* board);
// Current clocks: online cores, mean current CPU frequency over online cores, GPU and EMC current rates.
proto::ClockReading read_clocks(const fs::path& root, const Board* board);

// Why the clocks `c` (read at an epoch boundary, or CPU frequencies sampled during it: cpu_khz only) are not
// in the `applied` state, or "" when they are: online cores changed; with clocks pinned, a clock more than 2%
// below its pinned rate (thermal or power throttling); unpinned, a clock more than 2% above its cap (the mode
// was changed under the run). Unknown (0 / absent) values are not judged.
std::string throttle_reason(const proto::BoardState& applied, const proto::ClockReading& c);

// Why the board throttles itself although its requested clocks look right, or "": an INA3221 over-current alarm
// raised now (R35+ currK_crit_alarm / currK_max_alarm), or, with clocks pinned, the measured GPU clock (BPMP
// nafll_gpc pto_counter) more than 2% below the pinned rate. Boards without those files are not judged.
std::string board_throttle_reason(const fs::path& root, const proto::BoardState& applied);

}  // namespace jetsweep::device
