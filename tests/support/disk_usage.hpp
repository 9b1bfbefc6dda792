// The disk space a file occupies, for tests that bound it (journals give back acknowledged space by punching holes).
#pragma once

#include <sys/stat.h>

#include <cstdint>
#include <filesystem>
#include <optional>

namespace jetsweep::testing {

// Its allocated blocks in bytes, not its length (a punched hole occupies nothing); nullopt when it cannot be read.
inline std::optional<uint64_t> allocated_bytes(const std::filesystem::path& p) {
  struct stat st {};
  if (::stat(p.c_str(), &st) != 0) return std::nullopt;
  return static_cast<uint64_t>(st.st_blocks) * 512;
}

}  // namespace jetsweep::testing
