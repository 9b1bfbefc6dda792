// The agent's TorchScript model files (docs/WORKLOADS.md, "Your own model"), each kept once as DIR/<sha256>.pt and
// checked against its name whenever a run uses it; least recently used files go when the cache outgrows its bound.
// Torch-free. Not thread-safe: one owner at a time (the CLI, or the training thread that executes runs).
#pragma once

#include <cstdint>
#include <string>

#include "common/status.hpp"

namespace jetsweep::agent {

// SHA-256 of a file's bytes as 64 lowercase hex digits; kIoError naming the file when it cannot be read.
Result<std::string> sha256_file(const std::string& path);

class ModelCache {
 public:
  static constexpr int64_t kDefaultMaxBytes = int64_t{4} << 30;   // 4 GiB
  // `dir` is created on first add(); max_bytes bounds the files' total size (the newest file always stays).
  explicit ModelCache(std::string dir, int64_t max_bytes = kDefaultMaxBytes);

  // Copies `file` in (written to a temporary name, synced, renamed) and returns its SHA-256. A file already
  // cached under that hash is kept as it is. Evicts older entries beyond the bound.
  Result<std::string> add(const std::string& file);
  // The path of the entry for `sha256`, after checking its bytes still hash to it (its mtime is then touched: it
  // is the most recently used). kNotFound when absent; an entry whose bytes no longer match (damaged, tampered
  // with) is deleted and reported as kNotFound saying so, so that it is fetched again.
  Result<std::string> find(const std::string& sha256);
  const std::string& dir() const { return dir_; }
  std::string path_for(const std::string& sha256) const { return dir_ + "/" + sha256 + ".pt"; }

 private:
  void evict_beyond_bound(const std::string& keep);

  std::string dir_;
  int64_t max_bytes_;
};

// Where the model cache lives without --model-dir: /var/lib/jetsweep/models when running as root, else
// $XDG_CACHE_HOME/jetsweep/models or ~/.cache/jetsweep/models.
Result<std::string> default_model_dir();

}  // namespace jetsweep::agent
