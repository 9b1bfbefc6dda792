// Page-cache residency of a set of files, measured as vmtouch does: mmap each file and ask mincore()
// which of its pages are resident. Pure functions; any thread.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "common/status.hpp"

namespace jetsweep::agent::storage {

struct CacheResidency {
  int64_t resident_pages = 0;
  int64_t total_pages = 0;
  int64_t files = 0;
  int64_t unreadable_files = 0;  // could not be opened or mapped (counted as not resident)
  double fraction() const { return total_pages > 0 ? static_cast<double>(resident_pages) / static_cast<double>(total_pages) : 0.0; }
};

// Sums residency over `files`. Fails only when no file could be examined.
Result<CacheResidency> page_cache_residency(const std::vector<std::string>& files);
// Residency of one file.
Result<CacheResidency> file_residency(const std::string& path);
// Asks the kernel to drop the file's clean pages (posix_fadvise DONTNEED); dirty pages are synced first.
Status evict_file(const std::string& path);
// Reads all of `path` in order through `consume`, leaving the page cache as it was found, so reading a dataset to
// hash it does not warm the cache a run's first epoch is measured in: with direct I/O (O_DIRECT) where the file
// system allows it; else through the cache, dropping the pages the read brought in (those mincore() did not show
// resident before; files this process neither owns nor may write cannot be told apart and keep them).
// kIoError naming the file.
Status read_leaving_cache(const std::string& path, const std::function<void(const char* data, size_t size)>& consume);

}  // namespace jetsweep::agent::storage
