// Parser for tegrastats output lines (R32, R35, R36 forms) into the telemetry BoardSample.
// Free functions; any thread.
#pragma once

#include <string_view>

#include "agent/device/board_telemetry.hpp"
#include "common/status.hpp"

namespace jetsweep::device {

// Understands: optional leading "MM-DD-YYYY HH:MM:SS" (sets t_s, UTC epoch seconds), RAM/SWAP,
// CPU [..] with "off" cores and optional "@MHz", EMC_FREQ / GR3D_FREQ with or without "@MHz"
// (or "@[MHz,MHz]"), R35.1's second GPU cluster GR3D2_FREQ (gpu_load_pct is then the clusters' mean, each in
// gpu_cluster_load_pct), Thor's load-less "GR3D_FREQ @[MHz,...]", NAME@tempC with or without decimals (-256 C
// zones dropped), rails "NAME cur/avg" (JetPack 7: "cur/avg/peak") with or without "mW". Total power follows
// total_power(). kInvalidArgument when the line has no known field.
Result<BoardSample> parse_tegrastats_line(std::string_view line);

}  // namespace jetsweep::device
