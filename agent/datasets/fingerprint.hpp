// The fingerprint of the data a run trains on (issue 31, docs/WORKLOADS.md "Which data each run saw"): proof that
// boards in a variability study read the same bytes. For a dataset root (a directory tree, or one file):
//
//   fingerprint = SHA-256 of the lines "RELATIVE_PATH \0 SIZE \0 SHA256_OF_CONTENT \n", one per regular file,
//                 sorted by relative path ('/'-separated, byte order); symbolic links are followed.
//
// A file's content hash is computed once and kept by (absolute path, size, mtime in ns) in memory and, when a
// cache file is given, in that file, so that later runs only stat the tree. Cache file format, one entry per line:
//   SHA256 \t SIZE \t MTIME_NS \t ABSOLUTE_PATH
// (paths holding a tab or a newline are hashed every time, never cached). The file is rewritten whole through a
// temporary file and a rename, so a crash leaves the old or the new one. Torch-free. Not thread-safe: one owner
// (the training thread that executes runs).
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <tuple>

#include "common/status.hpp"

namespace jetsweep::agent {

struct DatasetFingerprint {
  std::string sha256;   // 64 lowercase hex digits
  int64_t files = 0;
  int64_t bytes = 0;
};

class DatasetFingerprinter {
 public:
  // `cache_file` "" = content hashes kept in memory only.
  explicit DatasetFingerprinter(std::string cache_file = {});
  // kNotFound when `root` does not exist; kIoError naming the file that cannot be read.
  Result<DatasetFingerprint> fingerprint(const std::string& root);
  // Content hashes computed (not found in the cache) since construction: what a test checks the cache by.
  int64_t files_hashed() const { return files_hashed_; }

 private:
  struct Entry {
    int64_t size = 0;
    int64_t mtime_ns = 0;
    std::string sha256;
  };
  void load();
  Status save() const;

  std::string cache_file_;
  bool loaded_ = false;
  std::map<std::string, Entry> entries_;   // by absolute path
  int64_t files_hashed_ = 0;
};

}  // namespace jetsweep::agent
