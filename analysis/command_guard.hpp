// The exception boundary of the `jetsweep analyze` and `jetsweep export` entry points: an exception that
// escapes a command becomes "TOOL: internal error: WHAT" on `err` and exit code 1, so the entry points never
// throw. Stateless; any thread.
#pragma once

#include <exception>
#include <ostream>
#include <string_view>

namespace jetsweep::analysis {

// Runs command() (returning an exit code) and converts any exception it throws.
template <class Command>
int run_guarded(std::string_view tool, std::ostream& err, Command&& command) {
  try {
    return command();
  } catch (const std::exception& e) {
    err << tool << ": internal error: " << e.what() << "\n";
  } catch (...) {
    err << tool << ": internal error\n";
  }
  return 1;
}

}  // namespace jetsweep::analysis
