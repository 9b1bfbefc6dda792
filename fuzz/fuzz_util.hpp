// Shared by the libFuzzer targets (fuzz/fuzz_*.cpp): a failed property aborts with a message, so libFuzzer
// saves the input as a crash (docs/FUZZING.md). Fuzzer process only.
#pragma once

#include <cstdio>
#include <cstdlib>
#include <string>

#include "common/log.hpp"

namespace jetsweep::fuzz {

// A property every input must have; `what` and `detail` are printed before the abort.
inline void require(bool ok, const char* what, const std::string& detail = "") {
  if (ok) return;
  std::fprintf(stderr, "jetsweep fuzz: property failed: %s%s%s\n", what, detail.empty() ? "" : ": ", detail.c_str());
  std::abort();
}

// Once per process: only errors reach stderr (the controller logs every refused request at warn).
inline void quiet_logs() {
  static const bool done = [] {
    log::set_min_level(log::Level::kError);
    return true;
  }();
  (void)done;
}

}  // namespace jetsweep::fuzz
