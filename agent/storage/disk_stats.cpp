#include "agent/storage/disk_stats.hpp"

#include <sys/stat.h>
#include <sys/sysmacros.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace jetsweep::agent::storage {
namespace fs = std::filesystem;

namespace {
std::string under(const std::string& root, const std::string& path) { return (root == "/" ? std::string() : root) + path; }

double now_s() { return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count(); }
}  // namespace

Result<BlockDevice> block_device_of(unsigned major, unsigned minor, const std::string& root) {
  const std::string id = std::to_string(major) + ":" + std::to_string(minor);
  const std::string link = under(root, "/sys/dev/block/" + id);
  std::error_code ec;
  if (!fs::exists(link, ec))
    return not_found("device " + id + " has no " + link + " (not a block device: overlay, tmpfs or network file system?)");
  const fs::path dev = fs::canonical(link, ec);
  if (ec) return io_error(link + ": cannot resolve: " + ec.message());
  BlockDevice b;
  b.major = major;
  b.minor = minor;
  if (fs::exists(dev / "partition", ec)) {
    b.partition = dev.filename().string();
    b.disk = dev.parent_path().filename().string();
  } else {
    b.disk = dev.filename().string();
  }
  return b;
}

Result<BlockDevice> block_device_for(const std::string& path, const std::string& root) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return not_found(path + ": cannot stat");
  auto b = block_device_of(::major(st.st_dev), ::minor(st.st_dev), root);
  if (!b) return b.status().with_context(path);
  return b;
}

Result<DiskCounters> read_disk_counters(const std::string& disk, const std::string& root) {
  const std::string path = under(root, "/proc/diskstats");
  std::ifstream in(path);
  if (!in) return io_error(path + ": cannot open");
  std::string line;
  while (std::getline(in, line)) {
    std::istringstream ss(line);
    unsigned maj = 0, min = 0;
    std::string name;
    int64_t reads = 0, merged = 0, sectors = 0;
    if (!(ss >> maj >> min >> name)) continue;
    if (name != disk) continue;
    if (!(ss >> reads >> merged >> sectors)) return invalid_argument(path + ": malformed line for " + disk + ": '" + line + "'");
    return DiskCounters{reads, sectors};
  }
  return not_found(path + ": no line for device " + disk);
}

ReadRates rates_between(const DiskCounters& before, const DiskCounters& after, double seconds) {
  ReadRates r;
  if (seconds <= 0) return r;
  // Counters only grow (until a 32-bit wrap on old kernels): treat a decrease as no reads.
  const int64_t reads = std::max<int64_t>(0, after.reads_completed - before.reads_completed);
  const int64_t sectors = std::max<int64_t>(0, after.sectors_read - before.sectors_read);
  r.read_iops = static_cast<double>(reads) / seconds;
  r.read_mb_s = static_cast<double>(sectors) * 512.0 / (1024.0 * 1024.0) / seconds;
  return r;
}

IoMeter::IoMeter(const std::string& path, const std::string& root) : root_(root) {
  auto dev = block_device_for(path, root);
  if (dev) {
    device_ = dev.value();
  } else {
    reason_ = dev.status().message();
  }
}

void IoMeter::start() {
  start_counters_.reset();
  if (!device_) return;
  auto c = read_disk_counters(device_->disk, root_);
  if (!c) {
    reason_ = c.status().message();
    return;
  }
  start_counters_ = c.value();
  start_s_ = now_s();
}

std::optional<ReadRates> IoMeter::stop() {
  if (!device_ || !start_counters_) return std::nullopt;
  auto c = read_disk_counters(device_->disk, root_);
  if (!c) {
    reason_ = c.status().message();
    return std::nullopt;
  }
  return rates_between(*start_counters_, c.value(), now_s() - start_s_);
}

}  // namespace jetsweep::agent::storage
