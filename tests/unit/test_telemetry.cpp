#include <doctest/doctest.h>

#include "agent/telemetry.hpp"
#include "support/temp_dir.hpp"

using namespace jetsweep;
using namespace jetsweep::agent;
using jetsweep::testing::TempDir;
using jetsweep::testing::write_file;

namespace {
proto::Sample sample(double t, std::optional<double> p) {
  proto::Sample s;
  s.t_s = t;
  s.power_w = p;
  return s;
}
}  // namespace

TEST_CASE("energy = sum of p_i (t_i - t_(i-1)) over the window, first interval clipped") {
  std::vector<proto::Sample> s = {sample(0, std::nullopt), sample(1, 10), sample(2, 20), sample(3, 30)};
  CHECK(*integrate_energy_j(s, 0, 3) == doctest::Approx(60));
  CHECK(*integrate_energy_j(s, 1, 2) == doctest::Approx(20));
  CHECK(*integrate_energy_j(s, 0.5, 2) == doctest::Approx(25));
  CHECK(*integrate_energy_j(s, 1, 3) + *integrate_energy_j(s, 0, 1) == doctest::Approx(60));  // windows add up
  CHECK_FALSE(integrate_energy_j(s, 3, 4).has_value());  // no sample in the window
  s[2].power_w.reset();
  CHECK_FALSE(integrate_energy_j(s, 0, 3).has_value());  // never invent a number
}

TEST_CASE("host probe reads a fake /proc and /sys tree") {
  TempDir root;
  write_file(root / "proc/stat",
             "cpu  100 0 100 800 0 0 0 0 0 0\ncpu0 50 0 50 400 0 0 0 0 0 0\ncpu1 0 0 0 400 0 0 0 0 0 0\nintr 1\n");
  write_file(root / "proc/meminfo", "MemTotal:       1000 kB\nMemFree:         100 kB\nMemAvailable:    400 kB\n");
  write_file(root / "proc/diskstats",
             "   8       0 sda 10 0 100 0 0 0 0 0 0 0 0\n   8       1 sda1 10 0 100 0 0 0 0 0 0 0 0\n"
             "   7       0 loop0 10 0 5000 0 0 0 0 0 0 0 0\n");
  std::filesystem::create_directories(root / "sys/block/sda");
  std::filesystem::create_directories(root / "sys/block/loop0");
  write_file(root / "sys/devices/system/cpu/cpu0/cpufreq/scaling_cur_freq", "1000000\n");
  write_file(root / "sys/devices/system/cpu/cpu1/cpufreq/scaling_cur_freq", "2000000\n");
  write_file(root / "sys/devices/system/cpu/cpufreq/policy0/scaling_cur_freq", "999\n");  // not a cpuN dir

  HostProbe probe(root.str());
  CHECK_FALSE(probe.has_power());
  auto s0 = probe.read(0.0);
  CHECK(s0.cpu_util_pct == 0.0);   // no previous reading yet
  CHECK(s0.mem_used_kb == 600);
  CHECK(s0.disk_read_bytes == 0);
  REQUIRE(s0.cpu_freq_mhz.has_value());
  CHECK(*s0.cpu_freq_mhz == doctest::Approx(1500.0));
  CHECK_FALSE(s0.power_w.has_value());

  write_file(root / "proc/stat",
             "cpu  200 0 200 1600 0 0 0 0 0 0\ncpu0 100 0 100 500 0 0 0 0 0 0\ncpu1 0 0 0 700 0 0 0 0 0 0\n");
  write_file(root / "proc/diskstats",
             "   8       0 sda 20 0 300 0 0 0 0 0 0 0 0\n   8       1 sda1 20 0 300 0 0 0 0 0 0 0 0\n"
             "   7       0 loop0 10 0 9000 0 0 0 0 0 0 0 0\n");
  auto s1 = probe.read(0.1);
  CHECK(s1.cpu_util_pct == doctest::Approx(20.0));   // (1000 - 800) / 1000
  REQUIRE(s1.core_util_pct.size() == 2);
  CHECK(s1.core_util_pct[0] == doctest::Approx(50.0));  // cpu0: (200 - 100) / 200
  CHECK(s1.core_util_pct[1] == doctest::Approx(0.0));   // cpu1: idle throughout
  CHECK(s1.disk_read_bytes == 200 * 512);             // whole disk only: no partition or loop double count
}

TEST_CASE("RAPL package counters become power, with wrap-around; sub-domains are not added") {
  TempDir root;
  auto pkg = root / "sys/class/powercap/intel-rapl:0";
  write_file(pkg / "energy_uj", "1000000\n");
  write_file(pkg / "max_energy_range_uj", "10000000\n");
  write_file(root / "sys/class/powercap/intel-rapl:0:0/energy_uj", "5000000\n");
  auto rapl = RaplPowerSource::open(root.str());
  REQUIRE(rapl != nullptr);
  CHECK_FALSE(rapl->read_power_w(0.0).has_value());   // first reading: no interval yet
  write_file(pkg / "energy_uj", "3000000\n");
  CHECK(*rapl->read_power_w(2.0) == doctest::Approx(1.0));   // 2 J over 2 s
  write_file(pkg / "energy_uj", "9000000\n");
  CHECK(*rapl->read_power_w(3.0) == doctest::Approx(6.0));
  write_file(pkg / "energy_uj", "1000000\n");                // wrapped: 10 - 9 + 1 = 2 J
  CHECK(*rapl->read_power_w(4.0) == doctest::Approx(2.0));

  TempDir empty;
  CHECK(RaplPowerSource::open(empty.str()) == nullptr);
}

TEST_CASE("sampler: on-demand samples bracket windows and arrive in time order") {
  TempDir root;
  write_file(root / "proc/stat", "cpu  1 0 1 8 0 0 0 0 0 0\n");
  HostProbe probe(root.str());
  Sampler sampler(probe, 1000.0);
  sampler.start();
  double a = sampler.sample_now();
  double b = sampler.sample_now();
  sampler.stop();
  CHECK(b >= a);
  auto all = sampler.all();
  REQUIRE(all.size() >= 3);  // the start sample plus the two on-demand ones
  for (size_t i = 1; i < all.size(); ++i) CHECK(all[i].t_s >= all[i - 1].t_s);
  CHECK(sampler.take_new().size() == all.size());
  CHECK(sampler.take_new().empty());
}
