// jetsweep: thin entry point of the CLI (see cli/cli.hpp); `analyze` and `export` are the analysis commands
// (analysis/analyze_cli.hpp), which work from the database or a CSV corpus.
#include <unistd.h>

#include <iostream>

#include "analysis/analyze_cli.hpp"
#include "cli/cli.hpp"

int main(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  if (!args.empty() && (args[0] == "analyze" || args[0] == "export")) {
    const std::vector<std::string> rest(args.begin() + 1, args.end());
    return args[0] == "analyze" ? jetsweep::analysis::analyze_main(rest, std::cout, std::cerr)
                                : jetsweep::analysis::export_main(rest, std::cout, std::cerr);
  }
  return jetsweep::cli::run_cli(args, std::cout, std::cerr, isatty(STDOUT_FILENO) != 0);
}
