// `jetsweep watch [CAMPAIGN]`: polls a campaign's status until it finishes, redrawing a block in place on a
// terminal (ANSI) and appending a line per change otherwise. Blocking, on the calling thread; installs a SIGINT
// handler for its duration (Ctrl-C stops watching, not the campaign).
#pragma once

#include <iosfwd>
#include <string>

#include "cli/client.hpp"

namespace jetsweep::cli {

struct WatchOptions {
  std::string campaign;     // id or name; empty: the newest unfinished campaign (else the newest)
  double interval_s = 2.0;  // between polls
  bool tty = false;         // redraw in place (stdout is a terminal)
};

// Returns the exit code: 0 once the campaign has finished, 130 after Ctrl-C, 1 or 2 when the first poll fails
// (later failures are reported and retried).
int run_watch(ApiClient& client, const WatchOptions& options, std::ostream& out, std::ostream& err);

}  // namespace jetsweep::cli
