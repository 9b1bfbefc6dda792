// Loads an analysis corpus from PostgreSQL through the analysis views (sql/views.sql: mode
// profiles from analysis_mode_profile, per-epoch rows from analysis_epochs), every row with its full
// configuration (ModeRecord/EpochSample::axes) and whether it was simulated. Opens its own connection per
// call; any thread. libpqxx exceptions never escape: they become kDbError / kUnavailable.
#pragma once

#include <string>

#include "analysis/corpus.hpp"
#include "common/status.hpp"

namespace jetsweep::analysis {

struct DbFilter {
  std::string campaign;  // campaign id or name; empty = every campaign
};

Result<Corpus> load_corpus_from_db(const std::string& dsn, const DbFilter& filter);

// The fitted predictor an adaptive campaign stored for one of its plans (sql/026 adaptive_plans.fit; issue 33):
// every candidate mode of the plan with its time and power, measured (profiled) or predicted.
struct StoredAdaptiveFit {
  int64_t plan_id = 0;
  std::string device, workload, state;   // state: profiling | done | failed
  std::vector<ModeKey> modes;
  std::vector<double> time_ms, power_w;
  std::vector<bool> measured;
  size_t failed_modes = 0;               // candidates whose run failed (no values)
};
// The plan of `campaign` (id or name) for `workload` (device optional when the campaign has one plan of it).
// kNotFound naming --campaign when it has no such plan, kInvalidArgument when the plan has no fit yet.
Result<StoredAdaptiveFit> load_adaptive_fit(const std::string& dsn, const std::string& campaign, const WorkloadRef& workload);

}  // namespace jetsweep::analysis
