// Loads an analysis corpus from PostgreSQL through the analysis views (sql/017_mode_profile_per_run.sql: mode
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

}  // namespace jetsweep::analysis
