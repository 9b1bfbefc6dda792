#include "agent/datasets/fingerprint.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "agent/storage/page_cache.hpp"
#include "common/log.hpp"
#include "common/text.hpp"
#include "net/sha256.hpp"

namespace jetsweep::agent {

namespace fs = std::filesystem;

namespace {

int64_t ns_of(const struct timespec& t) { return static_cast<int64_t>(t.tv_sec) * 1000000000 + t.tv_nsec; }

bool cacheable(const std::string& path) { return path.find_first_of("\t\n") == std::string::npos; }

// The deepest directory holding every path (all absolute and normal).
fs::path common_directory(const std::vector<fs::path>& paths) {
  fs::path common = paths.front().parent_path();
  for (const auto& p : paths) {
    const fs::path dir = p.parent_path();
    fs::path shared;
    auto a = common.begin(), b = dir.begin();
    for (; a != common.end() && b != dir.end() && *a == *b; ++a, ++b) shared /= *a;
    common = shared;
  }
  return common;
}

}  // namespace

DatasetFingerprinter::DatasetFingerprinter(std::string cache_file, int64_t settle_ns)
    : cache_file_(std::move(cache_file)), settle_ns_(settle_ns) {}

void DatasetFingerprinter::load() {
  loaded_ = true;
  if (cache_file_.empty()) return;
  std::ifstream in(cache_file_);
  std::string line;
  while (std::getline(in, line)) {   // a malformed line (a torn write, an older format) is skipped: rehashed
    const std::vector<std::string> f = split(line, '\t');
    if (f.size() != 7 || f[0].size() != 64 || f[6].empty()) continue;
    Key k;
    int64_t* fields[] = {&k.size, &k.mtime_ns, &k.ctime_ns, &k.dev, &k.ino};
    bool ok = true;
    for (size_t i = 0; i < 5 && ok; ++i) {
      const auto v = parse_int(f[i + 1]);
      ok = v.has_value();
      if (ok) *fields[i] = *v;
    }
    if (ok) entries_[f[6]] = Entry{k, f[0]};
  }
}

Status DatasetFingerprinter::save() const {
  if (cache_file_.empty()) return Status::ok();
  std::error_code ec;
  const fs::path target(cache_file_);
  if (target.has_parent_path()) fs::create_directories(target.parent_path(), ec);
  const std::string tmp = cache_file_ + ".tmp." + std::to_string(::getpid());   // one per process
  {
    std::ofstream out(tmp, std::ios::trunc);
    for (const auto& [path, e] : entries_)
      out << e.sha256 << '\t' << e.key.size << '\t' << e.key.mtime_ns << '\t' << e.key.ctime_ns << '\t' << e.key.dev
          << '\t' << e.key.ino << '\t' << path << '\n';
    out.flush();
    if (!out) {
      fs::remove(tmp, ec);
      return Status(Code::kIoError, "writing " + tmp + " failed");
    }
  }
  if (std::rename(tmp.c_str(), cache_file_.c_str()) != 0) {
    const std::string why = std::strerror(errno);
    fs::remove(tmp, ec);
    return Status(Code::kIoError, "renaming " + tmp + " to " + cache_file_ + ": " + why);
  }
  return Status::ok();
}

Result<DatasetFingerprint> DatasetFingerprinter::fingerprint(const std::vector<std::string>& files,
                                                            const std::atomic<bool>* cancel) {
  if (!loaded_) load();
  if (files.empty()) return invalid_argument("no files to fingerprint");
  std::vector<fs::path> paths;
  std::error_code ec;
  for (const auto& f : files) paths.push_back(fs::absolute(f, ec).lexically_normal());
  std::sort(paths.begin(), paths.end());
  paths.erase(std::unique(paths.begin(), paths.end()), paths.end());
  const fs::path base = common_directory(paths);
  std::vector<std::pair<std::string, std::string>> named;   // (relative, absolute)
  for (const auto& p : paths) named.emplace_back(p.lexically_relative(base).generic_string(), p.string());
  std::sort(named.begin(), named.end());

  const int64_t now_ns = std::chrono::duration_cast<std::chrono::nanoseconds>(
                             std::chrono::system_clock::now().time_since_epoch()).count();
  DatasetFingerprint out;
  Sha256 tree;
  bool changed = false;
  for (const auto& [relative, absolute] : named) {
    if (cancel && cancel->load()) return Status(Code::kCancelled, "cancelled while fingerprinting the dataset");
    struct stat st {};
    if (::stat(absolute.c_str(), &st) != 0) return Status(Code::kIoError, absolute + ": " + std::strerror(errno));
    const Key key{static_cast<int64_t>(st.st_size), ns_of(st.st_mtim), ns_of(st.st_ctim),
                  static_cast<int64_t>(st.st_dev), static_cast<int64_t>(st.st_ino)};
    std::string sha;
    auto cached = entries_.find(absolute);
    if (cached != entries_.end() && cached->second.key == key) {
      sha = cached->second.sha256;
    } else {
      Sha256 content;
      JS_RETURN_IF_ERROR(storage::read_leaving_cache(absolute, [&](const char* data, size_t size) { content.update(data, size); }));
      sha = content.hex_digest();
      if (sha.empty()) return internal_error("OpenSSL: SHA-256 unavailable");
      ++files_hashed_;
      if (cacheable(absolute) && now_ns - std::max(key.mtime_ns, key.ctime_ns) >= settle_ns_) {
        entries_[absolute] = Entry{key, sha};
        changed = true;
      }
    }
    const std::string size = std::to_string(st.st_size);
    for (const std::string* part : {&relative, &size}) {
      tree.update(part->data(), part->size());
      tree.update("\0", 1);
    }
    tree.update(sha.data(), sha.size());
    tree.update("\n", 1);
    ++out.files;
    out.bytes += key.size;
  }
  out.sha256 = tree.hex_digest();
  // The cache is an optimisation: a board whose cache cannot be written fingerprints correctly, only slower.
  if (changed) {
    Status saved = save();
    if (!saved.is_ok()) JS_LOG_WARN << "dataset fingerprint cache not saved (the next run hashes again): " << saved.message();
  }
  return out;
}

}  // namespace jetsweep::agent
