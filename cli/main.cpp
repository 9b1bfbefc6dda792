// jetsweep: thin entry point of the CLI (cli/cli.hpp). It composes the client's commands with those the analysis
// library implements: analyze and export (analysis/analyze_cli.hpp), which work from the database or a CSV corpus,
// and archive, import and drop (analysis/archive.hpp), which work on the database.
#include <unistd.h>

#include <iostream>

#include "analysis/analyze_cli.hpp"
#include "analysis/archive.hpp"
#include "cli/cli.hpp"

int main(int argc, char** argv) {
  namespace analysis = jetsweep::analysis;
  const std::vector<jetsweep::cli::DelegatedCommand> delegated = {
      {"analyze",
       "analyze METHOD [flags]: variability | pareto | predict | optimize | epochs | synth, from the database "
       "(--db DSN) or a CSV corpus (--csv FILE); docs/ANALYSIS.md",
       analysis::analyze_main},
      {"export", "export [flags]: the corpus CSV (a row per mode, or --per-epoch) from the database",
       analysis::export_main},
      {"archive", "archive CAMPAIGN --out FILE: save a campaign, its rows and model files, to a file (--db DSN)",
       analysis::archive_main},
      {"import", "import FILE: restore an archived campaign into this database (--db DSN)", analysis::import_main},
      {"drop", "drop CAMPAIGN: delete a campaign and everything it measured, after confirmation (--db DSN)",
       [](const std::vector<std::string>& args, std::ostream& out, std::ostream& err) {
         return analysis::drop_main(args, std::cin, out, err);
       }},
  };
  return jetsweep::cli::run_cli(std::vector<std::string>(argv + 1, argv + argc), std::cout, std::cerr,
                                isatty(STDOUT_FILENO) != 0, delegated);
}
