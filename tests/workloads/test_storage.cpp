// Storage media map, page-cache residency (mincore, as vmtouch) on real files, and read IO of the
// block device backing a path from a fake /proc/diskstats + /sys/dev/block tree.
#include <doctest/doctest.h>

#include <fcntl.h>

#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "agent/storage/disk_stats.hpp"
#include "agent/storage/page_cache.hpp"
#include "agent/storage/storage_map.hpp"
#include "support/temp_dir.hpp"

using namespace jetsweep;
using namespace jetsweep::agent::storage;
using jetsweep::testing::TempDir;
namespace fs = std::filesystem;

TEST_CASE("storage map: @NAME and @NAME/REL resolve against --storage; plain paths pass through") {
  StorageMap m;
  REQUIRE(m.add("ssd=/mnt/ssd/").is_ok());
  REQUIRE(m.add("sd=/media/sd").is_ok());
  CHECK(m.add("ssd=/other").message() == "--storage 'ssd=/other': medium 'ssd' given twice");
  CHECK(m.add("SSD=/x").message().find("must be lower-case") != std::string::npos);
  auto a = m.resolve("@ssd", "cifar10", "/usr/share/datasets/cifar10");
  REQUIRE(a.is_ok());
  CHECK(a->path == "/mnt/ssd/cifar10");
  CHECK(a->medium == "ssd");
  CHECK(m.resolve("@sd/gld/v2", "gld23k", "").value().path == "/media/sd/gld/v2");
  CHECK(m.resolve("/data/x", "mnist", "/d").value().path == "/data/x");
  CHECK(m.resolve("", "mnist", "/d").value().path == "/d");
  CHECK(m.resolve("@hdd", "mnist", "").status().message() ==
        "data '@hdd': this agent has no storage medium 'hdd' (known: sd=/media/sd, ssd=/mnt/ssd)");
  CHECK(StorageMap().resolve("@hdd", "mnist", "").status().message() ==
        "data '@hdd': this agent has no storage medium 'hdd' (no --storage given)");
}

TEST_CASE("page-cache residency: a file just written is resident; after DONTNEED it drops") {
  TempDir dir;
  const std::string p = (dir / "data.bin").string();
  {
    std::ofstream out(p, std::ios::binary);
    std::string block(1 << 20, 'x');
    for (int i = 0; i < 8; ++i) out << block;
  }
  auto before = file_residency(p);
  REQUIRE_MESSAGE(before.is_ok(), before.status().to_string());
  CHECK(before->total_pages == (8 << 20) / ::sysconf(_SC_PAGESIZE));
  CHECK(before->fraction() > 0.9);
  REQUIRE(evict_file(p).is_ok());
  auto after = file_residency(p);
  REQUIRE(after.is_ok());
  CHECK(after->fraction() < before->fraction() - 0.5);
  // Reading it back brings it into the cache again.
  {
    std::ifstream in(p, std::ios::binary);
    std::string all((std::istreambuf_iterator<char>(in)), {});
    REQUIRE(all.size() == 8u << 20);
  }
  CHECK(file_residency(p)->fraction() > 0.9);
  // Read to hash it (a dataset's fingerprint): every byte consumed, the cache left as it was found. Resident stays
  // resident; evicted stays out; half resident stays half.
  auto read_all = [&] {
    size_t bytes = 0;
    REQUIRE(read_leaving_cache(p, [&](const char*, size_t n) { bytes += n; }).is_ok());
    CHECK(bytes == 8u << 20);
  };
  read_all();
  CHECK(file_residency(p)->fraction() > 0.9);
  REQUIRE(evict_file(p).is_ok());
  read_all();
  CHECK(file_residency(p)->fraction() < 0.1);
  {
    // The first half read with readahead off (an asynchronous readahead would keep filling the cache meanwhile).
    const int fd = ::open(p.c_str(), O_RDONLY);
    REQUIRE(fd >= 0);
    ::posix_fadvise(fd, 0, 0, POSIX_FADV_RANDOM);
    std::string half(4u << 20, '\0');
    CHECK(::pread(fd, half.data(), half.size(), 0) == static_cast<ssize_t>(half.size()));
    ::close(fd);
  }
  const double half = file_residency(p)->fraction();
  REQUIRE(half > 0.4);
  read_all();
  CHECK(file_residency(p)->fraction() == doctest::Approx(half).epsilon(0.05));
  CHECK_FALSE(read_leaving_cache((dir / "none").string(), [](const char*, size_t) {}).is_ok());
  // Several files: weighted by pages; unreadable ones are counted and reported as not resident.
  const std::string small = (dir / "small.bin").string();
  testing::write_file(small, std::string(3 * 4096, 'y'));
  auto all = page_cache_residency({p, small, (dir / "missing").string()});
  REQUIRE(all.is_ok());
  CHECK(all->files == 2);
  CHECK(all->unreadable_files == 1);
  CHECK(all->total_pages == before->total_pages + 3);
  CHECK(page_cache_residency({(dir / "missing").string()}).status().code() == Code::kIoError);
}

namespace {
// A fake sysfs/procfs: /sys/dev/block/MAJ:MIN -> ../../devices/virtual/block/DISK[/PART] and /proc/diskstats.
struct FakeBlockTree {
  TempDir root;
  void add(unsigned maj, unsigned min, const std::string& disk, const std::string& part) {
    fs::path dev = root / ("sys/devices/virtual/block/" + disk);
    if (!part.empty()) {
      dev /= part;
      fs::create_directories(dev);
      testing::write_file(dev / "partition", "1\n");
    } else {
      fs::create_directories(dev);
    }
    fs::create_directories(root / "sys/dev/block");
    fs::create_symlink(fs::relative(dev, root / "sys/dev/block"), root / ("sys/dev/block/" + std::to_string(maj) + ":" + std::to_string(min)));
  }
  void diskstats(const std::string& text) { testing::write_file(root / "proc/diskstats", text); }
};
}  // namespace

TEST_CASE("block device of a path: st_dev -> /sys/dev/block -> whole disk of a partition") {
  FakeBlockTree t;
  TempDir data;
  struct stat st {};
  REQUIRE(::stat(data.str().c_str(), &st) == 0);
  t.add(::major(st.st_dev), ::minor(st.st_dev), "mmcblk0", "mmcblk0p1");
  t.add(8, 0, "sda", "");
  auto b = block_device_for(data.str(), t.root.str());
  REQUIRE_MESSAGE(b.is_ok(), b.status().to_string());
  CHECK(b->disk == "mmcblk0");
  CHECK(b->partition == "mmcblk0p1");
  auto whole = block_device_of(8, 0, t.root.str());
  REQUIRE(whole.is_ok());
  CHECK(whole->disk == "sda");
  CHECK(whole->partition.empty());
  CHECK(block_device_of(0, 77, t.root.str()).status().code() == Code::kNotFound);
}

TEST_CASE("read MB/s and IOPS from /proc/diskstats deltas, as iostat") {
  FakeBlockTree t;
  t.diskstats("   8       0 sda 100 0 2048 10 0 0 0 0 0 0 0\n 179       0 mmcblk0 5000 17 80000 900 1 2 3 4 0 5 6\n"
              " 179       1 mmcblk0p1 4000 0 70000 800 0 0 0 0 0 0 0\n");
  auto c = read_disk_counters("mmcblk0", t.root.str());
  REQUIRE(c.is_ok());
  CHECK(c->reads_completed == 5000);
  CHECK(c->sectors_read == 80000);
  CHECK(read_disk_counters("nvme0n1", t.root.str()).status().message() == t.root.str() + "/proc/diskstats: no line for device nvme0n1");
  // 2048 sectors = 1 MiB and 400 reads over 2 s.
  auto r = rates_between({1000, 10000}, {1400, 12048}, 2.0);
  CHECK(r.read_iops == doctest::Approx(200));
  CHECK(r.read_mb_s == doctest::Approx(0.5));

  // The per-epoch meter on the fake tree: counters advance between start and stop.
  TempDir data;
  struct stat st {};
  REQUIRE(::stat(data.str().c_str(), &st) == 0);
  t.add(::major(st.st_dev), ::minor(st.st_dev), "mmcblk0", "mmcblk0p1");
  IoMeter meter(data.str(), t.root.str());
  REQUIRE(meter.device().has_value());
  meter.start();
  t.diskstats(" 179       0 mmcblk0 5600 17 100480 900 1 2 3 4 0 5 6\n");
  auto rates = meter.stop();
  REQUIRE(rates.has_value());
  CHECK(rates->read_iops > 0);
  CHECK(rates->read_mb_s > 0);
  // 600 reads and 10 MiB in the same interval: the ratio is fixed whatever the interval.
  CHECK(rates->read_mb_s / rates->read_iops == doctest::Approx(10.0 / 600.0));
  IoMeter none(data.str(), TempDir().str());
  CHECK_FALSE(none.device().has_value());
  CHECK(none.unavailable_reason().find("not a block device") != std::string::npos);
  none.start();
  CHECK_FALSE(none.stop().has_value());
}
