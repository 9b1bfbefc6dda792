// tegrastats line forms of R32 (AGX Xavier), R35 (AGX Orin) and R36 (Orin Nano).
#include <doctest/doctest.h>

#include "agent/device/tegrastats.hpp"

namespace jetsweep::device {
namespace {

// The sample of a line that must parse.
BoardSample parse_ok(std::string_view line) {
  auto s = parse_tegrastats_line(line);
  REQUIRE_MESSAGE(s.is_ok(), s.status().to_string());
  return std::move(s).value();
}

TEST_CASE("tegrastats R32 AGX Xavier line: rails without unit, total = sum") {
  const BoardSample s = parse_ok(
      "RAM 408/15823MB (lfb 3702x4MB) SWAP 0/7911MB (cached 0MB) CPU [5%@2265,3%@2265,1%@2265,0%@2265,0%@2265,0%@2265,"
      "0%@2265,0%@2265] EMC_FREQ 0%@2133 GR3D_FREQ 0%@1377 APE 150 MTS fg 0% bg 0% AO@26.5C GPU@28C Tdiode@31.25C "
      "PMIC@100C AUX@27C CPU@28C thermal@27.45C Tboard@27C GPU 1155/1155 CPU 385/385 SOC 2502/2502 CV 0/0 VDDRQ "
      "192/192 SYS5V 2692/2692");
  CHECK(*s.ram_used_mb == 408);
  CHECK(*s.ram_total_mb == 15823);
  CHECK(*s.swap_total_mb == 7911);
  REQUIRE(s.cores.size() == 8);
  CHECK(*s.cores[0].util_pct == 5);
  CHECK(*s.cores[0].freq_khz == 2265000);
  CHECK(*s.cpu_util_pct == doctest::Approx(9.0 / 8));
  CHECK(*s.emc_util_pct == 0);
  CHECK(*s.emc_freq_hz == 2133e6);
  CHECK(*s.gpu_freq_hz == 1377e6);
  CHECK(s.temps.size() == 8);
  CHECK(s.temps[0].name == "AO");
  CHECK(s.temps[0].celsius == doctest::Approx(26.5));
  REQUIRE(s.rails.size() == 6);
  CHECK(s.rails[0].name == "GPU");
  CHECK(*s.rails[0].power_mw == 1155);
  CHECK(*s.total_power_w == doctest::Approx(6.926));
  CHECK(s.total_power_rule == "sum(GPU+CPU+SOC+CV+VDDRQ+SYS5V)");
  CHECK(s.t_s == 0);
}

TEST_CASE("tegrastats R35 AGX Orin line: timestamp, -256C zone, NC and VDDQ rules") {
  const BoardSample s = parse_ok(
      "04-24-2023 00:01:24 RAM 1282/62795MB (lfb 15152x4MB) SWAP 0/31398MB (cached 0MB) CPU [0%@729,1%@729,0%@729,"
      "0%@729,0%@729,0%@729,0%@729,0%@729,0%@729,0%@729,0%@729,0%@729] EMC_FREQ 0%@2133 GR3D_FREQ 0%@0 GR3D2_FREQ 0%@0 "
      "VIC_FREQ 729 APE 174 CPU@42.593C tj@42.593C GPU@-256C VDD_GPU_SOC 2399mW/2399mW VDD_CPU_CV 400mW/400mW "
      "VIN_SYS_5V0 4032mW/4032mW NC 0mW/0mW VDDQ_VDD2_1V8AO 301mW/301mW NC 0mW/0mW");
  CHECK(s.t_s == doctest::Approx(1682294484.0));  // 2023-04-24T00:01:24Z
  CHECK(s.cores.size() == 12);
  CHECK(*s.cores[1].util_pct == 1);
  CHECK(s.temps.size() == 2);  // GPU@-256C is off
  CHECK(s.rails.size() == 6);
  CHECK(*s.total_power_w == doctest::Approx((2399 + 400 + 4032) / 1000.0));
  CHECK(*s.gpu_freq_hz == 0);
}

TEST_CASE("tegrastats R36 Orin Nano line: offline cores, VDD_IN total") {
  const BoardSample s = parse_ok(
      "RAM 2208/7620MB (lfb 2x4MB) SWAP 0/3810MB (cached 0MB) CPU [11%@729,13%@729,9%@729,18%@729,off,off] "
      "EMC_FREQ 0%@2133 GR3D_FREQ 0%@305 cpu@46.25C soc2@44.5C VDD_IN 4915mW/4915mW VDD_CPU_GPU_CV 449mW/449mW "
      "VDD_SOC 1431mW/1431mW");
  REQUIRE(s.cores.size() == 6);
  CHECK(s.cores[3].online);
  CHECK_FALSE(s.cores[4].online);
  CHECK_FALSE(s.cores[5].util_pct.has_value());
  CHECK(*s.cpu_util_pct == doctest::Approx((11 + 13 + 9 + 18) / 4.0));
  CHECK(*s.gpu_freq_hz == 305e6);
  CHECK(*s.total_power_w == doctest::Approx(4.915));
  CHECK(s.total_power_rule == "VDD_IN");
}

TEST_CASE("tegrastats without root: no @MHz on EMC and GR3D; multi-GPC form") {
  auto s = parse_tegrastats_line("RAM 900/3964MB CPU [2%,4%,off,off] EMC_FREQ 7% GR3D_FREQ 12% POM_5V_IN 2100/2150");
  REQUIRE(s.is_ok());
  CHECK(*s->emc_util_pct == 7);
  CHECK_FALSE(s->emc_freq_hz.has_value());
  CHECK(*s->gpu_load_pct == 12);
  CHECK_FALSE(s->gpu_freq_hz.has_value());
  CHECK_FALSE(s->cores[0].freq_khz.has_value());
  CHECK(*s->total_power_w == doctest::Approx(2.1));
  auto g = parse_tegrastats_line("GR3D_FREQ 40%@[611,611]");
  REQUIRE(g.is_ok());
  CHECK(*g->gpu_freq_hz == 611e6);
}

TEST_CASE("tegrastats R35.1 AGX Orin: the second GPU cluster GR3D2_FREQ is part of the GPU load") {
  const BoardSample s = parse_ok("RAM 5678/62795MB CPU [12%@2201,34%@2201] EMC_FREQ 3%@3199 GR3D_FREQ 78%@1300 "
                                 "GR3D2_FREQ 62%@1300 VDD_GPU_SOC 9000mW/8000mW");
  CHECK(*s.gpu_load_pct == doctest::Approx(70.0));
  REQUIRE(s.gpu_cluster_load_pct.size() == 2);
  CHECK(s.gpu_cluster_load_pct[0] == 78);
  CHECK(s.gpu_cluster_load_pct[1] == 62);
  CHECK(*s.gpu_freq_hz == 1300e6);
  // A gated second cluster (0 MHz, MODE_30W's 4 of 8 TPCs) does not halve the GPU's load.
  const BoardSample gated = parse_ok("GR3D_FREQ 80%@612 GR3D2_FREQ 0%@0");
  CHECK(*gated.gpu_load_pct == 80);
  // One cluster printed: its load, no per-cluster list.
  const BoardSample one = parse_ok("GR3D_FREQ 41%@611");
  CHECK(*one.gpu_load_pct == 41);
  CHECK(one.gpu_cluster_load_pct.empty());
}

TEST_CASE("tegrastats JetPack 7 and Thor: three-field rails, decimal temperatures, load-less GPU clocks") {
  const BoardSample s = parse_ok(
      "11-26-2026 10:00:00 RAM 20480/125772MB (lfb 12x4MB) SWAP 0/0MB (cached 0MB) CPU [3%@2601,1%@2601,off] "
      "EMC_FREQ 1%@4266 GR3D_FREQ @[1000,1000,1000] cpu@52.968C tj@55.5C VDD_GPU_SOC 5139mW/5139mW/5139mW "
      "VDD_CPU_CV 1200mW/1100mW/1400mW VIN_SYS_5V0 6000mW/6000mW/6100mW");
  REQUIRE(s.rails.size() == 3);
  CHECK(*s.rails[0].power_mw == 5139);
  CHECK(*s.rails[1].power_mw == 1200);  // the current value, not the average or the peak
  CHECK(*s.total_power_w == doctest::Approx((5139 + 1200 + 6000) / 1000.0));
  CHECK(*s.gpu_freq_hz == 1000e6);
  CHECK_FALSE(s.gpu_load_pct.has_value());  // Thor prints no GPU load: none is made up
  REQUIRE(s.temps.size() == 2);
  CHECK(s.temps[0].celsius == doctest::Approx(52.968));
  // A rail with four fields or a non-number is not a rail.
  const BoardSample odd = parse_ok("RAM 1/2MB VDD_X 1/2/3/4 VDD_Y 1mW/xmW");
  CHECK(odd.rails.empty());
}

TEST_CASE("tegrastats: garbage is refused") {
  auto s = parse_tegrastats_line("hello world");
  REQUIRE_FALSE(s.is_ok());
  CHECK(s.status().code() == Code::kInvalidArgument);
  auto bad_cpu = parse_tegrastats_line("CPU [5%@x,1%@2]");
  CHECK_FALSE(bad_cpu.is_ok());
}

}  // namespace
}  // namespace jetsweep::device
