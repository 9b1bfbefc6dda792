#include "agent/storage/page_cache.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <memory>
#include <cerrno>
#include <cstring>
#include <vector>

namespace jetsweep::agent::storage {

namespace {
int64_t page_size() {
  static const int64_t kPage = ::sysconf(_SC_PAGESIZE);
  return kPage;
}

// Closes a descriptor on scope exit.
struct Fd {
  int fd;
  ~Fd() {
    if (fd >= 0) ::close(fd);
  }
};
}  // namespace

Result<CacheResidency> file_residency(const std::string& path) {
  Fd f{::open(path.c_str(), O_RDONLY | O_CLOEXEC)};
  if (f.fd < 0) return io_error(path + ": cannot open: " + std::strerror(errno));
  struct stat st {};
  if (::fstat(f.fd, &st) != 0) return io_error(path + ": fstat: " + std::strerror(errno));
  CacheResidency r;
  r.files = 1;
  if (st.st_size == 0) return r;
  const int64_t pages = (static_cast<int64_t>(st.st_size) + page_size() - 1) / page_size();
  void* map = ::mmap(nullptr, static_cast<size_t>(st.st_size), PROT_READ, MAP_SHARED, f.fd, 0);
  if (map == MAP_FAILED) return io_error(path + ": mmap: " + std::strerror(errno));
  std::vector<unsigned char> vec(static_cast<size_t>(pages));
  const int rc = ::mincore(map, static_cast<size_t>(st.st_size), vec.data());
  const int err = errno;
  ::munmap(map, static_cast<size_t>(st.st_size));
  if (rc != 0) return io_error(path + ": mincore: " + std::strerror(err));
  r.total_pages = pages;
  for (unsigned char v : vec) r.resident_pages += v & 1;
  return r;
}

Result<CacheResidency> page_cache_residency(const std::vector<std::string>& files) {
  CacheResidency total;
  Status last;
  for (const auto& path : files) {
    auto r = file_residency(path);
    if (!r) {
      ++total.unreadable_files;
      last = r.status();
      continue;
    }
    total.resident_pages += r->resident_pages;
    total.total_pages += r->total_pages;
    total.files += 1;
  }
  if (total.files == 0 && !files.empty()) return last.with_context("page-cache residency of " + std::to_string(files.size()) + " file(s)");
  return total;
}

Status evict_file(const std::string& path) {
  Fd f{::open(path.c_str(), O_RDONLY | O_CLOEXEC)};
  if (f.fd < 0) return io_error(path + ": cannot open: " + std::strerror(errno));
  ::fdatasync(f.fd);
  const int rc = ::posix_fadvise(f.fd, 0, 0, POSIX_FADV_DONTNEED);
  if (rc != 0) return io_error(path + ": posix_fadvise(DONTNEED): " + std::strerror(rc));
  return Status::ok();
}

namespace {

// Reads `fd` (opened with O_DIRECT) through `consume`: the page cache is neither read nor filled. Returns errno of a
// read that failed (EINVAL: this file system or file does not allow direct reads), 0 when all was read.
int read_direct(int fd, const std::function<void(const char*, size_t)>& consume) {
  constexpr size_t kBlock = 1 << 20;   // a multiple of any logical block size
  void* raw = nullptr;
  if (::posix_memalign(&raw, 4096, kBlock) != 0) return ENOMEM;
  std::unique_ptr<char, decltype(&std::free)> buf(static_cast<char*>(raw), &std::free);
  for (;;) {
    const ssize_t got = ::read(fd, buf.get(), kBlock);
    if (got < 0 && errno == EINTR) continue;
    if (got < 0) return errno;
    if (got == 0) return 0;
    consume(buf.get(), static_cast<size_t>(got));
  }
}

}  // namespace

Status read_leaving_cache(const std::string& path, const std::function<void(const char*, size_t)>& consume) {
  // Direct reads bypass the page cache altogether (the kernel keeps them coherent with cached pages).
  {
    Fd direct{::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_DIRECT)};
    if (direct.fd >= 0) {
      size_t consumed = 0;
      const int err = read_direct(direct.fd, [&](const char* d, size_t n) {
        consume(d, n);
        consumed += n;
      });
      if (err == 0) return Status::ok();
      // EINVAL before any byte: direct reads not allowed here (tmpfs, some file systems): read through the cache.
      if (err != EINVAL || consumed > 0) return io_error(path + ": read: " + std::strerror(err));
    }
  }
  Fd f{::open(path.c_str(), O_RDONLY | O_CLOEXEC)};
  if (f.fd < 0) return io_error(path + ": cannot open: " + std::strerror(errno));
  struct stat st {};
  if (::fstat(f.fd, &st) != 0) return io_error(path + ": fstat: " + std::strerror(errno));
  const auto size = static_cast<size_t>(st.st_size);
  const auto page = static_cast<size_t>(page_size());
  // Which pages were resident before. mincore() answers truthfully only for files this process owns or may
  // write (Linux >= 5.2 reports every page resident otherwise): then nothing can be known, and nothing is dropped.
  std::vector<unsigned char> before;
  if (size > 0 && (st.st_uid == ::geteuid() || ::access(path.c_str(), W_OK) == 0)) {
    void* map = ::mmap(nullptr, size, PROT_READ, MAP_SHARED, f.fd, 0);
    if (map != MAP_FAILED) {
      before.resize((size + page - 1) / page);
      if (::mincore(map, size, before.data()) != 0) before.clear();
      ::munmap(map, size);
    }
  }
  // Each block's pages that were not resident before are dropped as soon as it is consumed: a file larger than
  // memory does not push out what was cached.
  std::vector<char> buf(1 << 20);
  size_t offset = 0;
  for (;;) {
    const ssize_t got = ::read(f.fd, buf.data(), buf.size());
    if (got < 0 && errno == EINTR) continue;
    if (got < 0) return io_error(path + ": read: " + std::strerror(errno));
    if (got == 0) break;
    consume(buf.data(), static_cast<size_t>(got));
    const size_t first = offset / page, end = std::min(before.size(), (offset + static_cast<size_t>(got) + page - 1) / page);
    for (size_t i = first; i < end;) {
      if (before[i] & 1) {
        ++i;
        continue;
      }
      size_t j = i;
      while (j < end && !(before[j] & 1)) ++j;
      ::posix_fadvise(f.fd, static_cast<off_t>(i * page), static_cast<off_t>((j - i) * page), POSIX_FADV_DONTNEED);
      i = j;
    }
    offset += static_cast<size_t>(got);
  }
  return Status::ok();
}

}  // namespace jetsweep::agent::storage
