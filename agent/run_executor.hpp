// Executes one run on the agent's backend (agent/backend.hpp: host, jetson, sim) and emits the results as
// protocol messages (minibatch chunks, epoch summaries with energy, samples, run_finished) to a ResultSink.
// Training backends (host, jetson): the run's dataset opened (and cached for the next run), the backend's
// state applied and read back, run_started, then LibTorch training with telemetry from /proc and /sys and
// the backend's power sensor; per epoch the read IO of the block device backing the dataset and its
// page-cache residency. The sim backend models each run whole.
// execute() runs on the caller's (training) thread; restore_board(), board_modified() and describe()
// may be called from the agent's io thread (the backend serialises board access).
#pragma once

#include <atomic>
#include <map>
#include <memory>
#include <string>

#include "agent/backend.hpp"
#include "agent/datasets/dataset.hpp"
#include "agent/datasets/fingerprint.hpp"
#include "agent/model_cache.hpp"
#include "agent/models/registry.hpp"
#include "agent/storage/storage_map.hpp"
#include "common/protocol.hpp"

namespace jetsweep::agent {

// Owns the backend and the cached dataset; see the top of this file for which thread calls what.
class RunExecutor {
 public:
  // The host backend on `root` ("/" on a real machine).
  explicit RunExecutor(std::string root = "/");
  // Any backend. jetson: detects the board, first restores settings a previous agent left recorded in
  // state_dir (device::restore_pending), and fails when the board cannot be read (open_backend).
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
  // Where model files missing from the cache come from (the agent's connection); set before runs execute.
  void set_model_source(std::shared_ptr<ModelSource> source) { model_source_ = std::move(source); }

  // The reboot `config` needs before it can run (Backend::reboot_for); the caller's training thread.
  Result<std::optional<proto::RebootPending>> reboot_for(const RunConfig& config);
  // Reboots the board for it (Backend::reboot_into); the caller's training thread.
  Result<bool> reboot_into(const RebootOptions& options, const proto::RebootPending& reboot,
                           const std::atomic<bool>& cancel);
  // Whether a run changed the board's power settings since the last restore.
  bool board_modified() const;
  // Puts the board back as it was before the first run changed it (jetson: every recorded file,
  // byte for byte; sim: the class's reference mode). Call only while no run executes.
  Status restore_board();

 private:
  RunExecutor(ExecutorOptions options, std::unique_ptr<Backend> backend);
  // The verified cached file of a torchscript:<sha256> model ("" for a built-in model), fetched through the model
  // source when it is missing; without a source, kNotFound naming the cache.
  Result<std::string> model_file_for(const RunConfig& config, const std::atomic<bool>& cancel) const;
  Result<const Dataset*> dataset_for(int64_t run_id, const RunConfig& config, std::string& path, std::string& medium);
  // What the run trains, measured before the board is touched: the model's size as built for the data's samples
  // (measured once per model and sample shape) and the fingerprint of the files `data` reads (none recorded, with a
  // warning, when they cannot be read; kCancelled when `cancel` turns true meanwhile).
  Result<proto::WorkloadFacts> workload_facts(const RunConfig& config, const Dataset& data,
                                              const std::string& model_file, const std::atomic<bool>& cancel);
  // Trains the run on a training backend (host, jetson).
  proto::RunFinished train_run(int64_t run_id, const RunConfig& config, ResultSink& sink,
                               const std::atomic<bool>& cancel);

  ExecutorOptions options_;
  std::unique_ptr<Backend> backend_;
  std::shared_ptr<ModelSource> model_source_;
  std::unique_ptr<Dataset> cached_;        // last dataset opened, reused by the next run with the same data
  std::string cached_key_;
  DatasetFingerprinter fingerprinter_;   // content hashes kept in MODEL_DIR/dataset-hashes.tsv
  std::map<std::string, models::ModelFigures> figures_;   // by "model|sample shape"
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
