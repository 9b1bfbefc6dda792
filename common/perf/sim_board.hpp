// The settable state of one simulated board: its current power mode (starting at the class's reference
// state, its default nvpmodel mode, as a booted board), the named nvpmodel modes of its class, clocks pinned
// and fan, and which datasets are in its page cache. Not thread-safe: the owner serialises calls.
#pragma once

#include <optional>
#include <set>
#include <string>
#include <string_view>

#include "common/board_classes.hpp"
#include "common/perf/calibration.hpp"
#include "common/protocol.hpp"
#include "common/run_config.hpp"
#include "common/status.hpp"

namespace jetsweep::perf {

class SimBoard {
 public:
  static Result<SimBoard> open(std::string_view board_class);

  const std::string& board_class() const { return class_.board_class; }
  const Settings& current() const { return current_; }
  bool modified() const { return current_ != reference_ || pinned_ || fan_max_; }
  // The reference state: the class's default nvpmodel mode, DVFS on, fan under its normal control.
  const Settings& reference() const { return reference_; }
  const NamedMode& reference_mode() const { return reference_mode_; }

  // Resolves the run's power mode against the class's tables without changing anything: a named mode, or
  // explicit settings with the ones not given (0) taken from the base mode (base_mode, else the reference
  // state); no power mode at all is the base mode. Never depends on what ran before. kInvalidArgument names the value, the table and
  // the class (for a named mode: the modes the class defines).
  Result<Settings> resolve(const RunConfig& config) const;
  // resolve() then make it current, with the run's pin_clocks and fan_max.
  Status apply(const RunConfig& config);
  // The state as applied, read back (mode name and id when a named or the reference mode is current).
  proto::BoardState state() const;
  // Back to the reference state.
  void restore() {
    current_ = reference_;
    pinned_ = fan_max_ = false;
    current_name_ = reference_mode_.name;
    current_id_ = reference_mode_.id;
  }

  bool cached(const std::string& dataset) const { return cache_.count(dataset) > 0; }
  void mark_cached(const std::string& dataset) { cache_.insert(dataset); }
  void drop_caches() { cache_.clear(); }

 private:
  SimBoard() = default;
  Result<Settings> resolve_named(const std::string& name, const NamedMode** mode = nullptr) const;

  ClassCalibration class_;
  BoardClassTables tables_;
  NamedMode reference_mode_;
  Settings reference_;
  Settings current_;
  std::string current_name_;
  std::optional<int64_t> current_id_;
  bool pinned_ = false;
  bool fan_max_ = false;
  std::set<std::string> cache_;
};

}  // namespace jetsweep::perf
