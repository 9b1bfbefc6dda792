// Campaign duration estimates: the papers' calibrated board model for one run (RunTimeModel; `jetsweep
// validate` and the controller before anything has been measured) and the controller's estimate of a whole
// campaign from the epoch times measured so far (estimate_campaign, a pure function of the campaign and
// what the store measured). RunTimeModel is not thread-safe (it caches the model of each class); one per
// thread. estimate_campaign is safe from any thread with its own RunTimeModel.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/api.hpp"
#include "common/campaign.hpp"
#include "common/perf/board_model.hpp"
#include "common/perf/sim_board.hpp"
#include "common/run_config.hpp"
#include "common/status.hpp"

namespace jetsweep::perf {

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

// Epochs measured for one (board class, model, dataset, batch size, power mode) group.
struct MeasuredEpochs {
  std::string board_class;
  std::string model;
  std::string dataset;
  std::string batch_size;   // as text ("32")
  std::string power_mode;   // power_mode_key() of the runs' config
  double sum_e2e_s = 0;
  int64_t epochs = 0;
};

// An enrolled board's GPU gating and frequency tables as its agent registered them (proto::DeviceFacts).
struct BoardGatingFacts {
  std::string name;                     // the agent's
  std::string device_class;
  std::vector<std::string> live_modes;  // modes (names and ids) that apply as booted; empty = not known
  bool may_reboot = false;
  std::optional<BoardTables> tables;    // absent: the agent reported none
};
// The enrolled boards' reported tables, which the controller expands and checks campaigns against.
FleetTables fleet_tables(const std::vector<BoardGatingFacts>& boards);

// What the store knows that an estimate needs.
struct EstimateInputs {
  std::vector<MeasuredEpochs> measured;
  std::map<std::string, std::string> class_of_agent;   // every agent's name -> its board class
  std::map<std::string, int64_t> enrolled_boards;      // boards per class (connected or seen in 24 h)
  std::vector<BoardGatingFacts> gating;                // per enrolled board
};

// "NAME/CORES/CPU_KHZ/GPU_HZ/EMC_HZ" of the run's power mode, unset parts empty ("MAXN////", "/4/1420800//").
std::string power_mode_key(const RunConfig& run);

// Each run's epoch time is the mean e2e time of the epochs measured for the most specific match: same board
// class, model, dataset, batch size and power mode; else without the power mode; else without the batch
// size; else the model and dataset on any class; else the papers' calibrated board model where it covers the
// run. A class's runs are spread over its enrolled boards; a CLASS/* run runs on each of them at once; runs
// on a named board stay on it. Classes run side by side, so the campaign takes as long as the busiest.
// Fills `gating_refused` too (gating_refusals).
api::CampaignEstimate estimate_campaign(const Campaign& campaign, const EstimateInputs& inputs, RunTimeModel& model);

// Per (class, mode): the runs whose named (or base) nvpmodel mode no enrolled board of their class can run: every
// such board registered the modes that apply as booted, this is not one of them, and none may reboot. Each names
// the mode, its masks (NVIDIA's, from the class's table), the boards' booted modes and the way out.
std::vector<std::string> gating_refusals(const Campaign& campaign, const EstimateInputs& inputs);

}  // namespace jetsweep::perf
