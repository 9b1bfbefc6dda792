// Every protocol message's wire frame, byte for byte (issue 32: "wire JSON unchanged"). The frames below were written
// by the hand-written encoders before the codecs were derived from the records' descriptions; a derived codec must
// write exactly these bytes (key order, keys left out when empty, nulls) and read them back to the same record.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "common/protocol.hpp"
#include "support/pinned_texts.hpp"

using namespace jetsweep;
using namespace jetsweep::proto;

namespace {

// Each message twice: every field set, and as bare as the decoder accepts.
std::vector<Envelope> messages() {
  std::vector<Envelope> out;
  uint64_t id = 1;
  auto add = [&](Body b) { out.push_back(Envelope{id++, std::move(b)}); };

  Register reg;
  reg.name = "orin-1";
  reg.facts.hostname = "orin-1.lab";
  reg.facts.cpus = 12, reg.facts.mem_bytes = 68719476736;
  reg.facts.backend = "jetson", reg.facts.device_class = "agx-orin", reg.facts.kernel = "5.15.136-tegra";
  reg.facts.torch_version = "2.3.0", reg.facts.compiler = "GCC 11.4", reg.facts.git_sha = "abc123";
  reg.facts.storage = {"ssd", "sd"};
  reg.facts.board_id = "1421019000123";
  reg.facts.accelerator = "cuda:0 (Orin)";
  reg.facts.not_ready = {"clocks: not root"};
  reg.facts.live_modes = {"MAXN", "0"};
  reg.facts.may_reboot = true;
  reg.facts.tables = BoardTables{"board", 12, {115200, 2201600}, {306000000, 1300500000}, {204000000, 3199000000}};
  reg.current_run = 17;
  reg.journal_runs = {15, 17};
  reg.credential = std::string(64, 'a');
  add(reg);
  Register bare_reg;
  bare_reg.name = "n";
  add(bare_reg);

  add(Registered{3, 500, std::string(64, 'b')});
  add(Registered{3, 1000, std::nullopt});
  add(Heartbeat{"training", 17, 12, 40960});
  add(Heartbeat{"idle", std::nullopt, std::nullopt, std::nullopt});
  add(AssignRun{21, RunConfig{}});

  add(MinibatchChunk{5, 2, 1024, {0.001, 0.25}, {0.5, 0.125}, {0.0625, 0.03125}});
  add(MinibatchChunk{5, 0, 0, {}, {}, {}});

  EpochResult e;
  e.run_id = 9, e.epoch = 2, e.e2e_s = 12.5, e.stall_s = 0.25, e.compute_s = 11.0, e.minibatches = 938;
  e.copy_s = 0.125, e.energy_j = 123.5, e.mean_power_w = 9.875, e.loss = 0.5, e.read_mb_s = 85.5;
  e.read_iops = 1200.0, e.cache_start_frac = 0.0, e.cache_end_frac = 1.0, e.t_start_s = 3.0, e.t_end_s = 15.5;
  e.power_coverage = 0.75, e.paused_before_s = 2.5;
  e.clocks_start = ClockReading{6, 1510400.0, 624750000.0, 2133000000.0};
  e.clocks_end = ClockReading{4, 1190400.0, std::nullopt, std::nullopt};
  e.throttled = true, e.throttle_reason = "cpu0 at 1190400 kHz";
  add(e);
  EpochResult bare_epoch;
  bare_epoch.run_id = 9;
  add(bare_epoch);

  Sample s1{1.5, 42.25, {40.0, 44.5}, 1190.5, 1048576, 4096, 7.75, 51.5};
  Sample s2{2.0, 0.0, {}, std::nullopt, 0, 0, std::nullopt, std::nullopt};
  add(SampleChunk{5, 1764600000.25, {s1, s2}});
  add(SampleChunk{5, std::nullopt, {}});

  add(RunFinished{5, "failed", "CUDA error: out of memory", 125.5});
  add(RunFinished{5, "done", "", 0});
  add(Ack{41});
  add(Error{"protocol", "message 'x' field 'y': missing", 40});
  add(Error{"internal", "oops", std::nullopt});
  add(TimeSync{1764600000.5});
  add(TimeSyncReply{1764600000.5, 1764600001.25, 1764600001.375, {}, {}, {}});
  add(CancelRun{5, "campaign cancelled"});
  add(CancelRun{5, ""});

  RunStarted rs;
  rs.run_id = 5, rs.reference_state = true;
  rs.applied = BoardState{"MAXN", 0, 12, 2201600, 1300500000, 3199000000, true, "max", 240, 0};
  rs.storage_medium = "ssd", rs.storage_device = "nvme0n1", rs.page_cache_dropped = true;
  rs.compute_device = "cuda:0 (Orin)", rs.t0_unix_s = 1764600000.125;
  rs.workload = WorkloadFacts{std::string(64, 'c'), 61706, 429128, std::string(64, 'd'), 4, 54950000};
  add(rs);
  RunStarted bare_rs;
  bare_rs.run_id = 5, bare_rs.t0_unix_s = 1.0;
  add(bare_rs);
  RunStarted bare_applied = bare_rs;
  bare_applied.applied = BoardState{};
  add(bare_applied);

  add(RebootPending{5, "15W", 2, 240, 0, 1, 0, 120.0, 1764600000.75});
  add(RebootPending{5, "15W", 2, std::nullopt, std::nullopt, std::nullopt, std::nullopt, 1.0, 0.0});
  add(FetchModel{std::string(64, 'e'), 3});
  add(ModelChunk{std::string(64, 'e'), 3, 4, 3145800, "\x01\x02\x03\xff", ""});
  add(ModelChunk{std::string(64, 'e'), 9, 4, 3145800, "", "no chunk 9"});
  return out;
}

// The frames the hand-written encoders wrote for messages(), in order.
const char* const kFrames[] = {
#include "wire_frames.inc"
};

}  // namespace

TEST_CASE("every message's wire frame is byte for byte what the hand-written encoders wrote, and reads back equal") {
  const auto all = messages();
  std::vector<std::string> frames;
  for (const auto& m : all) frames.push_back(encode(m));
  testing::write_pins_if_asked("JETSWEEP_WRITE_WIRE_FRAMES", frames);   // regenerates wire_frames.inc
  REQUIRE(all.size() == std::size(kFrames));
  for (size_t i = 0; i < all.size(); ++i) {
    CAPTURE(i);
    CAPTURE(type_name(all[i].body));
    CHECK(encode(all[i]) == kFrames[i]);
    auto back = decode(kFrames[i]);
    REQUIRE_MESSAGE(back.is_ok(), back.status().to_string());
    CHECK(*back == all[i]);
  }
}
