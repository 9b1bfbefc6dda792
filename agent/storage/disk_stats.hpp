// Read IO of the block device backing a path, as iostat computes it from /proc/diskstats: the path's
// st_dev is resolved through /sys/dev/block/MAJ:MIN to the whole disk (a partition's parent), whose
// diskstats counters are sampled at epoch start and end. All paths are under `root` ("/" on a real
// machine; a fake tree in tests). Pure functions; any thread.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "common/status.hpp"

namespace jetsweep::agent::storage {

struct BlockDevice {
  std::string disk;        // whole-disk name in /proc/diskstats (sda, mmcblk0, nvme0n1, dm-0, ...)
  std::string partition;   // the partition the path lives on, when it is one (sda1, mmcblk0p1), else empty
  unsigned major = 0, minor = 0;
};

// Kernel-style device number of the file system holding `path`.
Result<BlockDevice> block_device_for(const std::string& path, const std::string& root = "/");
// Same, from an explicit device number (tests).
Result<BlockDevice> block_device_of(unsigned major, unsigned minor, const std::string& root = "/");

struct DiskCounters {
  int64_t reads_completed = 0;
  int64_t sectors_read = 0;    // 512-byte units whatever the device's sector size
};
Result<DiskCounters> read_disk_counters(const std::string& disk, const std::string& root = "/");

struct ReadRates {
  double read_mb_s = 0;  // MB/s as `iostat -m` reports it (MB = 2^20 bytes)
  double read_iops = 0;  // read requests completed per second (iostat r/s)
};
ReadRates rates_between(const DiskCounters& before, const DiskCounters& after, double seconds);

// Samples one device at epoch boundaries. Constructed per run; training thread only.
class IoMeter {
 public:
  // Resolves the device backing `path`; a meter whose device cannot be resolved (overlay, tmpfs, no
  // sysfs) yields no rates and says why in unavailable_reason().
  IoMeter(const std::string& path, const std::string& root);
  void start();
  std::optional<ReadRates> stop();
  const std::string& unavailable_reason() const { return reason_; }
  const std::optional<BlockDevice>& device() const { return device_; }

 private:
  std::string root_;
  std::optional<BlockDevice> device_;
  std::string reason_;
  std::optional<DiskCounters> start_counters_;
  double start_s_ = 0;
};

}  // namespace jetsweep::agent::storage
