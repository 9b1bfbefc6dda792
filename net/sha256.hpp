// SHA-256 of files (model files: the agent's cache, the CLI's uploads; docs/WORKLOADS.md), through OpenSSL's libcrypto.
// Pure functions; any thread.
#pragma once

#include <string>

#include "common/status.hpp"

namespace jetsweep {

// SHA-256 of a file's bytes as 64 lowercase hex digits; kIoError naming the file when it cannot be read.
Result<std::string> sha256_file(const std::string& path);

}  // namespace jetsweep
