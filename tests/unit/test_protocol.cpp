#include <doctest/doctest.h>

#include <boost/json.hpp>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <limits>
#include <random>

#include "common/json_parse.hpp"
#include "common/protocol.hpp"

using namespace jetsweep;
using namespace jetsweep::proto;

namespace {
// An epoch result from its times and some of its measures (EpochResult has a base: no positional braces).
EpochResult epoch_result(int64_t run, int64_t epoch, double e2e_s, double stall_s, double compute_s, int64_t minibatches,
                         std::optional<double> copy_s = std::nullopt, std::optional<double> energy_j = std::nullopt,
                         std::optional<double> mean_power_w = std::nullopt, std::optional<double> loss = std::nullopt) {
  EpochResult e;
  e.run_id = run, e.epoch = epoch, e.e2e_s = e2e_s, e.stall_s = stall_s, e.compute_s = compute_s;
  e.minibatches = minibatches, e.copy_s = copy_s, e.energy_j = energy_j, e.mean_power_w = mean_power_w, e.loss = loss;
  return e;
}
void round_trip(const Body& body, uint64_t id = 42) {
  Envelope in{id, body};
  auto out = decode(encode(in));
  REQUIRE_MESSAGE(out.is_ok(), out.status().to_string());
  CHECK(out.value() == in);
}
}  // namespace

TEST_CASE("every message type round-trips through the envelope") {
  DeviceFacts f{"host-a", 8, 16LL << 30, "host", "host", "Linux 6.1", "1.13.1", "g++ 12", "abc123"};
  round_trip(Register{"agent-1", f, std::nullopt, {}});
  round_trip(Register{"agent-1", f, 17, {}});
  round_trip(Register{"agent-1", f, std::nullopt, {4, 9}});
  f.storage = {"sd", "ssd"};
  f.board_id = "jetson:agx-1:/";
  round_trip(Register{"agent-1", f, std::nullopt, {}});
  round_trip(Registered{3, 1000});
  round_trip(Heartbeat{"idle", std::nullopt, {}, {}});
  round_trip(Heartbeat{"running", 5, {}, {}});
  round_trip(Heartbeat{"running", 5, 12, 345678});
  RunConfig c;
  c.batch_size = 64;
  c.workers = 2;
  c.data = "/data/fmnist";
  round_trip(AssignRun{9, c});
  round_trip(CancelRun{9, "campaign 3 cancelled"});
  round_trip(MinibatchChunk{9, 1, 4096, {0.001, 0.25}, {0.5, 1e-6}, {}});
  round_trip(MinibatchChunk{9, 1, 0, {0.001, 0.25}, {0.5, 1e-6}, {0.0002, 0.0003}});
  {
    auto e = epoch_result(9, 0, 12.5, 0.25, 11.0, 938, 123.4, 9.87, 0.5, 85.5);
    e.read_mb_s = 1200.0, e.read_iops = 0.0, e.cache_start_frac = 1.0;
    round_trip(e);
  }
  round_trip(epoch_result(9, 1, 12.5, 0.25, 11.0, 938, std::nullopt, std::nullopt, 0.4));
  round_trip(SampleChunk{9, std::nullopt, {Sample{0.1, 50.0, {40.0, 60.0}, 1200.0, 1024, 4096, 7.5, 47.25},
                             Sample{0.2, 0.0, {}, std::nullopt, 0, 0, std::nullopt}}});
  round_trip(RunFinished{9, "done", "", 30.0});
  round_trip(RunFinished{9, "cancelled", "agent shutting down", 1.0});
  round_trip(Ack{77});
  round_trip(TimeSync{1763770000.25});
  round_trip(TimeSyncReply{1763770000.25, 1763770000.5, 1763770000.75, {}, {}, {}});
  round_trip(TimeSyncReply{1763770000.25, 1763770000.5, 1763770000.75, "0f6e6d3c-8a1b-4c2d-9e0f-123456789abc", 3600.5,
                           3600.625});
  {
    RunStarted booted;
    booted.run_id = 9;
    booted.t0_unix_s = 1763770000.125;
    booted.boot_id = "0f6e6d3c-8a1b-4c2d-9e0f-123456789abc";
    booted.t0_boot_s = 3601.25;
    round_trip(booted);
  }
  SampleChunk with_t0{9, 1763770000.125, {Sample{0.1, 50.0, {}, std::nullopt, 0, 0, std::nullopt}}};
  round_trip(with_t0);
  round_trip(Error{"protocol_error", "bad", 4});
  f.live_modes = {"MODE_30W", "2", "MODE_40W", "3"};
  round_trip(Register{"agent-1", f, std::nullopt, {}});
  round_trip(RebootPending{9, "MAXN", 0, 240, 0, std::nullopt, std::nullopt, 600, 1763770000.5});
  round_trip(RebootPending{9, "7W", 1, 240, 252, 2, 2, 30, 1763770000.5});
  round_trip(FetchModel{std::string(64, 'a'), 3});
  for (const std::string& data : std::vector<std::string>{"", "a", "ab", "abc", std::string("\0\xff\x10 binary", 10)})
    round_trip(ModelChunk{std::string(64, 'a'), 3, 4, 3 * kModelChunkBytes + 7, data, ""});
  round_trip(ModelChunk{std::string(64, 'a'), 0, 0, 0, "", "the controller has no model file"});
}

TEST_CASE("reboot_pending: masks, the expected return and the request time are checked by name") {
  const std::string ok =
      R"({"type":"reboot_pending","version":1,"id":3,"run_id":9,"mode_name":"MAXN","nvpmodel_id":0,)"
      R"("tpc_pg_mask_from":240,"tpc_pg_mask_to":0,"expected_back_s":600,"requested_unix_s":1763770000.5})";
  REQUIRE(decode(ok).is_ok());
  auto refused = [&](const std::string& from, const std::string& to) {
    std::string frame = ok;
    frame.replace(frame.find(from), from.size(), to);
    auto r = decode(frame);
    REQUIRE_FALSE(r.is_ok());
    return r.status().message();
  };
  CHECK(refused("\"tpc_pg_mask_to\":0", "\"tpc_pg_mask_to\":-1").find("field 'tpc_pg_mask_to': GPU masks must be >= 0") !=
        std::string::npos);
  CHECK(refused("\"expected_back_s\":600", "\"expected_back_s\":0").find("field 'expected_back_s'") != std::string::npos);
  CHECK(refused("\"mode_name\":\"MAXN\",", "").find("field 'mode_name': missing") != std::string::npos);
  CHECK(needs_ack(RebootPending{}));   // journaled and acked: the agent reboots only once the controller has it
}

TEST_CASE("model_chunk: data that is not base64 is refused by name") {
  auto bad = decode(R"({"type":"model_chunk","version":1,"id":0,"sha256":"x","index":0,"chunks":1,"bytes":3,"data":"YW*j"})");
  REQUIRE_FALSE(bad.is_ok());
  CHECK(bad.status().message() == "message 'model_chunk' field 'data': is not base64");
  // Text that is not whole 4-character groups (here 23 characters) is refused before it is decoded: Beast's decoder
  // would write a whole group for the partial one, past the buffer sized for the text.
  for (const std::string data : {std::string(23, 'A'), std::string("AAAAA"), std::string("AA=A"), std::string("A===")}) {
    auto refused = decode(R"({"type":"model_chunk","version":1,"id":0,"sha256":"x","index":0,"chunks":1,"bytes":3,"data":")" +
                          data + "\"}");
    REQUIRE_FALSE(refused.is_ok());
    CHECK(refused.status().message() == "message 'model_chunk' field 'data': is not base64");
  }
  // The bytes' codec of its own, inside the described message: each refusal names the field.
  const std::string head = R"({"type":"model_chunk","version":1,"id":0,"sha256":"x","index":0,"chunks":1,"bytes":3)";
  auto number = decode(head + R"(,"data":12})");
  REQUIRE_FALSE(number.is_ok());
  CHECK(number.status().message() == "message 'model_chunk' field 'data': expected a string, got integer");
  auto missing = decode(head + "}");
  REQUIRE_FALSE(missing.is_ok());
  CHECK(missing.status().message() == "message 'model_chunk' field 'data': missing");
  auto null_data = decode(head + R"(,"data":null,"error":"no such file"})");   // null: no bytes, as "" is
  REQUIRE(null_data.is_ok());
  CHECK(std::get<ModelChunk>(null_data->body) == ModelChunk{"x", 0, 1, 3, "", "no such file"});
  auto padded = decode(head + R"(,"data":"YWI="})");
  REQUIRE(padded.is_ok());
  CHECK(std::get<ModelChunk>(padded->body).data.bytes == "ab");
  auto negative = decode(R"({"type":"model_chunk","version":1,"id":0,"sha256":"x","index":0,"chunks":-1,"bytes":3,"data":""})");
  REQUIRE_FALSE(negative.is_ok());
  CHECK(negative.status().message() == "message 'model_chunk' field 'index': index, chunks and bytes must be >= 0");
  CHECK_FALSE(needs_ack(FetchModel{}));   // a request on the connection, not a journaled result
}

TEST_CASE("envelope carries type, version and id") {
  auto s = encode(Envelope{5, Ack{3}});
  CHECK(s.find("\"type\":\"ack\"") != std::string::npos);
  CHECK(s.find("\"version\":1") != std::string::npos);
  CHECK(s.find("\"id\":5") != std::string::npos);
}

namespace {
std::string rejection(const std::string& frame) {
  auto r = decode(frame);
  REQUIRE_FALSE(r.is_ok());
  CHECK(r.status().code() == Code::kProtocolError);
  return r.status().message();
}
}  // namespace

TEST_CASE("bad frames are rejected with a message naming type and field") {
  CHECK(rejection("not json").find("malformed JSON frame") == 0);
  CHECK(rejection("[1,2]") == "frame is not a JSON object but array");
  CHECK(rejection("{\"version\":1,\"id\":1}") == "envelope field 'type': missing");
  CHECK(rejection("{\"type\":\"teleport\",\"version\":1,\"id\":1}") == "unknown message type 'teleport'");
  CHECK(rejection("{\"type\":\"ack\",\"version\":2,\"id\":1,\"up_to\":1}") ==
        "message 'ack': unsupported protocol version 2 (this build speaks 1)");
  CHECK(rejection("{\"type\":\"epoch_result\",\"version\":1,\"id\":1,\"run_id\":1,\"epoch\":\"zero\"}") ==
        "message 'epoch_result' field 'epoch': expected an integer, got string");
  // A required member given as null is refused as its kind, never read as "" or false (a string read "" before).
  CHECK(rejection("{\"type\":\"heartbeat\",\"version\":1,\"id\":1,\"state\":null}") ==
        "message 'heartbeat' field 'state': expected a string, got null");
  CHECK(rejection("{\"type\":\"run_finished\",\"version\":1,\"id\":1,\"run_id\":null,\"status\":\"done\"}") ==
        "message 'run_finished' field 'run_id': expected an integer, got null");
  CHECK(rejection("{\"type\":\"minibatches\",\"version\":1,\"id\":1,\"run_id\":1,\"epoch\":0,\"first_index\":0,"
                  "\"stall_s\":[1,2],\"compute_s\":[1]}") ==
        "message 'minibatches' field 'compute_s': has 1 values but stall_s has 2");
  CHECK(rejection("{\"type\":\"minibatches\",\"version\":1,\"id\":1,\"run_id\":1,\"epoch\":0,\"first_index\":0,"
                  "\"stall_s\":[1,2],\"compute_s\":[1,2],\"copy_s\":[0.1]}") ==
        "message 'minibatches' field 'copy_s': has 1 values but stall_s has 2");
  CHECK(rejection("{\"type\":\"assign_run\",\"version\":1,\"id\":1,\"run_id\":1,\"config\":{\"model\":\"lenet5\","
                  "\"dataset\":\"mnist\",\"batch_size\":0,\"workers\":0,\"prefetch\":2,\"epochs\":1}}") ==
        "message 'assign_run' field 'config', field 'batch_size': must be between 1 and 65536");
  CHECK(rejection("{\"type\":\"assign_run\",\"version\":1,\"id\":1,\"run_id\":1,\"config\":[]}") ==
        "message 'assign_run' field 'config': expected an object, got array");
  CHECK(rejection("{\"type\":\"assign_run\",\"version\":1,\"id\":1,\"run_id\":1}") ==
        "message 'assign_run' field 'config': missing");
  CHECK(rejection("{\"type\":\"run_finished\",\"version\":1,\"id\":1,\"run_id\":1,\"status\":\"great\"}") ==
        "message 'run_finished' field 'status': must be 'done', 'failed' or 'cancelled'");
  CHECK(rejection("{\"type\":\"register\",\"version\":1,\"id\":1,\"name\":\"a\",\"facts\":{\"hostname\":\"h\"}}") ==
        "message 'register' field 'facts', field 'cpus': missing");
  // An overflowing literal parses to infinity: refused with its place, not stored.
  CHECK(rejection("{\"type\":\"samples\",\"version\":1,\"id\":1,\"run_id\":1,\"samples\":[{\"t_s\":0,"
                  "\"cpu_util_pct\":1,\"mem_used_kb\":1,\"disk_read_bytes\":0},{\"t_s\":1e999,\"cpu_util_pct\":1,"
                  "\"mem_used_kb\":1,\"disk_read_bytes\":0}]}") ==
        "message 'samples' field 'samples[1]', field 't_s': must be a finite number");
  CHECK(rejection("{\"type\":\"minibatches\",\"version\":1,\"id\":1,\"run_id\":1,\"epoch\":0,\"first_index\":0,"
                  "\"stall_s\":[1,-1e999],\"compute_s\":[1,1]}") ==
        "message 'minibatches' field 'stall_s': must hold finite numbers");
  CHECK(rejection("{\"type\":\"register\",\"version\":1,\"id\":1,\"name\":\"a\",\"facts\":{\"hostname\":\"h\","
                  "\"cpus\":1,\"mem_bytes\":1,\"backend\":\"host\",\"device_class\":\"host\",\"storage\":[\"sd\",3]}}") ==
        "message 'register' field 'facts', field 'storage': element 1 is not a string");
  // A negative message id in an error's ref_id (found by fuzz_protocol: it came back as a huge unsigned id,
  // which then did not decode).
  CHECK(rejection("{\"type\":\"error\",\"version\":1,\"id\":19,\"code\":\"protocol_or\",\"message\":\"bad\","
                  "\"ref_id\":-4}") == "message 'error' field 'ref_id': must be >= 0");
}

TEST_CASE("oversized frames are rejected without parsing") {
  std::string big(kMaxFrameBytes + 1, ' ');
  CHECK(rejection(big).find("exceeds the limit") != std::string::npos);
}

TEST_CASE("only result messages need acknowledgement") {
  CHECK(needs_ack(MinibatchChunk{}));
  CHECK(needs_ack(EpochResult{}));
  CHECK(needs_ack(SampleChunk{}));
  CHECK(needs_ack(RunFinished{}));
  CHECK_FALSE(needs_ack(Heartbeat{}));
  CHECK_FALSE(needs_ack(Register{}));
}

TEST_CASE("NaN and infinity never reach the wire: optional numbers become null, required ones are refused by name") {
  EpochResult e = epoch_result(9, 1, 12.5, 0.25, 11.0, 938);
  e.loss = std::numeric_limits<double>::quiet_NaN();  // a diverged model
  e.energy_j = std::numeric_limits<double>::infinity();
  const std::string frame = encode(Envelope{7, e});
  CHECK(frame.find("NaN") == std::string::npos);
  CHECK(frame.find("Infinity") == std::string::npos);
  auto back = decode(frame);
  REQUIRE(back.is_ok());
  const auto& got = std::get<EpochResult>(back->body);
  CHECK_FALSE(got.loss.has_value());
  CHECK_FALSE(got.energy_j.has_value());
  CHECK(got.e2e_s == 12.5);
  SampleChunk c{9, std::nullopt, {Sample{0.1, std::numeric_limits<double>::quiet_NaN(), {}, std::nullopt, 1, 0, std::nullopt}}};
  auto bad = decode(encode(Envelope{8, c}));
  REQUIRE_FALSE(bad.is_ok());
  CHECK(bad.status().message() == "message 'samples' field 'samples[0]', field 'cpu_util_pct': expected a number, got null");
}

namespace {
// Why decode() refuses `body` once encoded ("" when it accepts it).
std::string refusal(const Body& body) {
  auto r = decode(encode(Envelope{1, body}));
  if (r.is_ok()) return "";
  CHECK(r.status().code() == Code::kProtocolError);
  return r.status().message();
}
EpochResult epoch_with(double e2e_s) { return epoch_result(9, 0, e2e_s, 0.25, 1.0, 10); }
Sample sample_at(double t_s) { return Sample{t_s, 50.0, {}, std::nullopt, 1, 0, std::nullopt}; }
}  // namespace

TEST_CASE("times outside physical bounds are refused by name; values at the bounds are accepted") {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const double inf = std::numeric_limits<double>::infinity();
  // Per-minibatch times: [0, 1 day], the element named.
  CHECK(refusal(MinibatchChunk{9, 0, 0, {0.1, -1}, {1, 1}, {}}) ==
        "message 'minibatches' field 'stall_s': element 1 (-1) is out of bounds: must be between 0 and 86400");
  CHECK(refusal(MinibatchChunk{9, 0, 0, {0.1}, {1e308}, {}}) ==
        "message 'minibatches' field 'compute_s': element 0 (1e+308) is out of bounds: must be between 0 and 86400");
  CHECK(refusal(MinibatchChunk{9, 0, 0, {0.1}, {1}, {-0.5}}) ==
        "message 'minibatches' field 'copy_s': element 0 (-0.5) is out of bounds: must be between 0 and 86400");
  CHECK(refusal(MinibatchChunk{9, 0, 0, {nan}, {1}, {}}) ==
        "message 'minibatches' field 'stall_s': expected an array of numbers, found null");
  CHECK(refusal(MinibatchChunk{9, 0, 0, {inf}, {1}, {}}) ==
        "message 'minibatches' field 'stall_s': expected an array of numbers, found null");
  CHECK(refusal(MinibatchChunk{9, 0, 0, {0, kMaxMinibatchSeconds}, {kMaxMinibatchSeconds, 0}, {0, 0}}) == "");

  // Epoch durations: [0, 30 days]; its window on the run's timeline: [0, kMaxRunSeconds].
  CHECK(refusal(epoch_with(-1)) == "message 'epoch_result' field 'e2e_s': -1 is out of bounds: must be between 0 and 2592000");
  CHECK(refusal(epoch_with(1e308)) ==
        "message 'epoch_result' field 'e2e_s': 1e+308 is out of bounds: must be between 0 and 2592000");
  CHECK(refusal(epoch_with(nan)) == "message 'epoch_result' field 'e2e_s': expected a number, got null");
  CHECK(refusal(epoch_with(inf)) == "message 'epoch_result' field 'e2e_s': expected a number, got null");
  CHECK(refusal(epoch_with(kMaxEpochSeconds)) == "");
  // Each case: a change to a valid epoch, and why it is refused ("" = accepted).
  const std::pair<std::function<void(EpochResult&)>, std::string> epoch_cases[] = {
      {[](EpochResult& e) { e.stall_s = -0.1; }, "'stall_s': -0.1 is out of bounds: must be between 0 and 2592000"},
      {[](EpochResult& e) { e.compute_s = 2 * kMaxEpochSeconds; },
       "'compute_s': 5184000 is out of bounds: must be between 0 and 2592000"},
      {[](EpochResult& e) { e.copy_s = -1; }, "'copy_s': -1 is out of bounds: must be between 0 and 2592000"},
      {[](EpochResult& e) { e.t_start_s = -3, e.t_end_s = -2; },
       "'t_start_s': -3 is out of bounds: must be between 0 and 31622400"},
      {[](EpochResult& e) { e.t_start_s = 0, e.t_end_s = 1e308; },
       "'t_end_s': 1e+308 is out of bounds: must be between 0 and 31622400"},
      {[](EpochResult& e) { e.t_start_s = 0, e.t_end_s = kMaxRunSeconds; }, ""},
      // Energy and power: [0, 10 kW (for 30 days)], so that power x time stays finite; IO rates: >= 0.
      {[](EpochResult& e) { e.energy_j = -5; }, "'energy_j': -5 is out of bounds: must be between 0 and 2.592e+10"},
      {[](EpochResult& e) { e.energy_j = 1e308; },
       "'energy_j': 1e+308 is out of bounds: must be between 0 and 2.592e+10"},
      {[](EpochResult& e) { e.mean_power_w = -0.5; }, "'mean_power_w': -0.5 is out of bounds: must be between 0 and 10000"},
      {[](EpochResult& e) { e.mean_power_w = 1e308; },
       "'mean_power_w': 1e+308 is out of bounds: must be between 0 and 10000"},
      {[](EpochResult& e) { e.energy_j = kMaxEpochEnergyJoules, e.mean_power_w = kMaxPowerWatts; }, ""},
      {[](EpochResult& e) { e.read_mb_s = -1; }, "'read_mb_s': -1 is out of bounds: must be >= 0"},
      {[](EpochResult& e) { e.read_iops = -1; }, "'read_iops': -1 is out of bounds: must be >= 0"},
      {[](EpochResult& e) { e.energy_j = e.mean_power_w = e.read_mb_s = e.read_iops = 0.0; }, ""},
  };
  for (const auto& [change, why] : epoch_cases) {
    auto e = epoch_with(1);
    change(e);
    CHECK(refusal(e) == (why.empty() ? why : "message 'epoch_result' field " + why));
  }

  // Samples: t_s on the run's timeline, power in [0, 10 kW], the sample named; the chunk's wall clock in [0, 1e10].
  CHECK(refusal(SampleChunk{9, std::nullopt, {sample_at(0), sample_at(-1)}}) ==
        "message 'samples' field 'samples[1]', field 't_s': -1 is out of bounds: must be between 0 and 31622400");
  CHECK(refusal(SampleChunk{9, std::nullopt, {sample_at(1e308)}}) ==
        "message 'samples' field 'samples[0]', field 't_s': 1e+308 is out of bounds: must be between 0 and 31622400");
  auto negative_power = sample_at(1);
  negative_power.power_w = -2;
  CHECK(refusal(SampleChunk{9, std::nullopt, {negative_power}}) ==
        "message 'samples' field 'samples[0]', field 'power_w': -2 is out of bounds: must be between 0 and 10000");
  negative_power.power_w = 1e308;   // times an epoch, an energy past DBL_MAX
  CHECK(refusal(SampleChunk{9, std::nullopt, {negative_power}}) ==
        "message 'samples' field 'samples[0]', field 'power_w': 1e+308 is out of bounds: must be between 0 and 10000");
  negative_power.power_w = kMaxPowerWatts;
  CHECK(refusal(SampleChunk{9, std::nullopt, {negative_power}}) == "");
  auto too_hot = sample_at(1);
  too_hot.temp_max_c = 1000;
  CHECK(refusal(SampleChunk{9, std::nullopt, {too_hot}}) ==
        "message 'samples' field 'samples[0]', field 'temp_max_c': 1000 is out of bounds: must be between -60 and 200");
  CHECK(refusal(SampleChunk{9, 1e300, {sample_at(1)}}) ==
        "message 'samples' field 't0_unix_s': 1e+300 is out of bounds: must be between 0 and 1e+10");
  CHECK(refusal(SampleChunk{9, kMaxUnixSeconds, {sample_at(0), sample_at(kMaxRunSeconds)}}) == "");

  // A run's wall time: [0, kMaxRunSeconds]; its start on the agent's wall clock: [0, 1e10].
  CHECK(refusal(RunFinished{9, "done", "", -1}) ==
        "message 'run_finished' field 'wall_s': -1 is out of bounds: must be between 0 and 31622400");
  CHECK(refusal(RunFinished{9, "done", "", 1e308}) ==
        "message 'run_finished' field 'wall_s': 1e+308 is out of bounds: must be between 0 and 31622400");
  CHECK(refusal(RunFinished{9, "done", "", kMaxRunSeconds}) == "");
  RunStarted started;
  started.run_id = 9;
  started.t0_unix_s = -5;
  CHECK(refusal(started) == "message 'run_started' field 't0_unix_s': -5 is out of bounds: must be between 0 and 1e+10");
  started.t0_unix_s = kMaxUnixSeconds;
  CHECK(refusal(started) == "");

  // Clock probes: Unix seconds in [0, 1e10] (the offset they imply is bounded by the controller).
  CHECK(refusal(TimeSyncReply{1763770000.25, 1e300, 1e300, {}, {}, {}}) ==
        "message 'time_sync_reply' field 't1': 1e+300 is out of bounds: must be between 0 and 1e+10");
  CHECK(refusal(TimeSyncReply{1763770000.25, 0, -1, {}, {}, {}}) ==
        "message 'time_sync_reply' field 't2': -1 is out of bounds: must be between 0 and 1e+10");
  CHECK(refusal(TimeSyncReply{1763770000.25, 0, kMaxUnixSeconds, {}, {}, {}}) == "");
  CHECK(refusal(TimeSync{-1}) == "message 'time_sync' field 't0': -1 is out of bounds: must be between 0 and 1e+10");
}

TEST_CASE("boot clock readings: in [0, 1e10] s, with the boot they count from; a probe's two together") {
  CHECK(refusal(TimeSyncReply{1, 2, 3, "", 10.0, 11.0}) ==
        "message 'time_sync_reply' field 't1_boot': needs boot_id (the boot its clock counts from)");
  CHECK(refusal(TimeSyncReply{1, 2, 3, "abc-1", 10.0, std::nullopt}) ==
        "message 'time_sync_reply' field 't2_boot': t1_boot and t2_boot come together");
  CHECK(refusal(TimeSyncReply{1, 2, 3, "abc-1", 10.0, -1.0}) ==
        "message 'time_sync_reply' field 't2_boot': -1 is out of bounds: must be between 0 and 1e+10");
  CHECK(refusal(TimeSyncReply{1, 2, 3, "ABC\n", 10.0, 11.0}) ==
        "message 'time_sync_reply' field 'boot_id': must be 1..64 characters of [0-9a-f-]");
  CHECK(refusal(TimeSyncReply{1, 2, 3, std::string(65, 'a'), 10.0, 11.0}) ==
        "message 'time_sync_reply' field 'boot_id': must be 1..64 characters of [0-9a-f-]");
  CHECK(refusal(TimeSyncReply{1, 2, 3, "abc-1", 10.0, 11.0}) == "");
  {
    RunStarted booted;
    booted.run_id = 9;
    booted.t0_unix_s = 1;
    booted.t0_boot_s = 5.0;
    CHECK(refusal(booted) == "message 'run_started' field 't0_boot_s': needs boot_id (the boot its clock counts from)");
    booted.boot_id = "abc";
    CHECK(refusal(booted) == "");
    booted.t0_boot_s = 1e300;
    CHECK(refusal(booted) ==
          "message 'run_started' field 't0_boot_s': 1e+300 is out of bounds: must be between 0 and 1e+10");
  }
}

TEST_CASE("run_started: the workload facts round-trip, absent stays absent, and their bounds are checked by name") {
  RunStarted started;
  started.run_id = 9;
  started.t0_unix_s = 1763770000.5;
  round_trip(started);   // an older agent's: no workload
  WorkloadFacts w;
  w.model_sha256 = std::string(64, 'c');
  w.parameters = 61706;
  w.forward_macs = 416520;
  w.dataset_fingerprint = std::string(64, '7');
  w.dataset_files = 4;
  w.dataset_bytes = 30000000;
  started.workload = w;
  round_trip(started);
  // The JSON derives from the described member list: every member under its own name.
  const auto json = to_json(w);
  CHECK(json.size() == 6);
  CHECK(json.at("parameters").as_int64() == 61706);
  CHECK(json.at("dataset_fingerprint").as_string() == std::string(64, '7'));
  started.workload->parameters.reset();   // a built-in model on a simulated board: not measured
  started.workload->forward_macs.reset();
  round_trip(started);
  CHECK(to_json(*started.workload).at("parameters").is_null());

  auto refused = [&](WorkloadFacts bad) {
    RunStarted s = started;
    s.workload = bad;
    return refusal(s);
  };
  WorkloadFacts bad = w;
  bad.parameters = -1;
  CHECK(refused(bad) == "message 'run_started' field 'workload', field 'parameters': must be >= 0, got -1");
  bad = w;
  bad.dataset_fingerprint = "not-a-hash";
  CHECK(refused(bad) == "message 'run_started' field 'workload', field 'dataset_fingerprint': expected \"\" or 64 "
                        "lowercase hex digits (a SHA-256)");
  bad = w;
  bad.model_sha256 = std::string(64, 'C');
  CHECK(refused(bad).find("field 'model_sha256'") != std::string::npos);
  // A field of the wrong type is named too (the decoder derived from the description reads through FieldReader).
  std::string frame = encode(Envelope{1, started});
  frame.replace(frame.find("\"dataset_files\":4"), 17, "\"dataset_files\":\"4\"");
  auto r = decode(frame);
  REQUIRE_FALSE(r.is_ok());
  CHECK(r.status().message() ==
        "message 'run_started' field 'workload', field 'dataset_files': expected an integer, got string");
}

TEST_CASE("numbers cross the wire to the bit: the decoder's doubles are correctly rounded") {
  // Boost.JSON 1.81's parser turned this one (written by its own serializer) into the next double down.
  const double measured = 0.49712764980921675;
  EpochResult e = epoch_result(9, 1, 12.5, 0.25, 11.0, 938);
  e.energy_j = measured;
  auto back = decode(encode(Envelope{7, e}));
  REQUIRE(back.is_ok());
  const auto& got = std::get<EpochResult>(back->body);
  REQUIRE(got.energy_j.has_value());
  CHECK(std::memcmp(&*got.energy_j, &measured, sizeof measured) == 0);

  // 200,000 doubles of every magnitude a measurement takes (1e-6 .. 1e6), each as the encoder writes it.
  std::mt19937_64 rng(28);
  std::uniform_real_distribution<double> exponent(-6, 6), mantissa(1, 10);
  int off = 0;
  for (int i = 0; i < 200000; ++i) {
    const double v = mantissa(rng) * std::pow(10.0, std::floor(exponent(rng)));
    boost::system::error_code ec;
    const boost::json::value parsed = json::parse_exact(boost::json::serialize(boost::json::value(v)), ec);
    off += ec || !parsed.is_double() || parsed.get_double() != v ? 1 : 0;
  }
  CHECK(off == 0);
  // Short figures (up to 15 digits, exponents within 22) keep Boost's own conversion, which is exact there; the
  // rest go through from_chars: both agree with strtod (correctly rounded) on every one.
  std::uniform_int_distribution<int64_t> digits(0, 999999999999999);
  std::uniform_int_distribution<int> power(-30, 30), point(0, 16);
  for (int i = 0; i < 100000; ++i) {
    std::string text = std::to_string(digits(rng)).substr(0, static_cast<size_t>(point(rng) % 15 + 1));
    const int at = point(rng);
    if (at > 0 && at < static_cast<int>(text.size())) text.insert(text.size() - at, ".");
    text += "E" + std::to_string(power(rng));
    boost::system::error_code ec;
    const boost::json::value parsed = json::parse_exact(text, ec);
    const double want = std::strtod(text.c_str(), nullptr), got = parsed.is_double() ? parsed.get_double() : -1;
    off += ec || std::memcmp(&got, &want, sizeof want) != 0 ? 1 : 0;
  }
  CHECK(off == 0);
  // A mantissa longer than a double holds, an exponent near the limits: the nearest double, as strtod gives it.
  for (const char* text : {"5.000000000000001E72", "0.1000000000000000055511151231257827021181583404541015625",
                           "2.2250738585072014e-308", "1.7976931348623157e308", "-0.0", "123456789012345678901234.5"}) {
    boost::system::error_code ec;
    const boost::json::value v = json::parse_exact(text, ec);
    REQUIRE_MESSAGE(!ec, text);
    REQUIRE_MESSAGE(v.is_double(), text);
    const double got = v.get_double(), want = std::strtod(text, nullptr);
    CHECK_MESSAGE(std::memcmp(&got, &want, sizeof want) == 0, text);
  }
}

TEST_CASE("parse_exact: the value boost::json::parse builds, the same errors") {
  const std::string doc = R"({"a":[1,-2,18446744073709551615,2.5,"x\u00e9",true,null,{"b":{}}],"c":-9223372036854775808})";
  boost::system::error_code ec;
  const boost::json::value v = json::parse_exact(doc, ec);
  REQUIRE_FALSE(ec);
  CHECK(v == boost::json::parse(doc));
  CHECK(v.at("a").at(0).is_int64());
  CHECK(v.at("a").at(2).is_uint64());
  CHECK(v.at("a").at(4).as_string() == "x\xc3\xa9");
  for (const char* bad : {"", "{", "[1,]", "{\"a\":1} x", "1 2", "[1e]", "\"unterminated"}) {
    boost::system::error_code e;
    const boost::json::value r = json::parse_exact(bad, e);
    CHECK_MESSAGE(e.failed(), bad);
    CHECK(r.is_null());
  }
  std::string deep(100, '[');   // deeper than the parser's limit, as boost::json::parse refuses it
  deep += std::string(100, ']');
  boost::system::error_code e;
  (void)json::parse_exact(deep, e);
  CHECK(e.failed());
  CHECK_THROWS_AS(json::parse_exact("{"), boost::system::system_error);
}
