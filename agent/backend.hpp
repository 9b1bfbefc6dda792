// The part of run execution that differs between the agent's backends, chosen once when RunExecutor::open
// opens them (open_backend):
//   host   - agent/host_backend: training on this machine, nothing applied, RAPL power when readable;
//   jetson - agent/jetson_backend: the run's power mode, clocks and fan applied through device::PowerController,
//            page cache dropped through the device layer, power from the board's INA3221 rails;
//   sim    - agent/sim/sim_executor: a simulated board, runs modelled instead of trained.
// RunExecutor keeps the run lifecycle (dataset, sampler, training, result messages) and calls its backend.
// prepare(), power_source() and execute_modelled() run on the training thread; board_modified(),
// restore_board() and describe() may be called from the agent's io thread (backends that own a board
// serialise access to it).
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "agent/reboot.hpp"
#include "agent/storage/storage_map.hpp"
#include "common/protocol.hpp"
#include "common/status.hpp"

namespace jetsweep::device {
struct Board;
}

namespace jetsweep::agent {

class PowerSource;

// Receives result messages in order. Called from the training thread.
class ResultSink {
 public:
  virtual ~ResultSink() = default;
  virtual void emit(proto::Body body) = 0;
};

struct ExecutorOptions {
  std::string backend = "host";        // "host", "jetson", "sim"
  std::string root = "/";              // procfs/sysfs root (fake board trees in tests)
  std::string state_dir = "/var/lib/jetsweep";  // jetson: where original board settings are recorded
  std::string systemctl = "systemctl";  // jetson: stops nvfancontrol for fan_max runs on L4T R35+, starts it on restore
  std::string sim_class;               // sim: board class
  std::string sim_instance;            // sim: instance id (fixes the instance's deviation)
  double time_scale = 1.0;             // sim: wait time_scale x the modelled duration
  storage::StorageMap storage;         // host/jetson: media names -> dataset roots (`data: "@NAME[/REL]"`)
  std::string model_dir;               // the TorchScript model cache (agent/model_cache.hpp); "" = none
};

// One backend's board, power sensor and provenance (see the top of this file for who calls what).
class Backend {
 public:
  virtual ~Backend() = default;

  // A run's accelerator when it names none (see RunExecutor::default_accelerator).
  virtual std::string default_accelerator() const { return "auto"; }
  // What runs with the default accelerator train on, or "none: WHY".
  virtual std::string accelerator_fact() const;
  virtual bool has_power_sensor() const = 0;
  // Sets device_class and board provenance in `facts` (RunExecutor sets backend).
  virtual void describe(proto::DeviceFacts& facts) const = 0;
  virtual bool board_modified() const { return false; }
  virtual Status restore_board() { return Status::ok(); }

  // A backend that models runs instead of training them (sim) executes each whole and returns its
  // run_finished; training backends return nullopt and RunExecutor trains, calling the hooks below.
  // model_file: the verified file of a torchscript:<sha256> model (fetched if need be), for a backend that models it.
  using ModelFileLookup = std::function<Result<std::string>()>;
  virtual std::optional<proto::RunFinished> execute_modelled(int64_t run_id, const RunConfig& config,
                                                             ResultSink& sink, const std::atomic<bool>& cancel,
                                                             const ModelFileLookup& model_file);
  // Puts the board in the run's state and records in `started` the state read back and whether the page
  // cache was dropped. A failure fails the run.
  virtual Status prepare(int64_t run_id, const RunConfig& config, proto::RunStarted& started) = 0;
  // The reboot the run needs before prepare() can apply its named nvpmodel mode (jetson: the mode's GPU masks
  // differ from those the board booted with), as the announcement the agent sends (run id, expected return and
  // request time left for the caller); nullopt when none is needed or a reboot would not help (prepare() then
  // says why). Training thread.
  virtual Result<std::optional<proto::RebootPending>> reboot_for(const RunConfig&) {
    return std::optional<proto::RebootPending>();
  }
  // Reboots the board into the announced mode once the controller has recorded the announcement. Returns
  // false when the board is being taken down (jetson: set_mode_and_reboot, the agent process ends with it),
  // true when it came back within the call (sim: a modelled reboot; the agent then goes on as one that
  // restarted: it reconnects, registers the new live modes and resumes the run). Training thread.
  virtual Result<bool> reboot_into(const RebootOptions& options, const proto::RebootPending& reboot,
                                   const std::atomic<bool>& cancel);
  // The run's power sensor, or nullptr (energy null).
  virtual std::unique_ptr<PowerSource> power_source(int64_t run_id) = 0;
  // The board whose GPU and EMC clocks are read at epoch boundaries, or nullptr (CPU clocks only).
  virtual const device::Board* board() const { return nullptr; }
};

// Opens options.backend: kInvalidArgument for an unknown name; jetson and sim fail as their open() does.
Result<std::unique_ptr<Backend>> open_backend(const ExecutorOptions& options);

}  // namespace jetsweep::agent
