// Executes one run on the agent's backend and emits the results as protocol messages (minibatch
// chunks, epoch summaries with energy, samples, run_finished) to a ResultSink:
//   host   - trains with LibTorch, telemetry from /proc and /sys, power from RAPL when readable; per epoch
//            the read IO of the block device backing the dataset and its page-cache residency;
//   jetson - as host, plus the board put back as found and the run's state applied through
//            device::PowerController before the run (the class's reference state, its default nvpmodel
//            mode, overlaid with the run's mode, pinned clocks and fan), page cache dropped through the
//            device layer, power from the INA3221 rails;
// Every run first emits run_started with the state it executes in, read back from the board.
//   sim    - a simulated board (agent/sim): no training, modelled times and power.
// execute() runs on the caller's (training) thread; restore_board(), board_modified() and describe()
// may be called from the agent's io thread (a mutex serialises board access).
#pragma once

#include <atomic>
#include <memory>
#include <mutex>
#include <string>

#include "agent/datasets/dataset.hpp"
#include "agent/storage/storage_map.hpp"
#include "common/protocol.hpp"

namespace jetsweep::device {
class PowerController;
}
namespace jetsweep::agent::sim {
class SimExecutor;
}

namespace jetsweep::agent {

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
};

class RunExecutor {
 public:
  // The host backend on `root` ("/" on a real machine).
  explicit RunExecutor(std::string root = "/");
  // Any backend. jetson: detects the board, first restores settings a previous agent left recorded in
  // state_dir (device::restore_pending), and fails when the board or its power rails cannot be read.
  static Result<std::unique_ptr<RunExecutor>> open(const ExecutorOptions& options);
  ~RunExecutor();

  // Returns the run_finished message it also emitted.
  proto::RunFinished execute(int64_t run_id, const RunConfig& config, ResultSink& sink, const std::atomic<bool>& cancel);
  // A run's accelerator when it names none: cuda on the jetson backend (a Jetson run on the CPU would be a
  // wrong number that looks right), auto elsewhere.
  std::string default_accelerator() const;
  // What runs with the default accelerator train on ("cuda:0 (NAME)", "cpu", "simulated"), or "none: WHY".
  std::string accelerator_fact() const;
  // Whether power can be measured (else energy is null: "no power sensor").
  bool has_power_sensor() const;
  // Sets backend, device_class and board provenance (kernel, L4T, module) in `facts`.
  void describe(proto::DeviceFacts& facts) const;
  const ExecutorOptions& options() const { return options_; }

  // Whether a run changed the board's power settings since the last restore.
  bool board_modified() const;
  // Puts the board back as it was before the first run changed it (jetson: every recorded file,
  // byte for byte; sim: the class's reference mode). Call only while no run executes.
  Status restore_board();

 private:
  struct Jetson;
  explicit RunExecutor(ExecutorOptions options);
  Result<const Dataset*> dataset_for(int64_t run_id, const RunConfig& config, std::string& path, std::string& medium);
  // Puts the board in the run's state (its class's reference state overlaid with what the run sets) and
  // records the state read back in `started`.
  Status prepare_jetson(int64_t run_id, const RunConfig& config, proto::RunStarted& started);

  ExecutorOptions options_;
  std::unique_ptr<Dataset> cached_;        // last dataset opened, reused by the next run with the same data
  std::string cached_key_;
  mutable std::mutex board_mu_;            // guards jetson_->controller and modified flags
  std::unique_ptr<Jetson> jetson_;
  std::unique_ptr<sim::SimExecutor> sim_;
};

// Writes the messages of a standalone run as JSON lines (`jetsweep-agent run --out`).
class JsonLinesSink final : public ResultSink {
 public:
  explicit JsonLinesSink(std::ostream& out) : out_(out) {}
  void emit(proto::Body body) override;

 private:
  std::ostream& out_;
};

}  // namespace jetsweep::agent
