// `jetsweep analyze ...` and `jetsweep export ...`: argument parsing, data loading (CSV or PostgreSQL),
// running an analysis and printing it as text or JSON. Never throws; one call per thread.
#pragma once

#include <ostream>
#include <string>
#include <vector>

namespace jetsweep::analysis {

// args: what follows `jetsweep analyze`, e.g. {"pareto", "--csv", "f.csv", "--workload", "resnet", "--json"}.
// Returns 0 ok, 1 failure (database, gnuplot, internal), 2 bad input (flags, CSV contents, unknown
// workload). Results go to `out`, messages to `err`.
int analyze_main(const std::vector<std::string>& args, std::ostream& out, std::ostream& err);

// args: what follows `jetsweep export`: writes the corpus CSV (one row per mode, or --per-epoch).
int export_main(const std::vector<std::string>& args, std::ostream& out, std::ostream& err);

}  // namespace jetsweep::analysis
