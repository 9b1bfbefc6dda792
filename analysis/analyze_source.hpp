// What `jetsweep analyze` and `jetsweep export` share: the data-source flags, loading the corpus they name,
// workload names given on the command line, exit codes, and the "wrote N rows" line. Internal to analysis/;
// pure functions apart from reading the source; one call per thread.
#pragma once

#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "analysis/cli_flags.hpp"
#include "analysis/corpus.hpp"
#include "common/status.hpp"

namespace jetsweep::analysis {

// --csv, --db, --campaign, --seed, --device, --where, --pool-over and --json.
const std::vector<FlagDecl>& source_flags();
// Loads the corpus (--csv or --db [--campaign]), then applies --where (select configurations) and --pool-over
// (pool axes explicitly).
Result<Corpus> load_source(const Flags& a);
// A workload reference from a flag, with --device applied when the name carries no board. A database workload
// "model/dataset" may be named by its model alone when that is unambiguous.
WorkloadRef workload_flag(const Flags& a, const Corpus& c, const std::string& text);
// 0 ok, 2 bad input (invalid argument, not found), 1 otherwise.
int exit_code(const Status& s);
// After writing --out: {"file":..,"rows":..[,"per_epoch":..]} with --json, else "wrote N rows to FILE".
void print_written(std::ostream& out, const std::string& file, size_t rows, std::optional<bool> per_epoch, bool json);

}  // namespace jetsweep::analysis
