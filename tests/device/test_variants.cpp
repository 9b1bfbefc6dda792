// Every Orin variant NVIDIA ships (AGX Orin 64GB/32GB, Orin NX 16GB/8GB, Orin Nano 8GB/4GB), on R35 and R36 trees
// written from NVIDIA's facts: detection names the variant, the board's modes are NVIDIA's, probe shows each mode's
// masks and which need a reboot, a mode with other masks is refused live, and every named mode - once the board
// runs its masks, as after nvpmodel and a reboot - reads back as NVIDIA's, through the _KNEXT paths on R36.
#include <doctest/doctest.h>

#include <algorithm>
#include <cstdio>
#include <sstream>

#include <boost/json.hpp>

#include "agent/device/board_state.hpp"
#include "agent/device/device_cli.hpp"
#include "agent/device/fs_util.hpp"
#include "agent/device/module_variants.hpp"
#include "agent/device/power_control.hpp"
#include "tests/device/device_checks.hpp"
#include "tests/device/fake_board_boards.hpp"

namespace jetsweep::device {
namespace {

struct Opened {
  Board board;
  NvpmodelConf conf;
  const ModuleVariant* variant = nullptr;
  BoardGating booted;
};

Opened open_variant(const FakeBoard& fb) {
  Opened o{fb.board(), {}, nullptr, {}};
  auto conf = read_nvpmodel_conf(fb.root());
  REQUIRE_MESSAGE(conf.is_ok(), conf.status().to_string());
  o.conf = *conf;
  o.variant = find_module_variant(o.board.info.module_part, &o.conf);
  REQUIRE(o.variant != nullptr);
  auto gating = read_board_gating(fb.root(), &o.conf, o.board.info.l4t_major());
  REQUIRE_MESSAGE(gating.is_ok(), gating.status().to_string());
  o.booted = *gating;
  return o;
}

GpuGating gating_of(const VariantMode& m) { return GpuGating{m.tpc_pg_mask, m.fbp_pg_mask}; }

TEST_CASE("every Orin variant: detected from its module number, NVIDIA's modes, probe shows masks and reboots") {
  const std::vector<std::string> expected = {"AGX Orin 64GB", "AGX Orin 32GB", "Orin NX 16GB", "Orin NX 8GB",
                                             "Orin Nano 8GB", "Orin Nano 4GB"};
  std::vector<std::string> seen;
  for (FakeKind kind : testing::orin_variant_kinds()) {
    FakeBoard fb(kind);
    CAPTURE(fb.spec().name);
    Opened o = open_variant(fb);
    const ModuleVariant& v = *o.variant;
    CHECK(o.board.info.module_part == fb.spec().module_part);
    CHECK(o.board.info.variant == v.name);
    CHECK(o.board.info.module == v.module);
    CHECK(o.board.tables.cores == v.cores);
    CHECK(differences_from_nvidia(o.conf, v).empty());
    CHECK(o.conf.default_mode == v.default_mode);
    // The board booted in the default mode: its masks are that mode's.
    REQUIRE(v.default_mode.has_value());
    CHECK(o.booted.gating.tpc_pg_mask == v.find(*v.default_mode)->tpc_pg_mask);
    CHECK(o.booted.gating.fbp_pg_mask == v.find(*v.default_mode)->fbp_pg_mask);
    if (o.board.info.l4t_major() >= 36)
      CHECK(o.booted.tpc_source.find("/sys/devices/platform/gpu.0/tpc_pg_mask") != std::string::npos);
    seen.push_back(v.name);

    std::ostringstream out, err;
    REQUIRE(device_cli_main("probe", {"--root", fb.root().string(), "--json"}, out, err) == 0);
    const auto probe = boost::json::parse(out.str()).as_object();
    CHECK(probe.at("variant").as_string() == v.name);
    CHECK(probe.at("nvidia_variant").at("differences").as_array().empty());
    const auto& modes = probe.at("nvpmodel_modes").as_array();
    REQUIRE(modes.size() == v.modes.size());
    for (size_t i = 0; i < modes.size(); ++i) {
      const VariantMode& m = v.modes[i];
      CAPTURE(m.name);
      CHECK(modes[i].at("id").as_int64() == m.id);
      CHECK(modes[i].at("name").as_string() == m.name);
      CHECK(modes[i].at("tpc_pg_mask").as_int64() == *m.tpc_pg_mask);
      CHECK(modes[i].at("fbp_pg_mask").is_null() == !m.fbp_pg_mask);
      CHECK(modes[i].at("needs_reboot").as_bool() == !gating_of(m).applies_live_on(o.booted.gating));
    }
  }
  for (const auto& name : expected) CHECK(std::count(seen.begin(), seen.end(), name) >= 2);  // an R35 and an R36 tree
}

// The board after `nvpmodel -m ID` and a reboot: the mode's masks in the GPU's files, the status naming the mode.
void boot_into(FakeBoard& fb, const BoardGating& files, const VariantMode& m) {
  REQUIRE(write_raw(files.tpc_source, std::to_string(*m.tpc_pg_mask) + "\n").is_ok());
  if (m.fbp_pg_mask) REQUIRE(write_raw(files.fbp_source, std::to_string(*m.fbp_pg_mask) + "\n").is_ok());
  char status[32];
  std::snprintf(status, sizeof status, "pmode:%04d fmode:quiet\n", m.id);
  fb.write("/var/lib/nvpmodel/status", status);
}

TEST_CASE("every Orin variant: each named mode reads back as NVIDIA's once the board runs its masks") {
  for (FakeKind kind : testing::orin_variant_kinds()) {
    FakeBoard fb(kind);
    Opened o = open_variant(fb);
    const bool r36 = o.board.info.l4t_major() >= 36;
    for (const VariantMode& m : o.variant->modes) {
      CAPTURE(fb.spec().name);
      CAPTURE(m.name);
      const bool live = gating_of(m).applies_live_on(o.booted.gating);
      auto planned = plan_named_mode(o.board, m.name, ApplyOptions{});
      if (!live) {
        // Without a reboot the mode cannot run: refused, naming the mode, both masks and the reboot it needs.
        REQUIRE_FALSE(planned.is_ok());
        const std::string why = planned.status().message();
        CHECK(why.find(m.name + " (id " + std::to_string(m.id)) != std::string::npos);
        CHECK(why.find("nvpmodel -m " + std::to_string(m.id) + "` and a reboot") != std::string::npos);
        boot_into(fb, o.booted, m);
      }
      const auto before = fb.snapshot();
      PowerController ctl(o.board, fb.state_dir());
      Status applied = ctl.apply_named(m.name, ApplyOptions{});
      REQUIRE_MESSAGE(applied.is_ok(), applied.to_string());
      const proto::BoardState state = read_board_state(fb.root(), &o.board);
      CHECK(state.cores_online == m.cores_online);
      CHECK(state.cpu_khz == (m.cpu_max_khz < 0 ? o.board.tables.cpu_khz.back() : m.cpu_max_khz));
      CHECK(state.gpu_hz == (m.gpu_max_hz < 0 ? o.board.tables.gpu_hz.back() : m.gpu_max_hz));
      CHECK(state.tpc_pg_mask == m.tpc_pg_mask);
      CHECK(state.fbp_pg_mask == m.fbp_pg_mask);
      // R36 is driven through the _KNEXT paths: the clk_cap EMC cap and platform/gpu.0's power control.
      const std::string emc_cap = r36 ? "/sys/kernel/nvpmodel_clk_cap/emc" : "/sys/kernel/nvpmodel_emc_cap/emc_iso_cap";
      const std::string gpu_power = r36 ? "/sys/devices/platform/gpu.0/power/control" : "/sys/devices/gpu.0/power/control";
      bool wrote_cap = false, wrote_power = false;
      for (const auto& [path, value] : ctl.last_writes()) {
        if (path == fb.path(emc_cap)) {
          wrote_cap = true;
          CHECK(value == std::to_string(m.emc_max_hz));
        }
        wrote_power = wrote_power || path == fb.path(gpu_power);
      }
      CHECK(wrote_cap);
      CHECK(wrote_power);
      REQUIRE(ctl.restore().is_ok());
      CHECK(diff_snapshots(before, fb.snapshot()) == "");
      if (!live) {  // back to the masks it booted with, for the next mode
        for (const auto& d : o.variant->modes)
          if (d.id == *o.variant->default_mode) boot_into(fb, o.booted, d);
      }
    }
  }
}

TEST_CASE("a board conf that is not NVIDIA's is told apart, naming the line") {
  FakeBoard fb(FakeKind::kOrinNx16R36);
  std::string conf = fb.read("/etc/nvpmodel.conf");
  const size_t at = conf.find("TPC_POWER_GATING TPC_PG_MASK 252");
  REQUIRE(at != std::string::npos);
  conf.replace(at, std::string("TPC_POWER_GATING TPC_PG_MASK 252").size(), "TPC_POWER_GATING TPC_PG_MASK 240");
  fb.write("/etc/nvpmodel.conf", conf);
  auto parsed = read_nvpmodel_conf(fb.root());
  REQUIRE(parsed.is_ok());
  const ModuleVariant* v = find_module_variant("p3767-0000", &*parsed);
  REQUIRE(v != nullptr);
  CHECK(v->name == "Orin NX 16GB");
  auto diffs = differences_from_nvidia(*parsed, *v);
  REQUIRE(diffs.size() == 1);
  CAPTURE(diffs[0]);
  CHECK(diffs[0].find("nvpmodel.conf:") != std::string::npos);
  CHECK(diffs[0].find("mode 1 10W: TPC_PG_MASK 240, NVIDIA's nvpmodel_p3767_0000.conf has 252") != std::string::npos);
  // A Super file (JetPack 6.2) on an Orin Nano 8GB is its own variant, known by mode names and ids.
  auto super = parse_nvpmodel_conf("< POWER_MODEL ID=0 NAME=15W >\n< POWER_MODEL ID=1 NAME=25W >\n"
                                   "< POWER_MODEL ID=2 NAME=MAXN_SUPER >\n< POWER_MODEL ID=3 NAME=7W >\n"
                                   "< PM_CONFIG DEFAULT=2 >\n",
                                   "super.conf");
  REQUIRE(super.is_ok());
  const ModuleVariant* sv = find_module_variant("p3767-0005", &*super);
  REQUIRE(sv != nullptr);
  CHECK(sv->name.find("Super") != std::string::npos);
  CHECK(differences_from_nvidia(*super, *sv).empty());
  CHECK(find_module_variant("p3767-0005", nullptr)->name == "Orin Nano 8GB");
  CHECK(find_module_variant("p2972-0000", nullptr) == nullptr);
}

}  // namespace
}  // namespace jetsweep::device
