// The pieces of the agent's reboot flow below the state machine (agent/reboot.hpp): the pending-reboot file that
// survives the reboot, and nvpmodel's prompt answered before the reboot command runs. The flow itself runs end
// to end in tests/integration/test_reboot.cpp.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "agent/reboot.hpp"
#include "support/temp_dir.hpp"

using namespace jetsweep;
using namespace jetsweep::agent;
namespace fs = std::filesystem;

namespace {
void script(const fs::path& p, const std::string& text) {
  std::ofstream(p) << text;
  fs::permissions(p, fs::perms::owner_all);
}
}  // namespace

TEST_CASE("the pending reboot survives as a file: run, config and announcement; a damaged one is refused by name") {
  testing::TempDir dir;
  const std::string file = pending_reboot_file(dir.str());
  auto none = load_pending_reboot(file);
  REQUIRE(none.is_ok());
  CHECK_FALSE(none->has_value());
  PendingReboot p;
  p.run_id = 41;
  p.config.device = "agx-orin";
  p.config.model = "resnet18";
  p.config.base_mode = "MAXN";
  p.config.power_mode.gpu_hz = 816000000;
  p.announced = proto::RebootPending{41, "MAXN", 0, 240, 0, std::nullopt, std::nullopt, 600, 1763770000.5};
  REQUIRE(save_pending_reboot(file, p).is_ok());
  auto back = load_pending_reboot(file);
  REQUIRE_MESSAGE(back.is_ok(), back.status().to_string());
  REQUIRE(back->has_value());
  CHECK((*back)->run_id == 41);
  CHECK((*back)->config == p.config);
  CHECK((*back)->announced == p.announced);
  CHECK(describe_mask_change(p.announced) == "TPC_PG_MASK 240 -> 0");

  std::ofstream(file) << "{\"version\": 1, \"run_id\": 41, \"commands_started\": false}";
  auto damaged = load_pending_reboot(file);
  REQUIRE_FALSE(damaged.is_ok());
  CHECK(damaged.status().message().find(file + " (the pending reboot; remove it") == 0);
  CHECK(damaged.status().message().find("field 'config': missing") != std::string::npos);
  std::ofstream(file) << "not json";
  CHECK_FALSE(load_pending_reboot(file).is_ok());
  REQUIRE(clear_pending_reboot(file).is_ok());
  REQUIRE(clear_pending_reboot(file).is_ok());   // none left: fine
  CHECK_FALSE(load_pending_reboot(file)->has_value());
}

TEST_CASE("set_mode_and_reboot answers nvpmodel's prompt YES, then runs the reboot command; a failure names the command") {
  testing::TempDir dir;
  const fs::path log = dir / "log";
  // Asks as NVIDIA's nvpmodel does and records the answer; refuses anything but YES/yes.
  script(dir / "nvpmodel", "#!/bin/sh\necho \"$*\" >> '" + log.string() + "'\n"
                           "echo 'DO YOU WANT TO REBOOT NOW? enter YES/yes to confirm:'\nread answer\n"
                           "echo \"answer=$answer\" >> '" + log.string() + "'\n"
                           "case \"$answer\" in YES|yes) exit 0 ;; *) echo 'NVPM ERROR: bad input!' >&2; exit 1 ;; esac\n");
  script(dir / "reboot", "#!/bin/sh\necho \"reboot $*\" >> '" + log.string() + "'\n");
  RebootOptions o;
  o.allowed = true;
  o.nvpmodel_command = {(dir / "nvpmodel").string()};
  o.reboot_command = {(dir / "reboot").string(), "now"};
  REQUIRE(set_mode_and_reboot(o, 3).is_ok());
  CHECK(testing::read_file(log) == "-m 3\nanswer=YES\nreboot now\n");

  // nvpmodel refuses: the reboot command does not run, and the error names nvpmodel's command and output.
  fs::remove(log);
  script(dir / "nvpmodel", "#!/bin/sh\necho 'NVPM ERROR: failed to set power mode' >&2\nexit 1\n");
  Status s = set_mode_and_reboot(o, 1);
  CHECK(s.code() == Code::kUnavailable);
  CHECK(s.message().find("`" + (dir / "nvpmodel").string() + " -m 1` exited 1: NVPM ERROR: failed to set power mode") == 0);
  CHECK_FALSE(fs::exists(log));
  o.nvpmodel_command = {(dir / "missing-nvpmodel").string()};
  CHECK(set_mode_and_reboot(o, 1).message().find("cannot run") != std::string::npos);
}
