// The fingerprint of the data a run trains on (issue 31, docs/WORKLOADS.md "Which data each run saw"): proof that
// boards in a variability study read the same bytes. Over the files the dataset reads (Dataset::files() and
// label_files(): the IDX or CIFAR-10 batch files, the images and GLD-23k's CSV, the text corpus):
//
//   fingerprint = SHA-256 of the lines "RELATIVE_PATH \0 SIZE \0 SHA256_OF_CONTENT \n", one per distinct file,
//                 sorted by RELATIVE_PATH: its path below the deepest directory holding all of them ('/'-separated)
//
// so the same files anywhere (another board's path, CIFAR-10's batches in the root or in cifar-10-batches-bin/) give
// the same fingerprint, and a changed byte, a renamed, added or missing file changes it. Files next to the dataset
// that its reader does not read (a README, a test split) do not count.
//
// A file's content hash is computed once and kept by (absolute path, device, inode, size, mtime and ctime in ns) in
// memory and, when a cache file is given, in that file, so later runs only stat the files; a file changed within the
// last 2 s is not cached (coarse timestamps). Hashing reads through storage::read_leaving_cache: the page cache is
// left as it was found. Cache file format, one entry per line:
//   SHA256 \t SIZE \t MTIME_NS \t CTIME_NS \t DEV \t INO \t ABSOLUTE_PATH
// (paths holding a tab or a newline are hashed every time, never cached; other lines are skipped). The file is
// rewritten whole through a temporary file of this process and a rename, so a crash leaves the old or the new one.
// Torch-free. Not thread-safe: one owner (the training thread that executes runs).
#pragma once

#include <atomic>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "common/status.hpp"

namespace jetsweep::agent {

struct DatasetFingerprint {
  std::string sha256;   // 64 lowercase hex digits
  int64_t files = 0;
  int64_t bytes = 0;
};

class DatasetFingerprinter {
 public:
  static constexpr int64_t kDefaultSettleNs = int64_t{2} * 1000 * 1000 * 1000;
  // `cache_file` "" = content hashes kept in memory only. A file changed less than `settle_ns` ago is not cached.
  explicit DatasetFingerprinter(std::string cache_file = {}, int64_t settle_ns = kDefaultSettleNs);
  // The fingerprint of `files` (each listed once or more). kIoError naming a file that cannot be read or stat'ed;
  // kCancelled when `cancel` turns true (checked between files).
  Result<DatasetFingerprint> fingerprint(const std::vector<std::string>& files,
                                         const std::atomic<bool>* cancel = nullptr);
  // Content hashes computed (not found in the cache) since construction: what a test checks the cache by.
  int64_t files_hashed() const { return files_hashed_; }

 private:
  struct Key {
    int64_t size = 0, mtime_ns = 0, ctime_ns = 0, dev = 0, ino = 0;
    bool operator==(const Key& o) const {
      return size == o.size && mtime_ns == o.mtime_ns && ctime_ns == o.ctime_ns && dev == o.dev && ino == o.ino;
    }
  };
  struct Entry {
    Key key;
    std::string sha256;
  };
  void load();
  Status save() const;

  std::string cache_file_;
  int64_t settle_ns_;
  bool loaded_ = false;
  std::map<std::string, Entry> entries_;   // by absolute path
  int64_t files_hashed_ = 0;
};

}  // namespace jetsweep::agent
