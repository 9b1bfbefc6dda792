// Duration of runs predicted by the papers' calibrated board model (common/perf/board_model.hpp), for
// `jetsweep validate` and the controller's estimates before anything has been measured. Not thread-safe
// (it caches the model of each class); one per thread.
#pragma once

#include <map>
#include <string>
#include <string_view>

#include "common/perf/board_model.hpp"
#include "common/perf/sim_board.hpp"
#include "common/run_config.hpp"
#include "common/status.hpp"

namespace jetsweep::sim {

class RunTimeModel {
 public:
  // Seconds the run would take on a typical board of `board_class`: epoch 0 (from a cold page cache when
  // the run drops caches) plus the other epochs. kInvalidArgument when the class, the workload on that
  // class or the run's power mode is not modelled (the message says which).
  Result<double> run_seconds(const RunConfig& run, const std::string& board_class);

 private:
  struct ClassModel {
    SimModel model;
    SimBoard board;
  };
  std::map<std::string, Result<ClassModel>> classes_;
};

}  // namespace jetsweep::sim
