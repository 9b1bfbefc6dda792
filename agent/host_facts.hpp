// Facts about the machine an agent runs on (provenance stored with every result). Any thread.
#pragma once

#include <string>

#include "common/protocol.hpp"

namespace jetsweep::agent {

// `root` is the procfs root ("/" on a real machine); backend/device_class name what the agent drives.
proto::DeviceFacts collect_host_facts(const std::string& root, const std::string& backend,
                                      const std::string& device_class);

// The boot the boot clock (proto::boot_now_s) counts from: <root>/proc/sys/kernel/random/boot_id, a UUID the kernel
// draws at boot; "" when it cannot be read or is malformed (a fake tree without it: runs and clock probes then carry
// no boot clock readings, and the controller places them by the wall clock alone).
std::string read_boot_id(const std::string& root);

}  // namespace jetsweep::agent
