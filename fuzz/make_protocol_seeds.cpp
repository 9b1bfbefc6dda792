// Writes fuzz/corpus/protocol's seeds: one frame per message type and variant, as proto::encode writes them
// (the examples of tests/unit/test_protocol.cpp, plus the optional fields filled). Not a fuzzer; run by hand
// after the protocol changes: build-fuzz/bin/fuzz_make_protocol_seeds fuzz/corpus/protocol
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "common/protocol.hpp"

using namespace jetsweep;
using namespace jetsweep::proto;

namespace {

std::vector<Body> examples() {
  DeviceFacts f{"host-a", 8, 16LL << 30, "host", "host", "Linux 6.1", "1.13.1", "g++ 12", "abc123"};
  std::vector<Body> out;
  out.push_back(Register{"agent-1", f, std::nullopt, {}});
  f.storage = {"sd", "ssd"};
  f.board_id = "jetson:agx-1:/";
  f.accelerator = "cuda:0 (Orin)";
  f.not_ready = {"nvpmodel: not found"};
  out.push_back(Register{"agent-1", f, 17, {4, 9}});
  out.push_back(Registered{3, 1000});
  out.push_back(Heartbeat{"idle", std::nullopt, {}, {}});
  out.push_back(Heartbeat{"running", 5, {}, {}});
  RunConfig c;
  c.batch_size = 64;
  c.workers = 2;
  c.data = "/data/fmnist";
  out.push_back(AssignRun{9, c});
  out.push_back(CancelRun{9, "campaign 3 cancelled"});
  out.push_back(MinibatchChunk{9, 1, 4096, {0.001, 0.25}, {0.5, 1e-6}, {}});
  out.push_back(MinibatchChunk{9, 1, 0, {0.001, 0.25}, {0.5, 1e-6}, {0.0002, 0.0003}});
  EpochResult e0;
  e0.run_id = 9, e0.e2e_s = 12.5, e0.stall_s = 0.25, e0.compute_s = 11.0, e0.minibatches = 938, e0.copy_s = 123.4;
  e0.energy_j = 9.87, e0.mean_power_w = 0.5, e0.loss = 85.5, e0.read_mb_s = 1200.0, e0.read_iops = 0.0;
  e0.cache_start_frac = 1.0;
  out.push_back(e0);
  EpochResult e;
  e.run_id = 9, e.epoch = 1, e.e2e_s = 12.5, e.stall_s = 0.25, e.compute_s = 11.0, e.minibatches = 938;
  e.mean_power_w = 0.4;
  e.t_start_s = 1.5;
  e.t_end_s = 14.0;
  e.power_coverage = 0.95;
  e.paused_before_s = 2.5;
  e.clocks_start = ClockReading{4, 1190400.0, 624750000.0, 1331200000.0};
  e.clocks_end = ClockReading{4, std::nullopt, std::nullopt, std::nullopt};
  e.throttled = true;
  e.throttle_reason = "gpu clock 510 MHz < 624 MHz";
  out.push_back(e);
  out.push_back(SampleChunk{9, std::nullopt, {Sample{0.1, 50.0, {40.0, 60.0}, 1200.0, 1024, 4096, 7.5},
                                              Sample{0.2, 0.0, {}, std::nullopt, 0, 0, std::nullopt}}});
  out.push_back(SampleChunk{9, 1763770000.125, {Sample{0.1, 50.0, {}, std::nullopt, 0, 0, std::nullopt}}});
  out.push_back(RunFinished{9, "done", "", 30.0});
  out.push_back(RunFinished{9, "failed", "out of memory", 1.0});
  out.push_back(Ack{77});
  out.push_back(TimeSync{1763770000.25});
  out.push_back(TimeSyncReply{1763770000.25, 1763770000.5, 1763770000.75, "", std::nullopt, std::nullopt});
  out.push_back(Error{"protocol_error", "bad", 4});
  BoardState s{"MAXN", 0, 8, 2201600, 1300500000, 3199000000, true, "max"};
  out.push_back(RunStarted{9, false, s, "ssd", "nvme0n1", true, "cuda:0 (Orin)", 1763770000.0});
  out.push_back(RunStarted{9, true, std::nullopt, "", "", false, "cpu", 0});
  // The boot clock beside the wall clock (appended: the seeds above keep their names).
  out.push_back(TimeSyncReply{1763770000.25, 1763770000.5, 1763770000.75, "0f6e6d3c-8a1b-4c2d-9e0f-123456789abc", 3600.5,
                              3600.625});
  RunStarted booted{9, false, s, "ssd", "nvme0n1", true, "cuda:0 (Orin)", 1763770000.0};
  booted.boot_id = "0f6e6d3c-8a1b-4c2d-9e0f-123456789abc";
  booted.t0_boot_s = 3601.25;
  out.push_back(booted);
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s DIR\n", argv[0]);
    return 2;
  }
  std::error_code ec;
  std::filesystem::create_directories(argv[1], ec);
  if (ec) {
    std::fprintf(stderr, "cannot create %s: %s\n", argv[1], ec.message().c_str());
    return 1;
  }
  int n = 0;
  for (const Body& body : examples()) {
    const std::string frame = encode(Envelope{static_cast<uint64_t>(n + 1), body});
    const std::string path = std::string(argv[1]) + "/" + std::string(type_name(body)) + "-" + std::to_string(n++);
    std::ofstream out(path, std::ios::binary);
    out << frame;
    if (!out.flush()) {   // a seed not written is never reported written
      std::fprintf(stderr, "cannot write %s\n", path.c_str());
      return 1;
    }
  }
  std::printf("%d seeds written to %s\n", n, argv[1]);
  return 0;
}
