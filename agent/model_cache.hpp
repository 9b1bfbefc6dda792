// The agent's TorchScript model files (docs/WORKLOADS.md, "Your own model"), each kept once as DIR/<sha256>.pt and
// checked against its name whenever a run uses it; least recently used files go when the cache outgrows its bound.
// Torch-free. Not thread-safe: one owner at a time (the CLI, or the training thread that executes runs).
#pragma once

#include <atomic>
#include <cstdint>
#include <string>

#include "common/status.hpp"
#include "net/sha256.hpp"   // sha256_file

namespace jetsweep::agent {

// Where a model file missing from the cache comes from: the controller, over the agent's connection
// (agent/model_fetch.hpp). fetch() writes the file's bytes to `dest`; it runs on the training thread and blocks.
class ModelSource {
 public:
  virtual ~ModelSource() = default;
  virtual Status fetch(const std::string& sha256, const std::string& dest, const std::atomic<bool>& cancel) = 0;
};

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
  // find(), and when the file is missing (or was damaged), fetches it from `source` into the cache. A download
  // that does not hash to its name is fetched once more, then fails naming both hashes.
  Result<std::string> find_or_fetch(const std::string& sha256, ModelSource& source, const std::atomic<bool>& cancel);
  const std::string& dir() const { return dir_; }
  std::string path_for(const std::string& sha256) const { return dir_ + "/" + sha256 + ".pt"; }

 private:
  void evict_beyond_bound(const std::string& keep);

  std::string dir_;
  int64_t max_bytes_;
};

// Where the model cache lives without --model-dir: /var/lib/jetsweep/model-files when running as root, else
// $XDG_CACHE_HOME/jetsweep/model-files or ~/.cache/jetsweep/model-files.
Result<std::string> default_model_dir();

}  // namespace jetsweep::agent
