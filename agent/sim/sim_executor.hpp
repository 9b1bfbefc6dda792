// Executes a run on a simulated board: applies the run's power mode (or the class's reference state) to the
// SimBoard and reports it (run_started), then, instead of training, emits the per-minibatch times, epoch
// summaries (energy integrated over each epoch's window from the modelled power samples with
// integrate_energy) and telemetry samples that SimModel predicts, as the same
// protocol messages a real run produces. Durations and sample times are modelled seconds; with a
// time scale F > 0 the executor also waits F x the modelled time so a fleet of simulated agents
// behaves like boards that run fast. execute() runs on the training thread; restore()/modified()
// may be called from another thread (a mutex guards the board).
#pragma once

#include <atomic>
#include <map>
#include <vector>
#include <memory>
#include <mutex>
#include <string>

#include "agent/backend.hpp"
#include "agent/models/registry.hpp"
#include "common/perf/sim_board.hpp"
#include "common/perf/board_model.hpp"

namespace jetsweep::agent::sim {

// The board model lives in common/perf (the controller's estimates use it too).
using jetsweep::perf::EpochModel;
using jetsweep::perf::Settings;
using jetsweep::perf::SimBoard;
using jetsweep::perf::SimModel;
using jetsweep::perf::SplitMix;

// Modelled seconds a simulated board takes to reboot, from the reboot command until its agent runs again
// (assumption: an AGX Orin devkit with NVMe boots L4T in about a minute; docs/SIMULATION.md).
inline constexpr double kSimRebootS = 60.0;

// The sim backend: one simulated board (see the top of this file for who calls what).
class SimExecutor final : public Backend {
 public:
  // time_scale: 0 = do not wait at all; F > 0 = wait F x the modelled duration.
  static Result<std::unique_ptr<SimExecutor>> open(std::string_view board_class, std::string_view instance,
                                                   double time_scale);

  // model_file: see Backend::execute_modelled (only called for a torchscript:<sha256> model).
  proto::RunFinished execute(int64_t run_id, const RunConfig& config, ResultSink& sink, const std::atomic<bool>& cancel,
                             const ModelFileLookup& model_file = {});

  // Storage media this agent offers (--storage NAME=DIR): kInvalidArgument for a medium without a modelled
  // read speed (simulated_medium_mb_s). Call before the first run.
  Status set_media(const std::vector<std::string>& media);

  // Backend: runs are modelled whole by execute(); power is always "measured" (modelled).
  std::string accelerator_fact() const override { return "simulated"; }
  bool has_power_sensor() const override { return true; }
  void describe(proto::DeviceFacts& facts) const override;
  bool board_modified() const override { return modified(); }
  Status restore_board() override {
    restore();
    return Status::ok();
  }
  std::optional<proto::RunFinished> execute_modelled(int64_t run_id, const RunConfig& config, ResultSink& sink,
                                                     const std::atomic<bool>& cancel, const ModelFileLookup& model_file) override {
    return execute(run_id, config, sink, cancel, model_file);
  }
  Status prepare(int64_t run_id, const RunConfig& config, proto::RunStarted& started) override;
  // A named (or base) mode with GPU masks other than the booted ones needs a reboot, as on a real board.
  Result<std::optional<proto::RebootPending>> reboot_for(const RunConfig& config) override;
  // A modelled reboot: kSimRebootS modelled seconds (time scale applied), then the board runs the mode with
  // its masks; the page cache is empty. Returns true (back within the call).
  Result<bool> reboot_into(const RebootOptions& options, const proto::RebootPending& reboot,
                           const std::atomic<bool>& cancel) override;
  std::unique_ptr<PowerSource> power_source(int64_t run_id) override;

  const SimModel& model() const { return model_; }
  double time_scale() const { return time_scale_; }
  Settings current_mode() const;
  bool modified() const;
  void restore();

 private:
  SimExecutor(SimModel model, SimBoard board, double time_scale, std::string board_class, std::string instance)
      : model_(std::move(model)), board_(std::move(board)), time_scale_(time_scale),
        board_class_(std::move(board_class)), instance_(std::move(instance)) {}
  // Checks the run against this agent's media, applies its state to the board and fills `started`.
  Status start_run(const RunConfig& config, proto::RunStarted& started, double& medium_mb_s, Settings& mode,
                   bool& cold);

  SimModel model_;
  mutable std::mutex mu_;
  SimBoard board_;
  double time_scale_;
  std::string board_class_;
  std::string instance_;
  std::map<std::string, double> media_mb_s_;
  // TorchScript models as modelled (sim_executor.cpp, scale_torchscript), by "model|dataset": measured once (the
  // model's name is its bytes' hash). Training thread only.
  struct Scale {
    std::string reference;
    double compute_scale = 1;
    std::string note;
    models::ModelFigures figures;   // the TorchScript model's own, as measured
  };
  std::map<std::string, Scale> torchscript_scales_;
};

}  // namespace jetsweep::agent::sim
