// MNIST/Fashion-MNIST IDX file format (big-endian magic, dims, payload), plain or gzip-compressed.
// Pure functions; any thread.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "common/status.hpp"

namespace jetsweep::agent::idx {

struct IdxArray {
  uint8_t type_code = 0;          // 0x08 = unsigned byte
  std::vector<int64_t> dims;
  std::vector<uint8_t> data;
};

// Reads `path`, or `path.gz` when `path` does not exist; .gz files are inflated with zlib.
Result<IdxArray> read_file(const std::string& path);
Result<IdxArray> parse(const std::vector<uint8_t>& bytes, const std::string& where);
// Serialises an unsigned-byte IDX array (used by tests and `make-data`); gzip when path ends in .gz.
Status write_file(const std::string& path, const std::vector<int64_t>& dims, const std::vector<uint8_t>& data);

}  // namespace jetsweep::agent::idx
