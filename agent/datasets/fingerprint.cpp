#include "agent/datasets/fingerprint.hpp"

#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <vector>

#include "common/log.hpp"
#include "net/sha256.hpp"

namespace jetsweep::agent {

namespace fs = std::filesystem;

namespace {

constexpr int kMaxDepth = 64;   // deeper means a loop of directory links

struct FileStat {
  int64_t size = 0;
  int64_t mtime_ns = 0;
};

Result<FileStat> stat_file(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0)
    return Status(errno == ENOENT ? Code::kNotFound : Code::kIoError, path + ": " + std::strerror(errno));
  return FileStat{static_cast<int64_t>(st.st_size),
                  static_cast<int64_t>(st.st_mtim.tv_sec) * 1000000000 + static_cast<int64_t>(st.st_mtim.tv_nsec)};
}

bool cacheable(const std::string& path) { return path.find_first_of("\t\n") == std::string::npos; }

// Every regular file under `root` (followed links included) as (relative '/'-path, absolute path), sorted.
Result<std::vector<std::pair<std::string, std::string>>> list_files(const fs::path& root) {
  std::vector<std::pair<std::string, std::string>> files;
  std::error_code ec;
  if (fs::is_regular_file(root, ec)) {
    files.emplace_back(root.filename().generic_string(), fs::absolute(root, ec).string());
    return files;
  }
  if (!fs::is_directory(root, ec)) return Status(Code::kNotFound, root.string() + ": no such file or directory");
  const fs::path base = fs::absolute(root, ec);
  fs::recursive_directory_iterator it(base, fs::directory_options::follow_directory_symlink, ec);
  if (ec) return Status(Code::kIoError, base.string() + ": " + ec.message());
  for (; it != fs::recursive_directory_iterator(); it.increment(ec)) {
    if (ec) return Status(Code::kIoError, "listing " + base.string() + ": " + ec.message());
    if (it.depth() > kMaxDepth)
      return Status(Code::kIoError, it->path().string() + ": more than " + std::to_string(kMaxDepth) +
                                        " directories deep (a loop of directory links?)");
    if (!it->is_regular_file(ec)) continue;   // directories, sockets, dangling links: no bytes to train on
    files.emplace_back(it->path().lexically_relative(base).generic_string(), it->path().string());
  }
  if (ec) return Status(Code::kIoError, "listing " + base.string() + ": " + ec.message());
  std::sort(files.begin(), files.end());
  return files;
}

}  // namespace

DatasetFingerprinter::DatasetFingerprinter(std::string cache_file) : cache_file_(std::move(cache_file)) {}

void DatasetFingerprinter::load() {
  loaded_ = true;
  if (cache_file_.empty()) return;
  std::ifstream in(cache_file_);
  std::string line;
  while (std::getline(in, line)) {   // a malformed line (a torn write of an older format) is skipped: rehashed
    std::istringstream fields(line);
    std::string sha, size, mtime, path;
    if (!std::getline(fields, sha, '\t') || !std::getline(fields, size, '\t') || !std::getline(fields, mtime, '\t') ||
        !std::getline(fields, path) || sha.size() != 64 || path.empty())
      continue;
    try {
      entries_[path] = Entry{std::stoll(size), std::stoll(mtime), sha};
    } catch (const std::exception&) {
      continue;
    }
  }
}

Status DatasetFingerprinter::save() const {
  if (cache_file_.empty()) return Status::ok();
  std::error_code ec;
  const fs::path target(cache_file_);
  if (target.has_parent_path()) fs::create_directories(target.parent_path(), ec);
  const std::string tmp = cache_file_ + ".tmp";
  {
    std::ofstream out(tmp, std::ios::trunc);
    for (const auto& [path, e] : entries_) out << e.sha256 << '\t' << e.size << '\t' << e.mtime_ns << '\t' << path << '\n';
    out.flush();
    if (!out) {
      fs::remove(tmp, ec);
      return Status(Code::kIoError, "writing " + tmp + ": " + std::strerror(errno));
    }
  }
  if (std::rename(tmp.c_str(), cache_file_.c_str()) != 0) {
    const std::string why = std::strerror(errno);
    fs::remove(tmp, ec);
    return Status(Code::kIoError, "renaming " + tmp + " to " + cache_file_ + ": " + why);
  }
  return Status::ok();
}

Result<DatasetFingerprint> DatasetFingerprinter::fingerprint(const std::string& root) {
  if (!loaded_) load();
  JS_ASSIGN_OR_RETURN(auto files, list_files(fs::path(root)));
  DatasetFingerprint out;
  Sha256 tree;
  bool changed = false;
  for (const auto& [relative, absolute] : files) {
    JS_ASSIGN_OR_RETURN(FileStat st, stat_file(absolute));
    std::string sha;
    auto cached = entries_.find(absolute);
    if (cached != entries_.end() && cached->second.size == st.size && cached->second.mtime_ns == st.mtime_ns) {
      sha = cached->second.sha256;
    } else {
      auto hashed = sha256_file(absolute);
      if (!hashed) return hashed.status().with_context("fingerprinting dataset " + root);
      sha = hashed.value();
      ++files_hashed_;
      if (cacheable(absolute)) {
        entries_[absolute] = Entry{st.size, st.mtime_ns, sha};
        changed = true;
      }
    }
    const std::string size = std::to_string(st.size);
    tree.update(relative.data(), relative.size());
    tree.update("\0", 1);
    tree.update(size.data(), size.size());
    tree.update("\0", 1);
    tree.update(sha.data(), sha.size());
    tree.update("\n", 1);
    ++out.files;
    out.bytes += st.size;
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
