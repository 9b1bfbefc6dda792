// jetsweep-agent doctor: every readiness item with a verdict, on fake board trees and on this host.
#include <doctest/doctest.h>

#include <filesystem>
#include <map>

#include "agent/doctor.hpp"
#include "agent/trainer.hpp"
#include "device/fake_board.hpp"
#include "support/temp_dir.hpp"

using namespace jetsweep;
using namespace jetsweep::agent;
using jetsweep::device::testing::FakeBoard;
using jetsweep::device::testing::FakeKind;

namespace {
std::map<std::string, DoctorItem> by_name(const DoctorReport& r) {
  std::map<std::string, DoctorItem> m;
  for (const auto& i : r.items) m[i.name] = i;
  return m;
}
}  // namespace

TEST_CASE("doctor on every fake board: each item has a verdict; CUDA decides readiness on a CPU-only build") {
  for (FakeKind kind : device::testing::all_fake_kinds()) {
    FakeBoard fb(kind);
    CAPTURE(fb.spec().name);
    testing::TempDir journal;
    DoctorOptions o;
    o.root = fb.root().string();
    o.backend = "jetson";
    o.journal_dir = (journal / "j").string();
    o.is_root = true;
    const DoctorReport r = run_doctor(o);
    auto items = by_name(r);
    for (const char* name : {"root", "board", "debugfs", "cpufreq", "devfreq", "emc", "nvpmodel", "power rails", "fan",
                             "cuda", "libtorch", "journal"}) {
      CAPTURE(name);
      REQUIRE(items.count(name) == 1);
      CHECK_FALSE(items[name].detail.empty());
    }
    for (const char* ok : {"root", "board", "debugfs", "cpufreq", "devfreq", "emc", "nvpmodel", "power rails", "journal"}) {
      CAPTURE(ok);
      CHECK(items[ok].verdict == "ok");
    }
    CHECK(items["board"].detail.find(", L4T R") != std::string::npos);
    CHECK(items["nvpmodel"].detail.find("reference state: mode") != std::string::npos);
    // Orin boards are told by their NVIDIA variant (their confs are NVIDIA's); the others have no variant table.
    REQUIRE(items.count("variant") == 1);
    if (fb.spec().family == device::Family::kT234) {
      CHECK(items["variant"].verdict == "ok");
      CHECK(items["variant"].detail.find("nvpmodel modes are NVIDIA's") != std::string::npos);
    } else {
      CHECK(items["variant"].verdict == "skip");
    }
    if (cuda_device_name().empty()) {
      CHECK(items["cuda"].verdict == "fail");   // the jetson backend trains on CUDA by default
      CHECK(items["cuda"].detail.find("without CUDA") != std::string::npos);
      CHECK_FALSE(r.ready());
      REQUIRE(r.failures().size() == 1);
      CHECK(r.failures()[0].rfind("cuda: ", 0) == 0);
    } else {
      CHECK(items["cuda"].verdict == "ok");
      CHECK(r.ready());
    }
    const auto json = r.to_json();
    CHECK(json.at("ready").as_bool() == r.ready());
    CHECK(json.at("items").as_array().size() == r.items.size());
    CHECK(r.to_text().find("[OK]") != std::string::npos);
  }
}

TEST_CASE("doctor: a board whose nvpmodel.conf is not NVIDIA's file for its variant gets a warning naming the line") {
  FakeBoard fb(FakeKind::kAgxOrin32R35);
  std::string conf = fb.read("/etc/nvpmodel.conf");
  const std::string nvidia = "GPU MAX_FREQ 816000000";  // MODE_40W's cap
  REQUIRE(conf.find(nvidia) != std::string::npos);
  conf.replace(conf.find(nvidia), nvidia.size(), "GPU MAX_FREQ 918000000");
  fb.write("/etc/nvpmodel.conf", conf);
  DoctorOptions o;
  o.root = fb.root().string();
  o.is_root = true;
  auto items = by_name(run_doctor(o));
  CHECK(items["variant"].verdict == "warn");
  CAPTURE(items["variant"].detail);
  CHECK(items["variant"].detail.find("AGX Orin 32GB (p3701-0004): 1 difference(s)") != std::string::npos);
  CHECK(items["variant"].detail.find("mode 3 MODE_40W: GPU MAX_FREQ 918000000, NVIDIA's nvpmodel_p3701_0004.conf has "
                                     "816000000") != std::string::npos);
  // No conf to compare: not "NVIDIA's", but not known.
  std::filesystem::remove(fb.path("/etc/nvpmodel.conf"));
  items = by_name(run_doctor(o));
  CHECK(items["variant"].verdict == "warn");
  CHECK(items["variant"].detail.find("nvpmodel.conf unreadable") != std::string::npos);
}

TEST_CASE("doctor: not root, no board, an unwritable journal and a CPU-only accelerator") {
  FakeBoard fb(FakeKind::kAgxOrinR35);
  DoctorOptions o;
  o.root = fb.root().string();
  o.is_root = false;
  o.accelerator = "auto";
  auto items = by_name(run_doctor(o));
  CHECK(items["root"].verdict == "fail");
  CHECK(items["root"].detail.find("need root") != std::string::npos);
  CHECK(items["cuda"].verdict == (cuda_device_name().empty() ? "warn" : "ok"));   // auto: the CPU is fine
  CHECK(items["journal"].verdict == "skip");

  testing::TempDir empty;
  DoctorOptions none;
  none.root = empty.str();
  none.is_root = true;
  none.journal_dir = "/proc/no-such-dir/journal";
  const auto r = run_doctor(none);
  items = by_name(r);
  CHECK(items["board"].verdict == "fail");
  CHECK(items["debugfs"].verdict == "skip");
  CHECK(items["journal"].verdict == "fail");
  CHECK_FALSE(r.ready());

  // The host and sim backends drive no board: they are ready without CUDA.
  testing::TempDir journal;
  DoctorOptions host;
  host.backend = "host";
  host.journal_dir = journal.str();
  const auto h = run_doctor(host);
  items = by_name(h);
  CHECK(items["board"].verdict == "skip");
  CHECK(items["journal"].verdict == "ok");
  CHECK(h.ready());
}
