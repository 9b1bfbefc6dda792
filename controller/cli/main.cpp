// jetsweep: thin entry point of the CLI (see controller/cli/cli.hpp).
#include <unistd.h>

#include <iostream>

#include "controller/cli/cli.hpp"

int main(int argc, char** argv) {
  return jetsweep::cli::run_cli(std::vector<std::string>(argv + 1, argv + argc), std::cout, std::cerr,
                                isatty(STDOUT_FILENO) != 0);
}
