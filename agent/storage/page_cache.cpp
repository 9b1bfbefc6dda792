#include "agent/storage/page_cache.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

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

Status read_leaving_cache(const std::string& path, const std::function<void(const char*, size_t)>& consume) {
  Fd f{::open(path.c_str(), O_RDONLY | O_CLOEXEC)};
  if (f.fd < 0) return io_error(path + ": cannot open: " + std::strerror(errno));
  struct stat st {};
  if (::fstat(f.fd, &st) != 0) return io_error(path + ": fstat: " + std::strerror(errno));
  const auto size = static_cast<size_t>(st.st_size);
  std::vector<unsigned char> before;   // empty: residency unknown (nothing is dropped afterwards)
  if (size > 0) {
    void* map = ::mmap(nullptr, size, PROT_READ, MAP_SHARED, f.fd, 0);
    if (map != MAP_FAILED) {
      before.resize((size + static_cast<size_t>(page_size()) - 1) / static_cast<size_t>(page_size()));
      if (::mincore(map, size, before.data()) != 0) before.clear();
      ::munmap(map, size);
    }
  }
  std::vector<char> buf(1 << 20);
  for (;;) {
    const ssize_t got = ::read(f.fd, buf.data(), buf.size());
    if (got < 0 && errno == EINTR) continue;
    if (got < 0) return io_error(path + ": read: " + std::strerror(errno));
    if (got == 0) break;
    consume(buf.data(), static_cast<size_t>(got));
  }
  // Runs of pages that were not resident before, dropped again.
  const auto page = static_cast<size_t>(page_size());
  for (size_t i = 0; i < before.size();) {
    if (before[i] & 1) {
      ++i;
      continue;
    }
    size_t j = i;
    while (j < before.size() && !(before[j] & 1)) ++j;
    ::posix_fadvise(f.fd, static_cast<off_t>(i * page), static_cast<off_t>((j - i) * page), POSIX_FADV_DONTNEED);
    i = j;
  }
  return Status::ok();
}

}  // namespace jetsweep::agent::storage
