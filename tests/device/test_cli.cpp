// device_cli_main: probe JSON fields, set-mode/restore round trip, argument errors (exit 2).
#include <doctest/doctest.h>

#include <sstream>

#include <boost/json.hpp>

#include "agent/device/device_cli.hpp"
#include "agent/device/fs_util.hpp"
#include "agent/device/restore_state.hpp"
#include "tests/device/device_checks.hpp"

namespace jetsweep::device {
namespace {

struct CliResult {
  int rc;
  std::string out;
  std::string err;
};

CliResult run(const std::string& cmd, const std::vector<std::string>& args) {
  std::ostringstream out, err;
  int rc = device_cli_main(cmd, args, out, err);
  return {rc, out.str(), err.str()};
}

// `cmd` on the fake board: --root and --state-dir name its tree and state directory, then `args`.
CliResult run_on(const FakeBoard& fb, const std::string& cmd, std::vector<std::string> args) {
  args.insert(args.begin(), {"--root", fb.root().string(), "--state-dir", fb.state_dir().string()});
  return run(cmd, args);
}

// `set-mode` on the fake board with explicit values, then the `extra` flags.
CliResult set_mode_on(const FakeBoard& fb, const std::string& cores, const std::string& cpu_khz, const std::string& gpu_hz,
                      const std::string& emc_hz, const std::vector<std::string>& extra = {}) {
  std::vector<std::string> args = {"--cores", cores, "--cpu-khz", cpu_khz, "--gpu-hz", gpu_hz, "--emc-hz", emc_hz};
  args.insert(args.end(), extra.begin(), extra.end());
  return run_on(fb, "set-mode", args);
}

TEST_CASE("probe --json reports identity, tables, mode count, nvpmodel modes, rails and writability") {
  for_each_fake_board([](const FakeBoard& fb, const testing::FakeSpec& spec) {
    CliResult r = run("probe", {"--root", fb.root().string(), "--json"});
    CHECK_MESSAGE(r.rc == 0, r.err);
    auto v = boost::json::parse(r.out);
    const auto& o = v.as_object();
    CHECK(o.at("family").as_string() == std::string(family_name(spec.family)));
    CHECK(o.at("module").as_string() == std::string(module_name(spec.module)));
    CHECK(o.at("l4t").as_string() == spec.l4t);
    CHECK(o.at("cores").as_int64() == spec.cores);
    CHECK(o.at("cpu_clusters").as_array().size() == spec.clusters.size());
    CHECK(o.at("cpu_freqs_khz").as_array().size() == spec.cpu_khz.size());
    CHECK(o.at("gpu_freqs_hz").as_array().size() == spec.gpu_hz.size());
    CHECK(o.at("emc_freqs_hz").as_array().size() == spec.emc_hz.size());
    CHECK(o.at("emc_freqs_hz").as_array().back().as_int64() == spec.emc_hz.back());
    CHECK(o.at("power_mode_count").to_number<uint64_t>() ==
          static_cast<uint64_t>(spec.cores) * spec.cpu_khz.size() * spec.gpu_hz.size() * spec.emc_hz.size());
    const auto& modes = o.at("nvpmodel_modes").as_array();
    REQUIRE(modes.size() == spec.mode_names.size());
    for (size_t i = 0; i < modes.size(); ++i) CHECK(modes[i].at("name").as_string() == spec.mode_names[i]);
    CHECK(o.at("nvpmodel_default").as_int64() == spec.default_mode);
    CHECK(o.at("rails").as_array().size() == spec.rail_names.size());
    CHECK(o.at("total_power_w").as_double() == doctest::Approx(spec.total_power_w));
    CHECK(o.at("total_power_rule").as_string() == spec.total_rule);
    const auto& w = o.at("writable").as_object();
    CHECK(w.size() > 5);
    CHECK(w.contains(fb.path("/proc/sys/vm/drop_caches").string()));
    CHECK(o.at("errors").as_array().empty());
    CHECK(o.at("nvpmodel_conf_fnv1a64").as_string().size() == 16);
  });
}

TEST_CASE("probe shows the board's GPU gating, the nvpmodel status and the modes that need a reboot") {
  FakeBoard fb(FakeKind::kAgxOrinR35);
  CliResult r = run("probe", {"--root", fb.root().string(), "--json"});
  REQUIRE_MESSAGE(r.rc == 0, r.err);
  auto v = boost::json::parse(r.out);
  const auto& o = v.as_object();
  CHECK(o.at("nvpmodel_mode").as_int64() == 2);
  CHECK(o.at("nvpmodel_fan_mode").as_string() == "quiet");
  CHECK(o.at("gpu_gating").at("tpc_pg_mask").as_int64() == 240);
  CHECK(o.at("gpu_gating").at("fbp_pg_mask").is_null());
  std::vector<std::string> reboot;
  for (const auto& m : o.at("nvpmodel_modes").as_array()) {
    if (m.at("needs_reboot").as_bool()) reboot.push_back(std::string(m.at("name").as_string()));
  }
  // NVIDIA's masks: MAXN 0, MODE_15W 248, MODE_30W 240 (the booted one), MODE_50W 0.
  CHECK(reboot == std::vector<std::string>{"MAXN", "MODE_15W", "MODE_50W"});
  CHECK(o.at("nvpmodel_skipped_lines").as_array().empty());
  CliResult text = run("probe", {"--root", fb.root().string()});
  CHECK(text.out.find("gpu gating: tpc_pg_mask 240, fbp_pg_mask none") != std::string::npos);
  CHECK(text.out.find("nvpmodel status: mode 2, fan mode quiet") != std::string::npos);
  CHECK(text.out.find("mode MAXN gates the GPU differently: needs nvpmodel -m 0 and a reboot") != std::string::npos);
  // A line the parser cannot place is named with its file and line.
  fb.write("/etc/nvpmodel.conf", fb.read("/etc/nvpmodel.conf") + "< POWER_MODEL ID=9 NAME=ODD >\nGPU MAX_FREQ\n");
  CliResult odd = run("probe", {"--root", fb.root().string(), "--json"});
  auto skipped = boost::json::parse(odd.out).at("nvpmodel_skipped_lines").as_array();
  REQUIRE(skipped.size() == 1);
  CHECK(std::string(skipped[0].as_string()).find("nvpmodel.conf:") != std::string::npos);
  CHECK(std::string(skipped[0].as_string()).find("'GPU MAX_FREQ'") != std::string::npos);
}

TEST_CASE("probe text output and failure on a non-Jetson root") {
  FakeBoard fb(FakeKind::kAgxXavierR32);
  CliResult r = run("probe", {"--root=" + fb.root().string()});
  CHECK(r.rc == 0);
  CHECK(r.out.find("power modes: 8 x 29 x 14 x 9 = 29232") != std::string::npos);
  CHECK(r.out.find("total power: ") != std::string::npos);
  CliResult none = run("probe", {"--root", fb.state_dir().string(), "--json"});
  CHECK(none.rc == 1);
  CHECK(none.err.find("compatible") != std::string::npos);
}

TEST_CASE("set-mode and restore through the CLI leave the tree byte-for-byte identical") {
  FakeBoard fb(FakeKind::kAgxXavierR32);
  auto before = fb.snapshot();
  CliResult r = set_mode_on(fb, "4", "1190400", "624750000", "1331200000", {"--pin-clocks", "--fan-max"});
  REQUIRE_MESSAGE(r.rc == 0, r.err);
  CHECK(r.out.find("scaling_max_freq = 1190400") != std::string::npos);
  CHECK(trim(fb.read("/sys/devices/system/cpu/cpu5/online")) == "0");
  CHECK(exists_file(restore_state_path(fb.state_dir())));

  // MODE_10W gates 2 of the 4 TPCs (TPC_PG_MASK 5): not live on a board booted in MODE_15W (mask 0).
  CliResult gated = run_on(fb, "set-mode", {"--mode", "MODE_10W"});
  CHECK(gated.rc != 0);
  CHECK(gated.err.find("TPC_PG_MASK 5") != std::string::npos);
  CliResult named = run_on(fb, "set-mode", {"--mode", "MODE_15W"});
  REQUIRE_MESSAGE(named.rc == 0, named.err);
  CHECK(trim(fb.read("/sys/devices/system/cpu/cpu4/online")) == "0");

  CliResult bad_root = run("restore", {"--root", "/", "--state-dir", fb.state_dir().string()});
  CHECK(bad_root.rc == 2);
  CHECK(bad_root.err.find("--root") != std::string::npos);

  CliResult rs = run_on(fb, "restore", {});
  REQUIRE_MESSAGE(rs.rc == 0, rs.err);
  CHECK(rs.out.find("restored") != std::string::npos);
  CHECK(diff_snapshots(before, fb.snapshot()) == "");
  CliResult again = run("restore", {"--state-dir", fb.state_dir().string()});
  CHECK(again.rc == 0);
  CHECK(again.out.find("nothing to restore") != std::string::npos);
}

TEST_CASE("set-mode refuses an out-of-table value with exit 2 naming the table file") {
  FakeBoard fb(FakeKind::kOrinNanoR36);
  auto before = fb.snapshot();
  CliResult r = set_mode_on(fb, "6", "1500000", "624750000", "2133000000");
  CHECK(r.rc == 2);
  CHECK(r.err.find("1500000") != std::string::npos);
  CHECK(r.err.find("scaling_available_frequencies") != std::string::npos);
  CHECK(diff_snapshots(before, fb.snapshot()) == "");
}

TEST_CASE("bad arguments exit 2 and name the flag") {
  struct Case {
    std::string cmd;
    std::vector<std::string> args;
    std::string expect;
  };
  std::vector<Case> cases = {
      {"probe", {"--bogus"}, "--bogus"},
      {"probe", {"--root"}, "--root"},
      {"probe", {"stray"}, "stray"},
      {"probe", {"--json=1"}, "--json"},
      {"set-mode", {"--cores", "4", "--cpu-khz", "1", "--emc-hz", "2"}, "--gpu-hz"},
      {"set-mode", {"--cores", "four", "--cpu-khz", "1", "--gpu-hz", "1", "--emc-hz", "2"}, "--cores"},
      {"set-mode", {"--cores", "0", "--cpu-khz", "1", "--gpu-hz", "1", "--emc-hz", "2"}, "--cores"},
      {"set-mode", {"--mode", "MAXN", "--cores", "4"}, "--mode"},
      {"set-mode", {"--pin-clocks"}, "--mode"},
      {"set-mode", {"--root", "/a", "--root", "/b", "--mode", "x"}, "--root"},
      {"restore", {"--mode", "x"}, "--mode"},
      {"frobnicate", {}, "frobnicate"},
  };
  for (const auto& c : cases) {
    CAPTURE(c.cmd);
    CAPTURE(c.expect);
    CliResult r = run(c.cmd, c.args);
    CHECK(r.rc == 2);
    CHECK_MESSAGE(r.err.find(c.expect) != std::string::npos, r.err);
  }
}

}  // namespace
}  // namespace jetsweep::device
