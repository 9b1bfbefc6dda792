// jetsweep: thin entry point of the CLI (see cli/cli.hpp); `analyze` and `export` are the analysis commands
// (analysis/analyze_cli.hpp), which work from the database or a CSV corpus; `archive`, `import` and `drop` work on
// the database too (analysis/archive.hpp).
#include <unistd.h>

#include <iostream>

#include "analysis/analyze_cli.hpp"
#include "analysis/archive.hpp"
#include "cli/cli.hpp"

int main(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  if (!args.empty() && (args[0] == "analyze" || args[0] == "export")) {
    const std::vector<std::string> rest(args.begin() + 1, args.end());
    return args[0] == "analyze" ? jetsweep::analysis::analyze_main(rest, std::cout, std::cerr)
                                : jetsweep::analysis::export_main(rest, std::cout, std::cerr);
  }
  if (!args.empty() && (args[0] == "archive" || args[0] == "import" || args[0] == "drop")) {
    const std::vector<std::string> rest(args.begin() + 1, args.end());
    if (args[0] == "archive") return jetsweep::analysis::archive_main(rest, std::cout, std::cerr);
    if (args[0] == "import") return jetsweep::analysis::import_main(rest, std::cout, std::cerr);
    return jetsweep::analysis::drop_main(rest, std::cin, std::cout, std::cerr);
  }
  return jetsweep::cli::run_cli(args, std::cout, std::cerr, isatty(STDOUT_FILENO) != 0);
}
