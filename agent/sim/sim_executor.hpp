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

#include "agent/run_executor.hpp"
#include "common/perf/sim_board.hpp"
#include "common/perf/board_model.hpp"

namespace jetsweep::agent::sim {

// The board model lives in common/perf (the controller's estimates use it too).
using jetsweep::sim::EpochModel;
using jetsweep::sim::Settings;
using jetsweep::sim::SimBoard;
using jetsweep::sim::SimModel;
using jetsweep::sim::SplitMix;

class SimExecutor {
 public:
  // time_scale: 0 = do not wait at all; F > 0 = wait F x the modelled duration.
  static Result<std::unique_ptr<SimExecutor>> open(std::string_view board_class, std::string_view instance,
                                                   double time_scale);

  proto::RunFinished execute(int64_t run_id, const RunConfig& config, ResultSink& sink, const std::atomic<bool>& cancel);

  // Storage media this agent offers (--storage NAME=DIR): kInvalidArgument for a medium without a modelled
  // read speed (simulated_medium_mb_s). Call before the first run.
  Status set_media(const std::vector<std::string>& media);

  const SimModel& model() const { return model_; }
  double time_scale() const { return time_scale_; }
  Settings current_mode() const;
  bool modified() const;
  void restore();

 private:
  SimExecutor(SimModel model, SimBoard board, double time_scale)
      : model_(std::move(model)), board_(std::move(board)), time_scale_(time_scale) {}

  SimModel model_;
  mutable std::mutex mu_;
  SimBoard board_;
  double time_scale_;
  std::map<std::string, double> media_mb_s_;
};

}  // namespace jetsweep::agent::sim
