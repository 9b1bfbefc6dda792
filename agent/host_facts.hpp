// Facts about the machine an agent runs on (provenance stored with every result). Any thread.
#pragma once

#include <string>

#include "common/protocol.hpp"

namespace jetsweep::agent {

// `root` is the procfs root ("/" on a real machine); backend/device_class name what the agent drives.
proto::DeviceFacts collect_host_facts(const std::string& root, const std::string& backend,
                                      const std::string& device_class);

}  // namespace jetsweep::agent
