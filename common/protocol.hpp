// The agent <-> controller wire protocol, defined once: plain structs, (de)serialised as JSON text
// frames inside a versioned envelope {"type":..., "version":1, "id":N, ...fields}. Pure; any thread.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "common/run_config.hpp"
#include "common/status.hpp"

namespace jetsweep::proto {

inline constexpr int kVersion = 1;
inline constexpr size_t kMaxFrameBytes = 16u << 20;   // larger frames are rejected unread
inline constexpr size_t kMaxMinibatchesPerChunk = 4096;
inline constexpr size_t kMaxSamplesPerChunk = 2048;

// What an agent tells the controller about itself (provenance for every result it produces).
struct DeviceFacts {
  std::string hostname;
  int64_t cpus = 0;
  int64_t mem_bytes = 0;
  std::string backend;       // "host", "jetson", "sim"
  std::string device_class;  // matched against RunConfig::device ("host", "agx-xavier", ...)
  std::string kernel;
  std::string torch_version;
  std::string compiler;
  std::string git_sha;
  std::vector<std::string> storage;   // storage media it offers (--storage NAME=DIR): runs with data "@NAME"
  // The physical (or simulated) board the agent drives, "" when it does not own one (host backend): at
  // most one run at a time per board, however many agents claim it.
  std::string board_id;
  bool operator==(const DeviceFacts&) const = default;
};

// agent -> controller, first message on every connection.
struct Register {
  std::string name;
  DeviceFacts facts;
  std::optional<int64_t> current_run;  // run it is still executing (after a reconnect)
  // Runs with results still unacknowledged in the agent's on-disk journal (replayed after registration);
  // the controller keeps them assigned to this agent instead of requeueing them.
  std::vector<int64_t> journal_runs;
  bool operator==(const Register&) const = default;
};

// controller -> agent, answer to Register.
struct Registered {
  int64_t agent_id = 0;
  int64_t heartbeat_interval_ms = 1000;
  bool operator==(const Registered&) const = default;
};

// Both directions. The agent names its state and current run.
struct Heartbeat {
  std::string state;
  std::optional<int64_t> run_id;
  bool operator==(const Heartbeat&) const = default;
};

// controller -> agent.
struct AssignRun {
  int64_t run_id = 0;
  RunConfig config;
  bool operator==(const AssignRun&) const = default;
};

// agent -> controller: per-minibatch times for minibatches [first_index, first_index + n).
struct MinibatchChunk {
  int64_t run_id = 0;
  int64_t epoch = 0;
  int64_t first_index = 0;
  std::vector<double> stall_s;
  std::vector<double> compute_s;
  bool operator==(const MinibatchChunk&) const = default;
};

// agent -> controller: one epoch's summary (sec.4.5 of the SIGMETRICS paper).
struct EpochResult {
  int64_t run_id = 0;
  int64_t epoch = 0;
  double e2e_s = 0;
  double stall_s = 0;
  double compute_s = 0;
  int64_t minibatches = 0;
  std::optional<double> energy_j;      // null when the board has no power sensor
  std::optional<double> mean_power_w;
  std::optional<double> loss;          // mean training loss of the epoch; null when it is not a number
                                       //   (the model diverged) or nothing was trained
  // Storage and page cache (sec.5.1-5.2 of the SIGMETRICS paper); null where not measured.
  std::optional<double> read_mb_s;         // MB/s read from the block device backing the dataset
  std::optional<double> read_iops;         // read operations per second on that device
  std::optional<double> cache_start_frac;  // fraction of the dataset files resident in the page cache
  std::optional<double> cache_end_frac;    //   at epoch start and at epoch end
  bool operator==(const EpochResult&) const = default;
};

// One telemetry sample; t_s is seconds since the run started.
struct Sample {
  double t_s = 0;
  double cpu_util_pct = 0;                  // all cores
  std::vector<double> core_util_pct;        // per core (cpu0, cpu1, ...), empty on the first sample
  std::optional<double> cpu_freq_mhz;       // mean over online cores, where cpufreq exists
  int64_t mem_used_kb = 0;
  int64_t disk_read_bytes = 0;              // since the previous sample
  std::optional<double> power_w;
  bool operator==(const Sample&) const = default;
};

struct SampleChunk {
  int64_t run_id = 0;
  std::optional<double> t0_unix_s;   // the agent's wall clock (Unix seconds) at t_s = 0 of the run
  std::vector<Sample> samples;
  bool operator==(const SampleChunk&) const = default;
};

// agent -> controller: the run ended.
struct RunFinished {
  int64_t run_id = 0;
  std::string status;   // "done", "failed", or "cancelled" (agent shut down: the run is requeued)
  std::string error;
  double wall_s = 0;
  bool operator==(const RunFinished&) const = default;
};

// controller -> agent: NTP-style clock probe; t0 = controller wall clock (Unix seconds) when sent.
struct TimeSync {
  double t0 = 0;
  bool operator==(const TimeSync&) const = default;
};

// agent -> controller, answer to TimeSync: t1 = agent clock at receipt, t2 = agent clock when replying.
// The controller, receiving at t3, computes offset = ((t1 - t0) + (t2 - t3)) / 2 (agent minus controller)
// and round trip = (t3 - t0) - (t2 - t1), and keeps the estimate with the smallest round trip.
struct TimeSyncReply {
  double t0 = 0;
  double t1 = 0;
  double t2 = 0;
  bool operator==(const TimeSyncReply&) const = default;
};

// controller -> agent: stop run `run_id` now (its campaign or the run itself was cancelled). The agent stops
// at the next minibatch and reports run_finished "cancelled"; what it measured so far is kept.
struct CancelRun {
  int64_t run_id = 0;
  std::string reason;
  bool operator==(const CancelRun&) const = default;
};

// controller -> agent: every message with id <= up_to is committed to the database.
struct Ack {
  uint64_t up_to = 0;
  bool operator==(const Ack&) const = default;
};

// Either direction: the peer's frame was rejected (or an operation failed).
struct Error {
  std::string code;
  std::string message;
  std::optional<uint64_t> ref_id;
  bool operator==(const Error&) const = default;
};

using Body = std::variant<Register, Registered, Heartbeat, AssignRun, MinibatchChunk, EpochResult, SampleChunk,
                          RunFinished, Ack, Error, TimeSync, TimeSyncReply, CancelRun>;

// Wall clock in Unix seconds (for TimeSync and SampleChunk::t0_unix_s).
double unix_now_s();

struct Envelope {
  uint64_t id = 0;   // sender's sequence number; data messages are acked by it
  Body body;
  bool operator==(const Envelope&) const = default;
};

std::string_view type_name(const Body& body);
std::string encode(const Envelope& envelope);
// Rejects oversized, malformed, unknown-type and wrong-version frames with a message naming the
// message type and field.
Result<Envelope> decode(std::string_view frame);

// Messages whose delivery must survive disconnects (kept by the agent until acked).
bool needs_ack(const Body& body);

}  // namespace jetsweep::proto
