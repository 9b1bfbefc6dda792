// The agent <-> controller wire protocol, defined once: plain structs, (de)serialised as JSON text
// frames inside a versioned envelope {"type":..., "version":1, "id":N, ...fields}. Pure; any thread.
// Each record is described once (BOOST_DESCRIBE_STRUCT: its members' wire names and order) with its wire rules
// (JS_WIRE_RULES: the members a decoder requires, those the encoder leaves out when empty) and one validate step
// (its bounds, run once it is read): the codecs derive from these (common/described_json.hpp), the run config's
// too (common/run_config.hpp); a member of a type with a codec of its own (base64 bytes) travels by it; a record
// whose base's keys sit among its own says where (JS_WIRE_BASES_AFTER). tests/unit/test_wire_frames.cpp pins every message's frame byte for byte.
#pragma once

#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

// operator== of these plain structs: boost::pfr::eq_fields compares every field, found by reflection (EpochResult,
// with a base: its description), so a field added later is compared too (C++17: GCC 9 has no defaulted ==).
#include <boost/describe/class.hpp>
#include <boost/pfr/ops_fields.hpp>

#include "common/board_tables.hpp"
#include "common/json_fields.hpp"
#include "common/run_config.hpp"
#include "common/status.hpp"
#include "common/wire_rules.hpp"

namespace jetsweep::proto {

inline constexpr int kVersion = 1;
inline constexpr size_t kMaxFrameBytes = 16u << 20;   // larger frames are rejected unread
inline constexpr size_t kMaxMinibatchesPerChunk = 4096;
inline constexpr size_t kMaxSamplesPerChunk = 2048;
// Physical bounds checked by decode() (a value outside is refused, naming the message, field and index):
// durations, power and energy are finite and in [0, bound]; rates are finite and >= 0.
inline constexpr double kMaxMinibatchSeconds = 86400.0;          // one minibatch: 1 day
inline constexpr double kMaxEpochSeconds = 30 * 86400.0;         // one epoch: 30 days
inline constexpr double kMaxRunSeconds = 366 * 86400.0;          // a run's wall time, and t_s on its timeline
// Power (a sample, an epoch's mean) in [0, 10 kW]: no board or host draws that much, and energy = power x
// time then stays finite for any bounded duration; an epoch's energy: that power for the longest epoch.
inline constexpr double kMaxPowerWatts = 1e4;
inline constexpr double kMaxEpochEnergyJoules = kMaxPowerWatts * kMaxEpochSeconds;
// Wall-clock readings (t0_unix_s, clock probes) are Unix seconds in [0, kMaxUnixSeconds] (year 2286). A
// probe's offset (agent minus controller) is kept only within +-kMaxClockOffsetSeconds: generous, since a
// Jetson has no RTC battery and can boot years off before NTP; and only from a probe whose round trip is
// in [0, kMaxClockRttSeconds] (a slower one says little about the offset).
inline constexpr double kMaxUnixSeconds = 1e10;
inline constexpr double kMaxClockOffsetSeconds = 10 * 366 * 86400.0;
inline constexpr double kMaxClockRttSeconds = 60.0;
// Agent names: 1..kMaxAgentNameChars of [A-Za-z0-9._-], starting with a letter or digit (names appear in
// logs, file names and URLs; a newline in one forged log lines).
inline constexpr size_t kMaxAgentNameChars = 64;
// Agent credentials (issued by the controller at enrollment): kCredentialChars lower-case hex digits. An enrolled
// agent also sends its credential in this header of the WebSocket upgrade request, which admits it without the
// enrollment secret (the secret is needed only to enroll).
inline constexpr size_t kCredentialChars = 64;
inline constexpr const char* kCredentialHeader = "X-Jetsweep-Agent-Credential";
// Energy of an epoch is reported only when valid power samples cover at least this share of its window.
inline constexpr double kMinPowerCoverage = 0.9;

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
  // What runs train on: "cuda:0 (NAME)" or "cpu"; with the jetson backend runs default to CUDA.
  std::string accelerator;
  // The readiness checks that failed (jetsweep-agent doctor), "name: detail" each; empty = ready.
  std::vector<std::string> not_ready;
  // The nvpmodel modes (each by name and by id) whose GPU masks are the ones the board booted with: they apply
  // without a reboot. The controller hands this board runs of these modes first, so it reboots as rarely as
  // possible (docs/DEPLOY.md). Empty: not known (no nvpmodel.conf, sim, host): runs are taken in age order.
  std::vector<std::string> live_modes;
  // The agent may reboot the board into a mode with other masks (--allow-reboot): `jetsweep validate --estimate`
  // refuses runs of modes no enrolled board of their class runs as booted or may reboot into.
  bool may_reboot = false;
  // The board's own frequency tables (read from its sysfs; a simulated board's are its class's, the papers' BSP):
  // the controller checks this board's runs against them and generates its power-mode grids from them. Absent:
  // not a board (host), or an agent from before they were sent.
  std::optional<BoardTables> tables;
  bool operator==(const DeviceFacts& o) const { return boost::pfr::eq_fields(*this, o); }
};
BOOST_DESCRIBE_STRUCT(DeviceFacts, (),
                      (hostname, cpus, mem_bytes, backend, device_class, kernel, torch_version, compiler, git_sha,
                       board_id, accelerator, may_reboot, tables, not_ready, storage, live_modes))
JS_WIRE_RULES(DeviceFacts,
              (&DeviceFacts::hostname, &DeviceFacts::cpus, &DeviceFacts::mem_bytes, &DeviceFacts::backend,
               &DeviceFacts::device_class),
              (&DeviceFacts::board_id, &DeviceFacts::accelerator, &DeviceFacts::may_reboot, &DeviceFacts::tables,
               &DeviceFacts::not_ready, &DeviceFacts::storage, &DeviceFacts::live_modes))

// agent -> controller, first message on every connection.
struct Register {
  std::string name;
  DeviceFacts facts;
  std::optional<int64_t> current_run;  // run it is still executing (after a reconnect)
  // Runs with results still unacknowledged in the agent's on-disk journal (replayed after registration);
  // the controller keeps them assigned to this agent instead of requeueing them.
  std::vector<int64_t> journal_runs;
  // The credential the controller issued this agent when it enrolled (kept in its state directory); absent on
  // first contact. A name enrolled with a credential is only accepted with it (docs/SECURITY.md).
  std::optional<std::string> credential;
  bool operator==(const Register& o) const { return boost::pfr::eq_fields(*this, o); }
};
BOOST_DESCRIBE_STRUCT(Register, (), (name, facts, current_run, journal_runs, credential))
JS_WIRE_RULES(Register, (&Register::name, &Register::facts), (&Register::credential))
void validate(json::FieldReader& r, const Register& m);   // the name's form, the credential's form

// controller -> agent, answer to Register.
struct Registered {
  int64_t agent_id = 0;
  int64_t heartbeat_interval_ms = 1000;
  // Issued when this registration enrolled the name (first contact, or after `jetsweep agents revoke`): the
  // agent keeps it and presents it in every later Register. Absent when the agent presented a valid one.
  std::optional<std::string> credential;
  bool operator==(const Registered& o) const { return boost::pfr::eq_fields(*this, o); }
};
BOOST_DESCRIBE_STRUCT(Registered, (), (agent_id, heartbeat_interval_ms, credential))
JS_WIRE_RULES(Registered, (&Registered::agent_id, &Registered::heartbeat_interval_ms), (&Registered::credential))
void validate(json::FieldReader& r, const Registered& m);

// Both directions. The agent names its state and current run.
struct Heartbeat {
  std::string state;
  std::optional<int64_t> run_id;
  // agent -> controller: its outbox, result messages not yet acked (issue 29); absent from the controller.
  std::optional<int64_t> backlog_messages;
  std::optional<int64_t> backlog_bytes;
  bool operator==(const Heartbeat& o) const { return boost::pfr::eq_fields(*this, o); }
};
BOOST_DESCRIBE_STRUCT(Heartbeat, (), (state, run_id, backlog_messages, backlog_bytes))
JS_WIRE_RULES(Heartbeat, (&Heartbeat::state), (&Heartbeat::backlog_messages, &Heartbeat::backlog_bytes))
void validate(json::FieldReader& r, const Heartbeat& m);

// controller -> agent.
struct AssignRun {
  int64_t run_id = 0;
  RunConfig config;
  bool operator==(const AssignRun& o) const { return boost::pfr::eq_fields(*this, o); }
};
BOOST_DESCRIBE_STRUCT(AssignRun, (), (run_id, config))   // the run config by its to_json/from_json (run_config.hpp)
JS_WIRE_RULES(AssignRun, (&AssignRun::run_id, &AssignRun::config), ())

// The board state a run executes in, read back from the board after it was applied (sim: the modelled
// board; host: what the host's sysfs shows, nothing is applied there). 0 / "" = not known on this board.
struct BoardState {
  std::string mode_name;                // nvpmodel mode applied by name (or as the reference state), else ""
  std::optional<int64_t> nvpmodel_id;   // its id
  int64_t cores_online = 0;
  int64_t cpu_khz = 0;                  // CPU frequency cap read back (scaling_max_freq, highest online cluster)
  int64_t gpu_hz = 0;                   // GPU frequency cap read back (devfreq max_freq)
  int64_t emc_hz = 0;                   // EMC rate read back
  bool clocks_pinned = false;           // DVFS off (min = max), as jetson_clocks does
  std::string fan;                      // "max", "auto" (its normal control) or "" (no fan control found)
  // GPU power gating read back from the board (nvpmodel's TPC_PG_MASK / FBP_PG_MASK: a set bit = a unit off;
  // AGX Orin 64GB boots with TPC_PG_MASK 240, 4 of 8 TPCs). Unset = the board shows none / not known.
  std::optional<int64_t> tpc_pg_mask;
  std::optional<int64_t> fbp_pg_mask;
  std::string to_string() const;        // "4c/1420/921/1600 MAXN pinned fan=max tpc_pg=240" (MHz)
  bool operator==(const BoardState& o) const { return boost::pfr::eq_fields(*this, o); }
};
BOOST_DESCRIBE_STRUCT(BoardState, (),
                      (mode_name, nvpmodel_id, cores_online, cpu_khz, gpu_hz, emc_hz, clocks_pinned, fan, tpc_pg_mask,
                       fbp_pg_mask))
void validate(json::FieldReader& r, const BoardState& m);

// What a run trained, as its agent measured it before the first epoch (issue 31): the model (its file's hash, its
// size as built for the dataset) and the data (the fingerprint of the bytes read). Described once: its JSON on the
// wire and in runs.workload derive from the member list below (common/described_json.hpp).
struct WorkloadFacts {
  std::string model_sha256;          // SHA-256 of the TorchScript file trained, verified on the board; "" = built-in
  std::optional<int64_t> parameters;     // the model's parameter count as built for the dataset's samples
  std::optional<int64_t> forward_macs;   // multiply-accumulates of one forward pass of one sample (unset: not
                                         // measured, e.g. a built-in model on a simulated board)
  std::string dataset_fingerprint;   // SHA-256 over the dataset's files (agent/datasets/fingerprint.hpp); "" = no
                                     // data was read (a simulated board)
  int64_t dataset_files = 0;
  int64_t dataset_bytes = 0;
  bool operator==(const WorkloadFacts& o) const { return boost::pfr::eq_fields(*this, o); }
};
BOOST_DESCRIBE_STRUCT(WorkloadFacts, (),
                      (model_sha256, parameters, forward_macs, dataset_fingerprint, dataset_files, dataset_bytes))
boost::json::object to_json(const WorkloadFacts& facts);
// The bounds of a decoded WorkloadFacts (counts >= 0, hashes "" or 64 lowercase hex digits), failing in `reader`.
void check_workload_facts(const WorkloadFacts& facts, json::FieldReader& reader);
void validate(json::FieldReader& r, const WorkloadFacts& m);   // check_workload_facts

// agent -> controller, before the first epoch: the state the run executes in, as applied and read back.
struct RunStarted {
  int64_t run_id = 0;
  bool reference_state = false;         // the run named no power mode: its class's reference state was applied
  std::optional<BoardState> applied;
  std::string storage_medium;           // medium the dataset was read from ("ssd"); "" when the run named none
  std::string storage_device;           // block device backing the dataset ("nvme0n1"); "" when unknown
  bool page_cache_dropped = false;
  std::string compute_device;           // what trains: "cpu", "cuda:0 (NAME)", or "simulated" on a sim board
  double t0_unix_s = 0;                 // the agent's wall clock at t_s = 0 of the run's samples and epochs
  std::optional<WorkloadFacts> workload;   // absent from agents older than the field
  // The same instant on the agent's boot clock (CLOCK_BOOTTIME, which steps of the wall clock do not move) and the
  // boot it counts from (procfs boot_id): the controller places the run with the boot clock's offset when it has one
  // for that boot, so a step between its last clock probe and this start moves nothing. Both absent from agents older
  // than the fields and where the boot is unknown (a fake tree without boot_id).
  std::string boot_id;
  std::optional<double> t0_boot_s;
  bool operator==(const RunStarted& o) const { return boost::pfr::eq_fields(*this, o); }
};
BOOST_DESCRIBE_STRUCT(RunStarted, (),
                      (run_id, reference_state, applied, storage_medium, storage_device, page_cache_dropped,
                       compute_device, t0_unix_s, workload, boot_id, t0_boot_s))
JS_WIRE_RULES(RunStarted, (&RunStarted::run_id, &RunStarted::t0_unix_s),
              (&RunStarted::workload, &RunStarted::boot_id, &RunStarted::t0_boot_s))
void validate(json::FieldReader& r, const RunStarted& m);

// Clocks read back at an epoch boundary (current frequencies, not caps).
struct ClockReading {
  int64_t cores_online = 0;
  std::optional<double> cpu_khz;        // mean over online cores
  std::optional<double> gpu_hz;
  std::optional<double> emc_hz;
  bool operator==(const ClockReading& o) const { return boost::pfr::eq_fields(*this, o); }
};
BOOST_DESCRIBE_STRUCT(ClockReading, (), (cores_online, cpu_khz, gpu_hz, emc_hz))
JS_WIRE_RULES(ClockReading, (&ClockReading::cores_online), ())

// agent -> controller: per-minibatch times for minibatches [first_index, first_index + n).
struct MinibatchChunk {
  int64_t run_id = 0;
  int64_t epoch = 0;
  int64_t first_index = 0;
  std::vector<double> stall_s;
  std::vector<double> compute_s;
  // Host-to-device copy per minibatch (GPU runs; agent/compute_timing.hpp); empty when nothing was copied.
  std::vector<double> copy_s;
  bool operator==(const MinibatchChunk& o) const { return boost::pfr::eq_fields(*this, o); }
};
BOOST_DESCRIBE_STRUCT(MinibatchChunk, (), (run_id, epoch, first_index, stall_s, compute_s, copy_s))
JS_WIRE_RULES(MinibatchChunk,
              (&MinibatchChunk::run_id, &MinibatchChunk::epoch, &MinibatchChunk::first_index, &MinibatchChunk::stall_s,
               &MinibatchChunk::compute_s),
              (&MinibatchChunk::copy_s))
void validate(json::FieldReader& r, const MinibatchChunk& m);

// An epoch's measures that may be missing (null: not measured, or not a number), defined once. The wire codec,
// the report's codec (api::ReportEpoch), the epochs table's columns (same names: sql/) and the in-memory store all
// derive from this description, and kEpochMeasureBounds holds each measure's physical bound (a unit test checks
// that every measure has one). A new measure is a member and its bound here, its column (a migration) and the
// code that measures it.
struct EpochMeasures {
  // Not an aggregate, so a positional brace list of a derived record (EpochResult{9, 1, ...}) fails to compile
  // instead of filling these measures first.
  EpochMeasures() {}
  std::optional<double> energy_j;      // null when the board has no power sensor
  std::optional<double> mean_power_w;
  std::optional<double> loss;          // mean training loss of the epoch; null when it is not a number
                                       //   (the model diverged) or nothing was trained
  // Storage and page cache (sec.5.1-5.2 of the SIGMETRICS paper); null where not measured.
  std::optional<double> read_mb_s;         // MB/s read from the block device backing the dataset
  std::optional<double> read_iops;         // read operations per second on that device
  std::optional<double> cache_start_frac;  // fraction of the dataset files resident in the page cache
  std::optional<double> cache_end_frac;    //   at epoch start and at epoch end
  // The epoch's window on the run's monotonic timeline (seconds since t_s = 0, the samples' clock): e2e_s is
  // t_end_s - t_start_s, and energy integrates over exactly this window.
  std::optional<double> t_start_s;
  std::optional<double> t_end_s;
  // Share of the window covered by valid power samples; energy is null below kMinPowerCoverage.
  std::optional<double> power_coverage;
  // Seconds the run waited before this epoch began for room in the agent's outbox (results waiting for the controller,
  // --journal-max-mb, or for its io thread); 0: no wait. In no e2e_s; on a real board in wall_s; none after the last.
  std::optional<double> paused_before_s;
};
BOOST_DESCRIBE_STRUCT(EpochMeasures, (),
                      (energy_j, mean_power_w, loss, read_mb_s, read_iops, cache_start_frac, cache_end_frac, t_start_s,
                       t_end_s, power_coverage, paused_before_s))

// A measure's physical bounds: a decoded value outside [lo, hi] is refused, naming the field.
struct EpochMeasureBound {
  std::optional<double> EpochMeasures::*measure;
  double lo, hi;
};
inline constexpr double kNoBound = std::numeric_limits<double>::infinity();
inline constexpr EpochMeasureBound kEpochMeasureBounds[] = {
    {&EpochMeasures::energy_j, 0, kMaxEpochEnergyJoules},   {&EpochMeasures::mean_power_w, 0, kMaxPowerWatts},
    {&EpochMeasures::loss, -kNoBound, kNoBound},             // a user's own loss may be negative
    {&EpochMeasures::read_mb_s, 0, kNoBound},               {&EpochMeasures::read_iops, 0, kNoBound},
    {&EpochMeasures::cache_start_frac, 0, 1},               {&EpochMeasures::cache_end_frac, 0, 1},
    {&EpochMeasures::t_start_s, 0, kMaxRunSeconds},         {&EpochMeasures::t_end_s, 0, kMaxRunSeconds},
    {&EpochMeasures::power_coverage, 0, 1},                 {&EpochMeasures::paused_before_s, 0, kMaxRunSeconds}};

// agent -> controller: one epoch's summary (sec.4.5 of the SIGMETRICS paper): its times and the measures above.
struct EpochResult : EpochMeasures {
  int64_t run_id = 0;
  int64_t epoch = 0;
  double e2e_s = 0;
  double stall_s = 0;
  double compute_s = 0;
  int64_t minibatches = 0;
  std::optional<double> copy_s;        // the epoch's host-to-device copies (GPU); null when nothing was copied
  std::optional<ClockReading> clocks_start;   // read back at the epoch's start and end
  std::optional<ClockReading> clocks_end;
  // A clock, the online cores or the thermal state left the applied setting during the epoch.
  bool throttled = false;
  std::string throttle_reason;
  // Every member, the measures included (the description below lists this struct's own members).
  bool operator==(const EpochResult& o) const;
};
BOOST_DESCRIBE_STRUCT(EpochResult, (EpochMeasures),
                      (run_id, epoch, e2e_s, stall_s, compute_s, minibatches, copy_s, clocks_start, clocks_end,
                       throttled, throttle_reason))
JS_WIRE_RULES(EpochResult,
              (&EpochResult::run_id, &EpochResult::epoch, &EpochResult::e2e_s, &EpochResult::stall_s,
               &EpochResult::compute_s, &EpochResult::minibatches),
              (&EpochResult::copy_s, &EpochResult::throttle_reason))
JS_WIRE_BASES_AFTER(EpochResult, &EpochResult::copy_s)   // the measures between the times and the clocks
void validate(json::FieldReader& r, const EpochResult& m);

// One telemetry sample; t_s is seconds since the run started.
struct Sample {
  double t_s = 0;
  double cpu_util_pct = 0;                  // all cores
  std::vector<double> core_util_pct;        // per core (cpu0, cpu1, ...), empty on the first sample
  std::optional<double> cpu_freq_mhz;       // mean over online cores, where cpufreq exists
  int64_t mem_used_kb = 0;
  int64_t disk_read_bytes = 0;              // since the previous sample
  std::optional<double> power_w;
  // The hottest thermal zone (degrees C) at the sample, where the board has readable zones (Jetsons: CPU, GPU,
  // SOC, ...; zones reading -256 C are off); null elsewhere and on simulated boards (no thermal model).
  std::optional<double> temp_max_c;
  bool operator==(const Sample& o) const { return boost::pfr::eq_fields(*this, o); }
};
BOOST_DESCRIBE_STRUCT(Sample, (),
                      (t_s, cpu_util_pct, core_util_pct, cpu_freq_mhz, mem_used_kb, disk_read_bytes, power_w,
                       temp_max_c))
JS_WIRE_RULES(Sample, (&Sample::t_s, &Sample::cpu_util_pct, &Sample::mem_used_kb, &Sample::disk_read_bytes),
              (&Sample::temp_max_c))
void validate(json::FieldReader& r, const Sample& m);

struct SampleChunk {
  int64_t run_id = 0;
  std::optional<double> t0_unix_s;   // the agent's wall clock (Unix seconds) at t_s = 0 of the run
  std::vector<Sample> samples;
  bool operator==(const SampleChunk& o) const { return boost::pfr::eq_fields(*this, o); }
};
BOOST_DESCRIBE_STRUCT(SampleChunk, (), (run_id, t0_unix_s, samples))
JS_WIRE_RULES(SampleChunk, (&SampleChunk::run_id, &SampleChunk::samples), ())
void validate(json::FieldReader& r, const SampleChunk& m);

// agent -> controller: the run ended.
struct RunFinished {
  int64_t run_id = 0;
  std::string status;   // "done", "failed", or "cancelled" (agent shut down: the run is requeued)
  std::string error;
  double wall_s = 0;
  bool operator==(const RunFinished& o) const { return boost::pfr::eq_fields(*this, o); }
};
BOOST_DESCRIBE_STRUCT(RunFinished, (), (run_id, status, error, wall_s))
JS_WIRE_RULES(RunFinished, (&RunFinished::run_id, &RunFinished::status), ())
void validate(json::FieldReader& r, const RunFinished& m);

// agent -> controller: run `run_id` names nvpmodel mode `mode_name` (id nvpmodel_id) whose GPU masks differ
// from those the board booted with, and the agent may reboot its board (--allow-reboot): it sets the mode
// the way NVIDIA does (`nvpmodel -m ID`, then a reboot) once the controller has acked this message. The
// controller keeps the run and the board assigned to this agent for expected_back_s (its lease does not
// expire meanwhile) and records the reboot; the agent comes back, re-registers, checks the masks and starts
// the run. A resend (journal replay) of the same reboot (run_id, requested_unix_s) is recorded once.
struct RebootPending {
  int64_t run_id = 0;
  std::string mode_name;
  int64_t nvpmodel_id = 0;
  std::optional<int64_t> tpc_pg_mask_from;   // as booted (read back) -> as the mode sets them (nvpmodel.conf)
  std::optional<int64_t> tpc_pg_mask_to;
  std::optional<int64_t> fbp_pg_mask_from;
  std::optional<int64_t> fbp_pg_mask_to;
  double expected_back_s = 0;                // how long the controller holds the run and the board
  double requested_unix_s = 0;               // the agent's wall clock when it asked
  bool operator==(const RebootPending& o) const { return boost::pfr::eq_fields(*this, o); }
};
BOOST_DESCRIBE_STRUCT(RebootPending, (),
                      (run_id, mode_name, nvpmodel_id, tpc_pg_mask_from, tpc_pg_mask_to, fbp_pg_mask_from,
                       fbp_pg_mask_to, expected_back_s, requested_unix_s))
JS_WIRE_RULES(RebootPending,
              (&RebootPending::run_id, &RebootPending::mode_name, &RebootPending::nvpmodel_id,
               &RebootPending::expected_back_s, &RebootPending::requested_unix_s),
              ())
void validate(json::FieldReader& r, const RebootPending& m);

// controller -> agent: NTP-style clock probe; t0 = controller wall clock (Unix seconds) when sent.
struct TimeSync {
  double t0 = 0;
  bool operator==(const TimeSync& o) const { return boost::pfr::eq_fields(*this, o); }
};
BOOST_DESCRIBE_STRUCT(TimeSync, (), (t0))
JS_WIRE_RULES(TimeSync, (&TimeSync::t0), ())
void validate(json::FieldReader& r, const TimeSync& m);

// agent -> controller, answer to TimeSync: t1 = agent clock at receipt, t2 = agent clock when replying.
// The controller, receiving at t3, computes offset = ((t1 - t0) + (t2 - t3)) / 2 (agent minus controller)
// and round trip = (t3 - t0) - (t2 - t1), and keeps the estimate with the smallest round trip.
// t1_boot, t2_boot: the same two instants on the agent's boot clock, and boot_id the boot it counts from (as in
// RunStarted): the boot clock's offset, taken by the same formula, places runs of that boot whatever steps the wall
// clock takes. Absent from agents older than the fields and where the boot is unknown.
struct TimeSyncReply {
  double t0 = 0;
  double t1 = 0;
  double t2 = 0;
  std::string boot_id;
  std::optional<double> t1_boot;
  std::optional<double> t2_boot;
  bool operator==(const TimeSyncReply& o) const { return boost::pfr::eq_fields(*this, o); }
};
BOOST_DESCRIBE_STRUCT(TimeSyncReply, (), (t0, t1, t2, boot_id, t1_boot, t2_boot))
JS_WIRE_RULES(TimeSyncReply, (&TimeSyncReply::t0, &TimeSyncReply::t1, &TimeSyncReply::t2),
              (&TimeSyncReply::boot_id, &TimeSyncReply::t1_boot, &TimeSyncReply::t2_boot))
void validate(json::FieldReader& r, const TimeSyncReply& m);

// controller -> agent: stop run `run_id` now (its campaign or the run itself was cancelled). The agent stops
// at the next minibatch and reports run_finished "cancelled"; what it measured so far is kept.
struct CancelRun {
  int64_t run_id = 0;
  std::string reason;
  bool operator==(const CancelRun& o) const { return boost::pfr::eq_fields(*this, o); }
};
BOOST_DESCRIBE_STRUCT(CancelRun, (), (run_id, reason))
JS_WIRE_RULES(CancelRun, (&CancelRun::run_id), ())

// controller -> agent: every message with id <= up_to is committed to the database.
struct Ack {
  uint64_t up_to = 0;
  bool operator==(const Ack& o) const { return boost::pfr::eq_fields(*this, o); }
};
BOOST_DESCRIBE_STRUCT(Ack, (), (up_to))
JS_WIRE_RULES(Ack, (&Ack::up_to), ())

// Either direction: the peer's frame was rejected (or an operation failed).
struct Error {
  std::string code;
  std::string message;
  std::optional<uint64_t> ref_id;
  bool operator==(const Error& o) const { return boost::pfr::eq_fields(*this, o); }
};
BOOST_DESCRIBE_STRUCT(Error, (), (code, message, ref_id))
JS_WIRE_RULES(Error, (&Error::code, &Error::message), ())

// agent -> controller: chunk `index` of the model file `sha256` (a run's torchscript:<sha256> model missing from the
// agent's cache; docs/WORKLOADS.md). Answered by model_chunk; not journaled, not acked.
struct FetchModel {
  std::string sha256;
  int64_t index = 0;
  bool operator==(const FetchModel& o) const { return boost::pfr::eq_fields(*this, o); }
};
BOOST_DESCRIBE_STRUCT(FetchModel, (), (sha256, index))
JS_WIRE_RULES(FetchModel, (&FetchModel::sha256, &FetchModel::index), ())
void validate(json::FieldReader& r, const FetchModel& m);

// controller -> agent: chunk `index` of the `chunks` of model file `sha256` (`bytes` in all): its bytes in `data`
// (base64 on the wire). `error` is set, and data empty, when the controller has no such file or chunk.
inline constexpr int64_t kModelChunkBytes = 1 << 20;   // every chunk but the last has this many bytes
// Bytes that travel as base64 text. The decoder takes whole 4-character groups only, with at most two '=' at the end;
// null reads as no bytes.
struct Base64Bytes {
  std::string bytes;
  Base64Bytes() = default;
  Base64Bytes(std::string b) : bytes(std::move(b)) {}  // implicit: a chunk is built from its bytes
  Base64Bytes(const char* b) : bytes(b) {}
  bool operator==(const Base64Bytes& o) const { return bytes == o.bytes; }
};
boost::json::value to_json(const Base64Bytes& b);
Status from_json(const boost::json::value& v, const std::string& where, Base64Bytes& out);

struct ModelChunk {
  std::string sha256;
  int64_t index = 0;
  int64_t chunks = 0;
  int64_t bytes = 0;
  Base64Bytes data;
  std::string error;
  bool operator==(const ModelChunk& o) const { return boost::pfr::eq_fields(*this, o); }
};
BOOST_DESCRIBE_STRUCT(ModelChunk, (), (sha256, index, chunks, bytes, data, error))
JS_WIRE_RULES(ModelChunk, (&ModelChunk::sha256, &ModelChunk::index, &ModelChunk::chunks, &ModelChunk::bytes,
                           &ModelChunk::data),
              (&ModelChunk::error))
void validate(json::FieldReader& r, const ModelChunk& m);

using Body = std::variant<Register, Registered, Heartbeat, AssignRun, MinibatchChunk, EpochResult, SampleChunk,
                          RunFinished, Ack, Error, TimeSync, TimeSyncReply, CancelRun, RunStarted, RebootPending,
                          FetchModel, ModelChunk>;

// The JSON object a BoardState travels as (also what the controller stores in runs.applied).
boost::json::object to_json(const BoardState& state);

// Wall clock in Unix seconds (for TimeSync and SampleChunk::t0_unix_s).
double unix_now_s();
// The boot clock (CLOCK_BOOTTIME: seconds since boot, suspend included, never stepped) in seconds
// (RunStarted::t0_boot_s, TimeSyncReply::t1_boot and t2_boot).
double boot_now_s();
// A boot clock reading is in [0, kMaxBootSeconds] (about 317 years); a boot_id is 1..kMaxBootIdChars of
// [0-9a-f-] (the kernel's is a 36-character UUID).
inline constexpr double kMaxBootSeconds = 1e10;
inline constexpr size_t kMaxBootIdChars = 64;
// Whether `id` has the form of a boot_id (RunStarted, TimeSyncReply; the agent's read_boot_id).
bool is_boot_id(std::string_view id);

struct Envelope {
  uint64_t id = 0;   // sender's sequence number; data messages are acked by it
  Body body;
  bool operator==(const Envelope& o) const { return boost::pfr::eq_fields(*this, o); }
};

std::string_view type_name(const Body& body);
// Why `name` is not an acceptable agent name (see kMaxAgentNameChars), or nothing when it is.
std::optional<std::string> agent_name_problem(std::string_view name);
// Whether `text` has the form of an issued credential (kCredentialChars lower-case hex digits).
bool is_credential_text(std::string_view text);
std::string encode(const Envelope& envelope);
// Rejects oversized, malformed, unknown-type and wrong-version frames with a message naming the
// message type and field.
Result<Envelope> decode(std::string_view frame);
// decode's tree path alone (boost::json tree, then FieldReader), which decode takes for every frame its direct reader
// (common/json_direct.hpp) refuses: tests and bench_json_decode hold the two to each other.
Result<Envelope> decode_through_tree(std::string_view frame);
// decode's direct path alone: the message read straight into its record, or nothing where the direct reader refuses
// the frame (what it refuses, decode reads through the tree). A frame it reads, it reads as decode_through_tree does.
std::optional<Envelope> decode_direct(std::string_view frame);

// Messages whose delivery must survive disconnects (kept by the agent until acked).
bool needs_ack(const Body& body);
// The run a result message (one needs_ack is true for) belongs to; nullopt for any other message.
std::optional<int64_t> result_run_id(const Body& body);

}  // namespace jetsweep::proto
