// The settable state of one simulated board: its current power mode (starting at the class's
// reference mode, as the papers' default configuration), the named nvpmodel modes of its class, and
// which datasets are in its page cache. Not thread-safe: the owner serialises calls.
#pragma once

#include <set>
#include <string>
#include <string_view>

#include "common/board_classes.hpp"
#include "common/perf/calibration.hpp"
#include "common/run_config.hpp"
#include "common/status.hpp"

namespace jetsweep::sim {

class SimBoard {
 public:
  static Result<SimBoard> open(std::string_view board_class);

  const std::string& board_class() const { return class_.board_class; }
  const Settings& current() const { return current_; }
  bool modified() const { return current_ != class_.reference; }

  // Resolves the run's power mode (named, or explicit with 0 = leave as is) against the class's
  // tables without changing anything. kInvalidArgument names the value, the table and the class.
  Result<Settings> resolve(const RunConfig& config) const;
  // resolve() then make it current. A run without a power mode leaves the board as it is.
  Status apply(const RunConfig& config);
  // Back to the reference mode.
  void restore() { current_ = class_.reference; }

  bool cached(const std::string& dataset) const { return cache_.count(dataset) > 0; }
  void mark_cached(const std::string& dataset) { cache_.insert(dataset); }
  void drop_caches() { cache_.clear(); }

 private:
  SimBoard() = default;
  Result<Settings> resolve_named(const std::string& name) const;

  ClassCalibration class_;
  BoardClassTables tables_;
  Settings current_;
  std::set<std::string> cache_;
};

}  // namespace jetsweep::sim
