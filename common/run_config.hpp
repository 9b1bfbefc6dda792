// RunConfig: everything that defines one training run, shared by campaigns, the wire protocol and
// `jetsweep-agent run --spec`. Plain value type; any thread.
#pragma once

#include <boost/describe.hpp>
#include <boost/json.hpp>
#include <boost/pfr/ops_fields.hpp>
#include <cstdint>
#include <string>
#include <vector>

#include "common/status.hpp"
#include "common/wire_rules.hpp"

namespace jetsweep {
namespace json {
class FieldReader;
}

// Default telemetry rate: the lowest that keeps an epoch's energy within 0.5% on a rail switching every ~0.7 s
// at <= 1% of one core (docs/PERFORMANCE.md, "Telemetry sampling rate"). Defined in run_config.cpp.
extern const double kDefaultSampleHz;

// The power mode a run asks for (RunConfig::power_mode; its JSON: the object "power_mode", each key left out when
// empty): a named nvpmodel mode, or explicit settings, 0 = not given. Plain value type; any thread.
struct PowerModeRequest {
  std::string name;
  int64_t cores = 0;
  int64_t cpu_khz = 0;
  int64_t gpu_hz = 0;
  int64_t emc_hz = 0;

  bool empty() const { return name.empty() && cores == 0 && cpu_khz == 0 && gpu_hz == 0 && emc_hz == 0; }
  bool operator==(const PowerModeRequest& o) const { return boost::pfr::eq_fields(*this, o); }
};
BOOST_DESCRIBE_STRUCT(PowerModeRequest, (), (name, cores, cpu_khz, gpu_hz, emc_hz))
JS_WIRE_RULES(PowerModeRequest, (),
              (&PowerModeRequest::name, &PowerModeRequest::cores, &PowerModeRequest::cpu_khz,
               &PowerModeRequest::gpu_hz, &PowerModeRequest::emc_hz))

// Its JSON is derived from the description below (common/described_json.hpp): a key absent or null keeps the
// default written here; check_ranges is its validate.
struct RunConfig {
  std::string device = "any";        // board class the run needs ("any", "host", "agx-xavier", ...)
  std::string model = "lenet5";      // see known_models(), or "torchscript:<sha256>" (a user's exported model)
  std::string dataset = "fashion-mnist";
  std::string data;                  // dataset root on the agent; empty = the dataset's default path
  int64_t batch_size = 16;
  int64_t workers = 4;               // loader workers; 0 = fetch in the training thread
  int64_t prefetch = 2;              // minibatches in flight per worker
  int64_t epochs = 6;
  int64_t threads = 1;               // LibTorch intra-op threads
  int64_t seed = 1;                  // shuffle and init seed
  int64_t repetition = 0;            // index of the repetition this run is (0-based)
  bool drop_caches = false;          // drop the page cache before the run (needs root on the agent)
  double sample_hz = kDefaultSampleHz;  // telemetry sampling rate
  int64_t max_minibatches = 0;       // 0 = whole epoch; else cap per epoch (smoke tests, profiling)
  // Power mode to set before the run: a named nvpmodel mode, or explicit settings. Settings not given (0) and
  // runs without a power mode take the board class's reference state (its default nvpmodel mode): a run never
  // inherits anything from the run before it.
  PowerModeRequest power_mode;
  // The nvpmodel mode a run without a named mode (explicit settings, a generated sweep, or none) is applied on:
  // its cores and clocks are the base the settings overlay, and its GPU power gating must be in force (a board
  // booted with other masks reboots into it where its agent may; docs/DEPLOY.md). "" = the class's reference
  // state on whatever gating the board booted with (recorded per run). Not with a named power mode.
  std::string base_mode;
  bool pin_clocks = false;           // "DVFS off" as jetson_clocks does
  bool fan_max = false;              // fan at full speed for the run (else under its normal control)
  // Where to train: "auto" (the GPU when LibTorch has one, else the CPU), "cuda" (fail without CUDA) or "cpu";
  // "" = the agent backend's default: cuda on the jetson backend, auto elsewhere. The device actually used is
  // recorded per run (RunStarted::compute_device): never a silent CPU fallback.
  std::string accelerator;
  // What the per-minibatch stall/compute times mean on a GPU (agent/compute_timing.hpp): "paper" (the default,
  // "" too: every minibatch synchronised, as the papers' harness) or "pipelined" (no per-minibatch sync; the
  // copy is its own column). The same on the CPU. Part of the configuration analysis groups by.
  std::string timing;
  int64_t min_memory_mb = 0;         // the board must have at least this much RAM; 0 = the model's own need

  bool has_power_mode() const {
    return !power_mode.name.empty() || power_mode.cores > 0 || power_mode.cpu_khz > 0 || power_mode.gpu_hz > 0 ||
           power_mode.emc_hz > 0;
  }
  // The nvpmodel mode whose cores, clocks and GPU masks the run is built on: its named mode, else its base_mode;
  // "" = the reference state on the gating as booted.
  const std::string& gating_mode() const { return power_mode.name.empty() ? base_mode : power_mode.name; }

  bool operator==(const RunConfig& o) const { return boost::pfr::eq_fields(*this, o); }
};
BOOST_DESCRIBE_STRUCT(RunConfig, (),
                      (device, model, dataset, data, batch_size, workers, prefetch, epochs, threads, seed, repetition,
                       drop_caches, sample_hz, max_minibatches, power_mode, base_mode, pin_clocks, fan_max,
                       accelerator, timing, min_memory_mb))
JS_WIRE_RULES(RunConfig,
              (&RunConfig::model, &RunConfig::dataset, &RunConfig::batch_size, &RunConfig::workers,
               &RunConfig::prefetch, &RunConfig::epochs),
              (&RunConfig::power_mode, &RunConfig::base_mode, &RunConfig::fan_max, &RunConfig::accelerator,
               &RunConfig::timing, &RunConfig::min_memory_mb))

const std::vector<std::string>& known_models();
// A model exported from Python as TorchScript is named by the SHA-256 of its file: "torchscript:<64 lowercase hex>"
// (docs/WORKLOADS.md, "Your own model"). Two files named alike are two workloads; the same bytes are one.
inline constexpr const char* kTorchScriptPrefix = "torchscript:";
bool is_torchscript_model(const std::string& model);
// Whether `text` is a SHA-256 as jetsweep writes them: 64 lowercase hex digits.
bool is_sha256_hex(const std::string& text);
// The file's SHA-256 when `model` is a well-formed TorchScript name, else "".
std::string torchscript_sha256(const std::string& model);
const std::vector<std::string>& known_datasets();
// Default location of a dataset on a Debian machine ("" when there is none).
std::string default_data_path(const std::string& dataset);
// Number of training samples of a dataset, when it is fixed (Fashion-MNIST/MNIST: 60000).
int64_t known_train_samples(const std::string& dataset);

// RAM a board needs to train this run (min_memory_mb; 0 = no requirement), compared with the MemTotal an
// agent reports; `why` (optional) gets the reason.
int64_t required_memory_bytes(const RunConfig& c, std::string* why = nullptr);
// Board classes the run's model does not fit on, from the papers' out-of-memory findings (SIGMETRICS'23
// Table 2: ResNet-18 on the Xavier NX and the Nano, MobileNet v3 on the Nano). RAM alone does not
// decide it (PowerTrain trains ResNet-18 on the 8 GB Orin Nano, the 8 GB NX runs out), so these are
// facts per class, not a size. `why` (optional) gets the source.
std::vector<std::string> classes_without_room(const RunConfig& c, std::string* why = nullptr);

boost::json::object to_json(const RunConfig& c);
// `where` names the place for errors, e.g. "message 'assign_run' field 'config',".
Result<RunConfig> run_config_from_json(const boost::json::object& o, const std::string& where);
// The same as a nested record's codec (common/described_json.hpp): `v` read as the run config named `where`.
Status from_json(const boost::json::value& v, const std::string& where, RunConfig& out);
// check_ranges' first problem, as the decoder's error (the derived codec's validate step).
void validate(json::FieldReader& r, const RunConfig& c);

// Range checks shared by the YAML parser and the protocol decoder; returns the offending key + reason.
struct ConfigProblem {
  std::string key;
  std::string what;
};
std::vector<ConfigProblem> check_ranges(const RunConfig& c);

}  // namespace jetsweep
