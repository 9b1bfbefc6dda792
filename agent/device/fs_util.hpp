// Small file helpers for sysfs/procfs/debugfs access under a root directory.
// Free functions without shared state: any thread may call them.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.hpp"
#include "common/text.hpp"

namespace jetsweep::device {

namespace fs = std::filesystem;

// `root` joined with an absolute board path such as "/sys/devices/gpu.0/load".
fs::path under(const fs::path& root, std::string_view board_path);

// Whole file content, byte for byte (sysfs files are read with a read() loop).
Result<std::string> read_raw(const fs::path& path);
// Content without surrounding whitespace and NUL bytes (device-tree strings end in NUL).
Result<std::string> read_trimmed(const fs::path& path);
// A single integer (decimal, optionally negative); kInvalidArgument names the path and text.
Result<int64_t> read_int(const fs::path& path);
// A whitespace-separated list of integers; ignores a trailing unit token such as "(kHz)".
Result<std::vector<int64_t>> read_int_list(const fs::path& path);

// Writes all of `data` to the open `fd` (retrying on EINTR and short writes); 0, or the errno of the failed write.
int write_all(int fd, std::string_view data);
// Writes `value` with one write(); kIoError names the path, the value and errno.
Status write_raw(const fs::path& path, std::string_view value);
// Writes `value` then reads the file back and compares trimmed text (numerically when both
// sides are integers); a mismatch is kIoError naming the path, the value written and the value read.
Status write_verified(const fs::path& path, std::string_view value);

// trim, parse_int, parse_double, from_chars_double, split_ws: common/text.hpp.
using jetsweep::from_chars_double;
using jetsweep::parse_double;
using jetsweep::parse_int;
using jetsweep::split_ws;
using jetsweep::trim;
// "0-3,6,8-9" or "0 1 2 3" -> sorted CPU numbers; nullopt on malformed input.
std::optional<std::vector<int>> parse_cpu_list(std::string_view text);

// Directory entries whose names start with `prefix`, sorted with numeric suffixes in numeric
// order (hwmon2 < hwmon10). Follows symlinked directories. Empty if `dir` is missing.
std::vector<fs::path> list_prefixed(const fs::path& dir, std::string_view prefix);
// Numeric suffix of a name such as "cpu12" or "thermal_zone3" after `prefix`.
std::optional<int> numeric_suffix(std::string_view name, std::string_view prefix);

// Resolves symlinks of `path` (which lies under `root`) keeping absolute link targets inside
// `root`, so a copied board tree with absolute links still resolves into the copy.
Result<fs::path> resolve_in_root(const fs::path& root, const fs::path& path);

bool exists_file(const fs::path& path);
bool is_writable(const fs::path& path);

// FNV-1a 64-bit hash as 16 lowercase hex digits (provenance of config files).
std::string fnv1a64_hex(std::string_view data);

}  // namespace jetsweep::device
