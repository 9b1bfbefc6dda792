// Whether runs that should have trained on the same data did (issue 31): each run's agent records the fingerprint
// of the bytes it read (proto::WorkloadFacts::dataset_fingerprint, agent/datasets/fingerprint.hpp), and report,
// compare and analyze variability flag a dataset whose runs recorded different fingerprints. Pure functions; any
// thread.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace jetsweep {

// One run's data, as its agent recorded it.
struct DataSeen {
  std::string dataset;       // the run's dataset name ("fashion-mnist")
  std::string fingerprint;   // 64 hex digits; "" = none recorded (a simulated board, an older agent)
  std::string board;         // who trained it: the agent's name (or "campaign A: NAME" when comparing)
};

// Per dataset, in name order: a line when its runs recorded more than one fingerprint, naming each (its first 12
// hex digits) with the boards and run counts; and a line when some of its runs recorded a fingerprint and others
// none (the same data is then not proven). Empty when every dataset's runs agree, or none recorded any.
std::vector<std::string> dataset_fingerprint_warnings(const std::vector<DataSeen>& runs);

}  // namespace jetsweep
