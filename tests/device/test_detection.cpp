// Detection, provenance, frequency tables, mode counts, nvpmodel parsing, sim tables.
#include <doctest/doctest.h>

#include "agent/device/board.hpp"
#include "agent/device/fs_util.hpp"
#include "agent/device/nvpmodel.hpp"
#include "agent/device/sim_tables.hpp"
#include "tests/device/device_checks.hpp"

namespace jetsweep::device {
namespace {

TEST_CASE("detect_board identifies every fake board and its provenance") {
  for_each_fake_board([](const FakeBoard& fb, const testing::FakeSpec& spec) {
    auto info = detect_board(fb.root());
    REQUIRE_MESSAGE(info.is_ok(), info.status().to_string());
    CHECK(info->family == spec.family);
    CHECK(info->module == spec.module);
    CHECK(info->module_part == spec.module_part);
    REQUIRE(info->l4t.has_value());
    CHECK(info->l4t->major == spec.l4t_major);
    CHECK(info->l4t->to_string() == spec.l4t);
    CHECK(info->kernel == trim(fb.read("/proc/sys/kernel/osrelease")));
    CHECK(info->nvpmodel_conf_fnv1a64 == fnv1a64_hex(fb.read("/etc/nvpmodel.conf")));
    CHECK(info->nvpmodel_conf_fnv1a64.size() == 16);
    REQUIRE(info->nvpmodel_mode.has_value());
    CHECK(*info->nvpmodel_mode == spec.default_mode);
    CHECK(info->family_source.find("compatible") != std::string::npos);
    CHECK(info->compatible.size() == 3);
  });
}

TEST_CASE("detection falls back to tegra_chip_id, then soc_id, and infers the module from cores") {
  FakeBoard fb(FakeKind::kAgxXavierR32);
  fb.remove("/sys/firmware/devicetree/base/compatible");
  fb.write("/sys/module/tegra_fuse/parameters/tegra_chip_id", "25\n");
  auto info = detect_board(fb.root());
  REQUIRE(info.is_ok());
  CHECK(info->family == Family::kT194);
  CHECK(info->module == Module::kAgxXavier);
  CHECK(info->module_source.find("8 cores") != std::string::npos);

  fb.remove("/sys/module/tegra_fuse/parameters/tegra_chip_id");
  fb.write("/sys/devices/soc0/soc_id", "jep106:036b:0023\n");
  info = detect_board(fb.root());
  REQUIRE(info.is_ok());
  CHECK(info->family == Family::kT234);
  CHECK(info->family_source.find("soc_id") != std::string::npos);

  fb.remove("/sys/devices/soc0/soc_id");
  info = detect_board(fb.root());
  REQUIRE_FALSE(info.is_ok());
  CHECK(info.status().code() == Code::kNotFound);
  CHECK(info.status().message().find("compatible") != std::string::npos);
}

TEST_CASE("Orin NX and Orin Nano SKUs are told apart") {
  FakeBoard fb(FakeKind::kOrinNanoR36);
  std::string nx = std::string("nvidia,p3768-0000+p3767-0000") + '\0' + "nvidia,p3767-0000" + '\0' + "nvidia,tegra234" + '\0';
  fb.write("/sys/firmware/devicetree/base/compatible", nx);
  auto info = detect_board(fb.root());
  REQUIRE(info.is_ok());
  CHECK(info->module == Module::kOrinNx);
  CHECK(info->carrier_part == "p3768-0000");
}

TEST_CASE("frequency tables are read from every fake board") {
  for_each_fake_board([](const FakeBoard& fb, const testing::FakeSpec& spec) {
    auto board = open_board(fb.root());
    REQUIRE_MESSAGE(board.is_ok(), board.status().to_string());
    const FrequencyTables& t = board->tables;
    CHECK(t.cores == spec.cores);
    REQUIRE(t.clusters.size() == spec.clusters.size());
    for (size_t i = 0; i < t.clusters.size(); ++i) {
      CHECK(t.clusters[i].cpus == spec.clusters[i]);
      CHECK(t.clusters[i].freqs_khz == spec.cpu_khz);
    }
    CHECK(t.cpu_khz == spec.cpu_khz);
    CHECK(t.gpu_hz == spec.gpu_hz);
    CHECK(t.gpu.of_name == spec.gpu_of_name);
    CHECK(t.emc_hz == spec.emc_hz);
    CHECK(t.mode_count() == static_cast<uint64_t>(spec.cores) * spec.cpu_khz.size() * spec.gpu_hz.size() * spec.emc_hz.size());
  });
}

TEST_CASE("fake AGX Xavier: 29 CPU x 14 GPU x 9 EMC x 8 cores = 29,232 power modes") {
  FakeBoard fb(FakeKind::kAgxXavierR32);
  auto board = open_board(fb.root());
  REQUIRE(board.is_ok());
  const FrequencyTables& t = board->tables;
  CHECK(t.cpu_khz.size() == 29);
  CHECK(t.cpu_khz.front() == 115200);
  CHECK(t.cpu_khz.back() == 2265600);
  CHECK(t.gpu_hz.size() == 14);
  CHECK(t.gpu_hz.back() == 1377000000);
  CHECK(t.emc_hz.size() == 9);
  CHECK(t.emc_hz.back() == 2133000000);
  CHECK(t.cores == 8);
  CHECK(t.mode_count() == 29232);
  CHECK(t.clusters.size() == 4);
  CHECK(t.emc_table_source.string().find("bpmp/debug/emc/possible_rates") != std::string::npos);
}

TEST_CASE("AGX Orin and Orin Nano mode counts match PowerTrain") {
  FakeBoard orin(FakeKind::kAgxOrinR35);
  auto b1 = open_board(orin.root());
  REQUIRE(b1.is_ok());
  CHECK(b1->tables.mode_count() == 18096);
  FakeBoard nano(FakeKind::kOrinNanoR36);
  auto b2 = open_board(nano.root());
  REQUIRE(b2.is_ok());
  CHECK(b2->tables.mode_count() == 1800);
  CHECK(b2->tables.clusters.size() == 2);
  CHECK(b2->tables.clusters[1].cpus == std::vector<int>{4, 5});
}

TEST_CASE("Nano EMC table: clk_possible_rates clipped to the bandwidth manager's range; missing file fails loudly") {
  FakeBoard fb(FakeKind::kNanoR32);
  auto board = open_board(fb.root());
  REQUIRE(board.is_ok());
  CHECK(board->tables.emc_hz.size() == 7);
  CHECK(board->tables.emc_hz.front() == 204000000);
  CHECK(board->tables.emc_hz.back() == 1600000000);
  CHECK(board->tables.mode_count() == 4u * 15 * 12 * 7);

  fb.remove("/sys/kernel/debug/clk/emc/clk_possible_rates");
  auto broken = open_board(fb.root());
  REQUIRE_FALSE(broken.is_ok());
  CHECK(broken.status().message().find(fb.path("/sys/kernel/debug/clk/emc/clk_possible_rates").string()) != std::string::npos);
}

TEST_CASE("EMC table in the wrong unit is refused") {
  FakeBoard fb(FakeKind::kAgxOrinR35);
  fb.write("/sys/kernel/debug/bpmp/debug/emc/possible_rates", "204000000000 665600000000\n");
  auto board = open_board(fb.root());
  REQUIRE_FALSE(board.is_ok());
  CHECK(board.status().message().find("possible_rates") != std::string::npos);
}

TEST_CASE("GPU devfreq is found through /sys/class/devfreq, skipping other devfreq devices") {
  FakeBoard fb(FakeKind::kAgxOrinR36);
  auto gpu = find_gpu_devfreq(fb.root());
  REQUIRE(gpu.is_ok());
  CHECK(gpu->of_name == "gpu");
  CHECK(gpu->devfreq_dir == fb.path("/sys/devices/platform/bus@0/17000000.gpu/devfreq/17000000.gpu"));
  CHECK(gpu->device_dir == fb.path("/sys/devices/platform/bus@0/17000000.gpu"));

  // Without the class link the documented folder is used.
  fb.remove("/sys/class/devfreq/17000000.gpu");
  auto missing = find_gpu_devfreq(fb.root());
  REQUIRE_FALSE(missing.is_ok());
  CHECK(missing.status().message().find("15340000.vic=vic") != std::string::npos);
  auto board = open_board(fb.root());
  REQUIRE(board.is_ok());
  CHECK(board->tables.gpu_hz.size() == 13);
}

TEST_CASE("resolve_in_root keeps absolute link targets inside the root") {
  FakeBoard fb(FakeKind::kNanoR32);
  fs::create_directory_symlink("/sys/devices/gpu.0", fb.path("/sys/abs-link"));
  auto r = resolve_in_root(fb.root(), fb.path("/sys/abs-link/devfreq"));
  REQUIRE(r.is_ok());
  CHECK(*r == fs::absolute(fb.path("/sys/devices/gpu.0/devfreq")));
}

TEST_CASE("nvpmodel.conf parsing") {
  FakeBoard fb(FakeKind::kAgxXavierR32);
  auto conf = read_nvpmodel_conf(fb.root());
  REQUIRE(conf.is_ok());
  REQUIRE(conf->modes.size() == 4);
  std::vector<std::string> names;
  for (const auto& m : conf->modes) names.push_back(m.name);
  CHECK(names == fb.spec().mode_names);
  CHECK(conf->default_mode == 2);
  const NvpMode* m = conf->find("mode_15w");
  REQUIRE(m != nullptr);
  CHECK(m->id == 2);
  CHECK(conf->find("3")->name == "MODE_30W_ALL");
  CHECK(conf->find("nope") == nullptr);
  const NvpParam* gpu = conf->param("GPU");
  REQUIRE(gpu != nullptr);
  REQUIRE(gpu->path_of("MAX_FREQ") != nullptr);
  CHECK(*gpu->path_of("MAX_FREQ") == "/sys/devices/17000000.gv11b/devfreq/17000000.gv11b/max_freq");

  auto bad = parse_nvpmodel_conf("< POWER_MODEL ID=x NAME=BAD >\n", "test.conf");
  REQUIRE_FALSE(bad.is_ok());
  CHECK(bad.status().message().find("test.conf:1") != std::string::npos);
  auto bad_default = parse_nvpmodel_conf("< POWER_MODEL ID=0 NAME=A >\nGPU MAX_FREQ -1\n< PM_CONFIG DEFAULT=9 >\n", "t.conf");
  REQUIRE_FALSE(bad_default.is_ok());
  CHECK(bad_default.status().message().find("DEFAULT=9") != std::string::npos);
}

TEST_CASE("L4T release line and FNV-1a hash") {
  auto rel = parse_l4t_release("# R35 (release), REVISION: 3.1, GCID: 32827747, BOARD: t186ref\n");
  REQUIRE(rel.has_value());
  CHECK(rel->major == 35);
  CHECK(rel->revision == "3.1");
  CHECK(rel->to_string() == "R35.3.1");
  CHECK_FALSE(parse_l4t_release("garbage").has_value());
  CHECK(fnv1a64_hex("") == "cbf29ce484222325");
  CHECK(fnv1a64_hex("a") == "af63dc4c8601ec8c");
}

TEST_CASE("simulated board tables match JETSON.md and the fake boards") {
  auto agx = sim_board_tables("agx-xavier");
  REQUIRE(agx.is_ok());
  CHECK(agx->mode_count() == 29232);
  auto orin = sim_board_tables("agx-orin");
  REQUIRE(orin.is_ok());
  CHECK(orin->mode_count() == 18096);
  CHECK(orin->emc_hz == std::vector<int64_t>{204000000, 665600000, 2133000000, 3199000000});
  auto onano = sim_board_tables("orin-nano");
  REQUIRE(onano.is_ok());
  CHECK(onano->mode_count() == 1800);
  CHECK(onano->cpu_khz.back() == 1510400);
  auto nano = sim_board_tables("nano");
  REQUIRE(nano.is_ok());
  CHECK(nano->cpu_khz.size() == 15);
  CHECK(nano->gpu_hz.size() == 12);
  CHECK(nano->emc_hz.size() == 7);
  auto nx = sim_board_tables("xavier-nx");
  REQUIRE(nx.is_ok());
  CHECK(nx->cpu_khz.size() == 25);
  CHECK(nx->cpu_khz.back() == 1907200);
  CHECK(nx->gpu_hz.size() == 15);
  CHECK(nx->gpu_hz.back() == 1109250000);
  CHECK(sim_board_classes().size() == 5);
  auto unknown = sim_board_tables("tx2");
  REQUIRE_FALSE(unknown.is_ok());
  CHECK(unknown.status().message().find("tx2") != std::string::npos);

  for (FakeKind kind : testing::all_fake_kinds()) {
    FakeBoard fb(kind);
    CAPTURE(fb.spec().name);
    auto board = open_board(fb.root());
    REQUIRE(board.is_ok());
    auto sim = sim_board_tables(fb.spec().sim_class);
    REQUIRE(sim.is_ok());
    CHECK(sim->cores == board->tables.cores);
    CHECK(sim->cpu_khz == board->tables.cpu_khz);
    CHECK(sim->gpu_hz == board->tables.gpu_hz);
    CHECK(sim->emc_hz == board->tables.emc_hz);
    CHECK(sim->module == std::string(module_name(board->info.module)));
  }
}

}  // namespace
}  // namespace jetsweep::device
