#include "agent/model_cache.hpp"

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <memory>
#include <system_error>
#include <vector>

#include "common/log.hpp"
#include "common/run_config.hpp"
#include "net/sha256.hpp"

namespace jetsweep::agent {

namespace fs = std::filesystem;

ModelCache::ModelCache(std::string dir, int64_t max_bytes) : dir_(std::move(dir)), max_bytes_(max_bytes) {}

Result<std::string> ModelCache::add(const std::string& file) {
  JS_ASSIGN_OR_RETURN(std::string sha, sha256_file(file));
  std::error_code ec;
  fs::create_directories(dir_, ec);
  if (ec) return Status(Code::kIoError, "cannot create the model cache '" + dir_ + "': " + ec.message());
  const std::string target = path_for(sha);
  if (fs::exists(target, ec)) {
    auto cached = sha256_file(target);
    if (cached && cached.value() == sha) return sha;
  }
  const std::string tmp = target + ".tmp." + std::to_string(::getpid());
  fs::copy_file(file, tmp, fs::copy_options::overwrite_existing, ec);
  if (ec) return Status(Code::kIoError, "copying '" + file + "' into the model cache '" + dir_ + "': " + ec.message());
  if (FILE* f = std::fopen(tmp.c_str(), "rb")) {   // the bytes reach the disk before the name does
    (void)::fsync(::fileno(f));   // best effort: a cache entry that did not survive a crash fails its check and goes
    std::fclose(f);
  }
  fs::rename(tmp, target, ec);
  if (ec) {
    fs::remove(tmp, ec);
    return Status(Code::kIoError, "storing '" + target + "': " + ec.message());
  }
  evict_beyond_bound(sha);
  return sha;
}

Result<std::string> ModelCache::find(const std::string& sha256) {
  const std::string path = path_for(sha256);
  std::error_code ec;
  if (!fs::exists(path, ec))
    return Status(Code::kNotFound, "model " + std::string(kTorchScriptPrefix) + sha256 + " is not in the model cache '" + dir_ + "'");
  JS_ASSIGN_OR_RETURN(std::string actual, sha256_file(path));
  if (actual != sha256) {
    fs::remove(path, ec);
    JS_LOG_WARN << "model cache: " << path << " hashes to " << actual << ", not its name; deleted";
    return Status(Code::kNotFound, "the cached file of model " + std::string(kTorchScriptPrefix) + sha256 +
                                       " was damaged (its bytes hash to " + actual + ") and has been deleted");
  }
  fs::last_write_time(path, fs::file_time_type::clock::now(), ec);   // most recently used
  return path;
}

Result<std::string> ModelCache::find_or_fetch(const std::string& sha256, ModelSource& source, const std::atomic<bool>& cancel) {
  auto cached = find(sha256);
  if (cached || cached.status().code() != Code::kNotFound) return cached;
  std::error_code ec;
  fs::create_directories(dir_, ec);
  if (ec) return Status(Code::kIoError, "cannot create the model cache '" + dir_ + "': " + ec.message());
  const std::string tmp = path_for(sha256) + ".fetch." + std::to_string(::getpid());
  std::string last_hash;
  for (int attempt = 1; attempt <= 2; ++attempt) {
    Status fetched = source.fetch(sha256, tmp, cancel);
    if (!fetched.is_ok()) {
      fs::remove(tmp, ec);
      return fetched;
    }
    auto got = sha256_file(tmp);
    if (!got) {
      fs::remove(tmp, ec);
      return got.status();
    }
    if (got.value() == sha256) {
      fs::rename(tmp, path_for(sha256), ec);
      if (ec) {
        const std::string why = ec.message();
        fs::remove(tmp, ec);
        return Status(Code::kIoError, "storing '" + path_for(sha256) + "': " + why);
      }
      evict_beyond_bound(sha256);
      return path_for(sha256);
    }
    last_hash = got.value();
    JS_LOG_WARN << "model cache: the download of " << sha256 << " hashes to " << last_hash << " (attempt " << attempt << " of 2)";
  }
  fs::remove(tmp, ec);
  return Status(Code::kIoError, "model file " + sha256 + " was fetched twice and hashed to " + last_hash +
                                    " both times: not the file the run names");
}

void ModelCache::evict_beyond_bound(const std::string& keep) {
  struct Entry {
    fs::path path;
    fs::file_time_type used;
    int64_t bytes;
  };
  std::vector<Entry> entries;
  int64_t total = 0;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(dir_, ec)) {
    // Only entries (SHA-256.pt): never what else someone keeps in the directory.
    if (!e.is_regular_file(ec) || e.path().extension() != ".pt" || !is_sha256_hex(e.path().stem().string())) continue;
    const auto bytes = static_cast<int64_t>(e.file_size(ec));
    total += bytes;
    if (e.path().stem() != keep) entries.push_back({e.path(), e.last_write_time(ec), bytes});
  }
  std::sort(entries.begin(), entries.end(), [](const Entry& a, const Entry& b) { return a.used < b.used; });
  for (const Entry& e : entries) {
    if (total <= max_bytes_) break;
    if (fs::remove(e.path, ec)) {
      total -= e.bytes;
      JS_LOG_INFO << "model cache: evicted " << e.path.string() << " (" << e.bytes << " bytes; bound " << max_bytes_ << ")";
    }
  }
}

Result<std::string> default_model_dir() {
  if (::geteuid() == 0) return std::string("/var/lib/jetsweep/model-files");
  const char* cache = std::getenv("XDG_CACHE_HOME");
  if (cache && *cache == '/') return std::string(cache) + "/jetsweep/model-files";
  const char* home = std::getenv("HOME");
  if (!home || !*home) return invalid_argument("no $HOME to put the model cache under; pass --model-dir DIR");
  return std::string(home) + "/.cache/jetsweep/model-files";
}

}  // namespace jetsweep::agent
