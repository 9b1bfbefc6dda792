// Command-line entry points of the device layer, called from the agent's main:
//   probe    [--root DIR] [--json]
//   set-mode [--root DIR] [--state-dir DIR] (--mode NAME | --cores N --cpu-khz F --gpu-hz F --emc-hz F)
//            [--pin-clocks] [--fan-max]
//   restore  [--root DIR] [--state-dir DIR]
// Exit codes: 0 ok, 1 the operation failed, 2 bad arguments (the message names the flag).
// Never throws. Any thread, but set-mode/restore must not run concurrently on one state dir.
#pragma once

#include <ostream>
#include <string>
#include <vector>

namespace jetsweep::device {

inline constexpr const char* kDefaultStateDir = "/var/lib/jetsweep";

int device_cli_main(const std::string& subcommand, const std::vector<std::string>& args, std::ostream& out,
                    std::ostream& err);

}  // namespace jetsweep::device
