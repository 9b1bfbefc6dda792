// Profiling mode (PowerTrain sec.2.5): in one process, walks a list of power modes, trains a few dozen
// minibatches in each, drops the first, waits until power has settled (sliding window) before counting,
// and writes one row per mode in the analysis corpus format (docs/ANALYSIS.md), ready for
// `jetsweep analyze --csv`. Runs on the calling thread.
#pragma once

#include <iosfwd>
#include <optional>
#include <string>
#include <vector>

#include "agent/run_executor.hpp"
#include "common/protocol.hpp"

namespace jetsweep::agent {

struct ProfileOptions {
  int64_t minibatches = 40;     // trained per mode (the first is always dropped)
  int64_t settle_window = 5;    // power samples in the sliding window
  double settle_pct = 3.0;      // settled when the window's (max - min) / mean is below this
};

struct ModeProfile {
  int64_t counted = 0;                      // minibatches counted after settling
  std::optional<double> minibatch_ms;       // mean stall + compute of the counted minibatches
  std::optional<double> power_mw;           // mean power over the counted minibatches (null: no sensor)
  std::optional<double> settled_after_s;    // when the power settled (null: no sensor, or never)
};

// Orders modes so that between consecutive modes cores only go offline (descending core count), then by
// descending CPU, GPU and memory frequency: an order in which no change needs the board to reboot.
std::vector<RunConfig> order_for_profiling(std::vector<RunConfig> modes);

// Reduces one mode's run messages (minibatch chunks and samples, in emission order) to its profile.
// Minibatch end times are placed on the telemetry clock (t = 0 at the run's start).
Result<ModeProfile> summarise_mode(const std::vector<proto::Body>& messages, const ProfileOptions& options);

// Profiles every mode with `executor` and writes the corpus CSV; failed modes are reported and skipped.
// Returns the number of modes that failed.
int profile_modes(RunExecutor& executor, const std::string& device_class, std::vector<RunConfig> modes,
                  const ProfileOptions& options, std::ostream& csv);

}  // namespace jetsweep::agent
