// Adaptive-profiling plans of the campaign language (issue 33): `power_mode: {generate: adaptive, budget: N,
// reference: CSV_OR_CAMPAIGN, ...}` makes one plan per (board class, workload) instead of runs. The controller
// profiles a plan's candidate modes in rounds it chooses (controller/adaptive_planner.hpp) until the budget is
// spent; the plan (this spec) and its rounds live in PostgreSQL (sql/026). Pure values and functions; any thread.
#pragma once

#include <boost/json.hpp>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "common/run_config.hpp"
#include "common/status.hpp"

namespace jetsweep {

// A power mode as explicit settings (RunConfig's units).
struct ModeSettings {
  int64_t cores = 0;
  int64_t cpu_khz = 0;
  int64_t gpu_hz = 0;
  int64_t emc_hz = 0;
  bool operator==(const ModeSettings& o) const {
    return cores == o.cores && cpu_khz == o.cpu_khz && gpu_hz == o.gpu_hz && emc_hz == o.emc_hz;
  }
  bool operator<(const ModeSettings& o) const;
};
ModeSettings mode_settings_of(const RunConfig& c);
RunConfig with_mode(RunConfig base, const ModeSettings& m);

// The smallest budget a plan may ask for (analysis::kAdaptiveMinBudget: the first round must fit the model).
inline constexpr int64_t kAdaptivePlanMinBudget = 6;

struct AdaptivePlanSpec {
  RunConfig base;                        // the plan's runs without their power mode (device = the board class)
  std::vector<ModeSettings> candidates;  // the modes it may profile (the generator's grid, exclusions applied)
  int64_t budget = 15;                   // modes to profile in all
  std::string reference;                 // a CSV corpus on the controller's machine, or a campaign id or name
  std::string reference_workload;        // the reference's workload; "" = its only one on the board class
  std::string strategy = "front";        // front | random (analysis/adaptive.hpp)
  // What the predictor corrects (analysis/adaptive.hpp AdaptiveAnchor): "powertrain", the reference's networks, or
  // "measured", its own values where it measured every candidate (else its networks). A plan stored before this
  // key existed reads "measured", as it was planned.
  std::string anchor = "powertrain";
  std::vector<double> power_budgets_w;   // empty = twelve across the predicted power range
  int64_t seed = 1;
  bool cross_board = false;              // the reference may come from another board class
  std::string where;                     // "FILE:LINE:COL" of the generator, for errors found later
  // The plan's workload label: "MODEL/DATASET" (as analysis names workloads).
  std::string workload() const { return base.model + "/" + base.dataset; }
};

boost::json::object to_json(const AdaptivePlanSpec& s);
// `where` names the place for errors, e.g. "adaptive plan 3".
Result<AdaptivePlanSpec> adaptive_plan_from_json(const boost::json::value& v, const std::string& where);

// One epoch of a profiled run as the stores keep it (epochs table; proto::EpochResult).
struct EpochFigures {
  int64_t epoch = 0;
  double e2e_s = 0;
  int64_t minibatches = 0;
  std::optional<double> minibatch_mean_ms;
  std::optional<double> mean_power_w;
  std::optional<double> energy_j;
};
// What one finished run of a plan measured, as analysis reads it (sql/views.sql analysis_mode_profile): the mean
// minibatch time of epochs 1+ (the recorded mean, else E2E / minibatches) and their mean power (the epoch's mean,
// else energy / E2E). nullopt time when no epoch after the warm-up has one; nullopt power without a sensor.
struct RunFigures {
  std::optional<double> minibatch_ms;
  std::optional<double> power_w;
};
RunFigures run_figures(const std::vector<EpochFigures>& epochs);

// A profiled (or failed) mode of a plan, as the stores hand it to the planner.
struct PlanObservation {
  ModeSettings mode;
  int64_t run_id = 0;
  std::string status;                // done | failed | lost | cancelled
  RunFigures figures;
};

}  // namespace jetsweep
