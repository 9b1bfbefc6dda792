// Detection, provenance, frequency tables, mode counts, nvpmodel parsing, sim tables.
#include <doctest/doctest.h>

#include <algorithm>
#include <fstream>

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

TEST_CASE("AGX Orin and Orin Nano mode counts: the board's own tables (PowerTrain's AGX Orin count is its BSP's)") {
  FakeBoard orin(FakeKind::kAgxOrinR35);
  auto b1 = open_board(orin.root());
  REQUIRE(b1.is_ok());
  // 12 cores x 29 CPU x 11 GPU (R35's ladder) x 4 EMC; PowerTrain's 18,096 counts its BSP's 13 GPU steps (sim).
  CHECK(b1->tables.mode_count() == 15312);
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
  CHECK(board->tables.gpu_hz.size() == 11);   // the R36 BSP ladder, 306 ... 1300.5 MHz
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

TEST_CASE("nvpmodel status as JetPack writes it: zero-padded id, then the fan mode") {
  auto st = parse_nvpmodel_status("pmode:0002 fmode:quiet\n");
  REQUIRE(st.has_value());
  CHECK(st->mode == 2);
  CHECK(st->fan_mode == "quiet");
  CHECK(parse_nvpmodel_status("pmode:0000")->mode == 0);
  CHECK(parse_nvpmodel_status("pmode:0000")->fan_mode == "");
  CHECK(parse_nvpmodel_status("3")->mode == 3);
  CHECK_FALSE(parse_nvpmodel_status("pmode:two fmode:cool").has_value());
  CHECK_FALSE(parse_nvpmodel_status("fmode:cool").has_value());
  CHECK_FALSE(parse_nvpmodel_status("").has_value());
  // Every fake board writes the JetPack >= 4.3 form; detection records both fields.
  for (FakeKind kind : testing::all_fake_kinds()) {
    FakeBoard fb(kind);
    auto info = detect_board(fb.root());
    REQUIRE(info.is_ok());
    CHECK(info->nvpmodel_mode == fb.spec().default_mode);
    CHECK(info->nvpmodel_fan_mode == "quiet");
  }
}

TEST_CASE("nvpmodel.conf in NVIDIA's full syntax: gating, GPU power control, HWMON limits, KNEXT paths, fan config") {
  const std::string conf_text =
      "< PARAM TYPE=FILE NAME=TPC_POWER_GATING >\n"
      "TPC_PG_MASK /sys/devices/gpu.0/tpc_pg_mask\n"
      "TPC_PG_MASK_KNEXT  /sys/devices/platform/gpu.0/tpc_pg_mask\n"
      "<PARAM TYPE=CLOCK NAME=EMC >\n"
      "MAX_FREQ /sys/kernel/nvpmodel_emc_cap/emc_iso_cap\n"
      "MAX_FREQ_KNEXT /sys/kernel/nvpmodel_clk_cap/emc\n"
      "< PARAM TYPE=HWMON NAME=VDDIN_OC_LIMIT >\n"
      "WARN /sys/bus/i2c/drivers/ina3221/1-0040/hwmon/hwmon3 curr1_max\n"
      "CRIT /sys/bus/i2c/drivers/ina3221/1-0040/hwmon/hwmon3 curr1_crit\n"
      "< POWER_MODEL ID=0 NAME=MODE_15W_6CORE >\n"
      "TPC_POWER_GATING TPC_PG_MASK 1\n"
      "VDDIN_OC_LIMIT WARN 4000\n"
      "VDDIN_OC_LIMIT  CRIT 5000\n"
      "EMC MAX_FREQ 0\n"
      "< POWER_MODEL ID=1 NAME=BAD_MASK >\n"
      "TPC_POWER_GATING TPC_PG_MASK -3\n"
      "< FAN_CONFIG DEFAULT=quiet >\n"
      "< PM_CONFIG DEFAULT=0 >\n";
  auto conf = parse_nvpmodel_conf(conf_text, "nx.conf");
  REQUIRE_MESSAGE(conf.is_ok(), conf.status().to_string());
  CHECK(conf->warnings.empty());
  CHECK(conf->default_fan_mode == "quiet");
  const NvpParam* hwmon = conf->param("VDDIN_OC_LIMIT");
  REQUIRE(hwmon != nullptr);
  CHECK(hwmon->type == "HWMON");
  REQUIRE(hwmon->path_of("CRIT") != nullptr);
  CHECK(*hwmon->path_of("CRIT") == "/sys/bus/i2c/drivers/ina3221/1-0040/hwmon/hwmon3/curr1_crit");
  const NvpMode* m = conf->find("0");
  REQUIRE(m != nullptr);
  REQUIRE(m->setting("VDDIN_OC_LIMIT", "CRIT") != nullptr);
  CHECK(m->setting("VDDIN_OC_LIMIT", "CRIT")->value == "5000");
  auto g = m->gating(conf->source);
  REQUIRE(g.is_ok());
  CHECK(g->tpc_pg_mask == 1);
  CHECK_FALSE(g->fbp_pg_mask.has_value());
  CHECK(g->to_string() == "TPC_PG_MASK 1");
  auto bad = conf->find("BAD_MASK")->gating(conf->source);
  REQUIRE_FALSE(bad.is_ok());
  CHECK(bad.status().message().find("nx.conf:16") != std::string::npos);

  // KNEXT: the path the board has, the newer kernel's first on R36; neither present: the release's preference.
  const fs::path root = testing::make_temp_dir("knext");
  const NvpParam* emc = conf->param("EMC");
  CHECK(emc->resolve(root, "MAX_FREQ", 35) == root / "sys/kernel/nvpmodel_emc_cap/emc_iso_cap");
  CHECK(emc->resolve(root, "MAX_FREQ", 36) == root / "sys/kernel/nvpmodel_clk_cap/emc");
  fs::create_directories(root / "sys/kernel/nvpmodel_clk_cap");
  std::ofstream(root / "sys/kernel/nvpmodel_clk_cap/emc") << "0\n";
  CHECK(emc->resolve(root, "MAX_FREQ", 35) == root / "sys/kernel/nvpmodel_clk_cap/emc");   // the one that exists
  CHECK_FALSE(emc->resolve(root, "MIN_FREQ", 36).has_value());
  fs::remove_all(root);
}

TEST_CASE("probe and doctor show the GPU gating and which modes need a reboot") {
  FakeBoard fb(FakeKind::kAgxOrinR36);
  auto conf = read_nvpmodel_conf(fb.root());
  REQUIRE(conf.is_ok());
  auto gating = read_board_gating(fb.root(), &*conf, 36);
  REQUIRE(gating.is_ok());
  CHECK(gating->gating.tpc_pg_mask == 240);
  CHECK_FALSE(gating->gating.fbp_pg_mask.has_value());
  CHECK(gating->tpc_source == (fb.root() / "sys/devices/platform/gpu.0/tpc_pg_mask").string());
  FakeBoard nano(FakeKind::kOrinNanoR36);
  auto nano_gating = read_board_gating(nano.root(), nullptr, 36);   // without a conf: NVIDIA's places
  REQUIRE(nano_gating.is_ok());
  CHECK(nano_gating->gating.to_string() == "TPC_PG_MASK 240 FBP_PG_MASK 2");
  FakeBoard xavier(FakeKind::kAgxXavierR32);   // booted in MODE_15W: no TPC gated
  auto xavier_gating = read_board_gating(xavier.root(), nullptr, 32);
  REQUIRE(xavier_gating.is_ok());
  CHECK(xavier_gating->gating.to_string() == "TPC_PG_MASK 0");
  FakeBoard nano_r32(FakeKind::kNanoR32);   // no mask files in this fixture: no gating, not an error
  auto none = read_board_gating(nano_r32.root(), nullptr, 32);
  REQUIRE(none.is_ok());
  CHECK(none->gating.empty());
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
    if (fb.spec().sim_class == "agx-orin") {
      // The simulated AGX Orin keeps the PowerTrain paper's (older BSP's) GPU ladder; a board reads its own. Both
      // end at 1300.5 MHz, and the R35 ladder holds NVIDIA's mode caps, which the paper's does not.
      CHECK(sim->gpu_hz.size() == 13);
      CHECK(sim->gpu_hz.back() == board->tables.gpu_hz.back());
      for (int64_t cap : {408000000, 612000000, 816000000}) {
        CHECK(std::count(board->tables.gpu_hz.begin(), board->tables.gpu_hz.end(), cap) == 1);
        CHECK(std::count(sim->gpu_hz.begin(), sim->gpu_hz.end(), cap) == 0);
      }
    } else {
      CHECK(sim->gpu_hz == board->tables.gpu_hz);
    }
    CHECK(sim->emc_hz == board->tables.emc_hz);
    CHECK(sim->module == std::string(module_name(board->info.module)));
  }
}

}  // namespace
}  // namespace jetsweep::device
