// Test entry point of the device-layer tests.
#define DOCTEST_CONFIG_IMPLEMENT_WITH_MAIN
#include <doctest/doctest.h>

#include "common/log.hpp"

namespace {
// Device INFO lines (one per apply/restore) are silenced so failures stand out.
const bool kQuietLogs = [] {
  jetsweep::log::set_min_level(jetsweep::log::Level::kWarn);
  return true;
}();
}  // namespace
