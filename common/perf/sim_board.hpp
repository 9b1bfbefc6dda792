// The settable state of one simulated board: its current power mode (starting at the class's reference
// state, its default nvpmodel mode, as a booted board), the GPU masks it booted with (those of the mode it
// booted in: they change only by reboot_into(), as nvpmodel and a reboot change them on a real board), the
// named nvpmodel modes of its class, clocks pinned and fan, and which datasets are in its page cache.
// Not thread-safe: the owner serialises calls.
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
  // Changed since it booted (or since restore()).
  bool modified() const { return current_ != boot_ || pinned_ || fan_max_; }
  // The reference state: the class's default nvpmodel mode, DVFS on, fan under its normal control.
  const NamedMode& reference_mode() const { return reference_mode_; }

  // Resolves the run's power mode against the class's tables without changing anything: a named mode, or
  // explicit settings with the ones not given (0) taken from the base mode (base_mode, else the reference
  // state); no power mode at all is the base mode. Never depends on the runs before; the TPCs are the named or
  // base mode's, else those the board booted with. kInvalidArgument names the value, the table and the class
  // (for a named mode: the modes the class defines).
  Result<Settings> resolve(const RunConfig& config) const;
  // resolve() then make it current, with the run's pin_clocks and fan_max. kInvalidArgument when the run's
  // named (or base) mode has GPU masks other than the booted ones (reboot_needed()), naming mode and masks.
  Status apply(const RunConfig& config);
  // The reboot the run's named (or base) mode needs: its masks differ from the booted ones. nullopt when none
  // is needed or the mode is unknown (resolve() names it).
  std::optional<proto::RebootPending> reboot_needed(const RunConfig& config) const;
  // Boots the board into nvpmodel mode `id`: its masks are in force from now on, the clocks at its caps.
  Status reboot_into(int64_t id);
  // The nvpmodel modes (by name and by id) whose masks are the booted ones: they apply without a reboot.
  std::vector<std::string> live_modes() const;
  // The state as applied, read back (mode name and id when a named or the reference mode is current).
  proto::BoardState state() const;
  // Back to the state it booted in: the default mode's, or after reboot_into() that mode's.
  void restore() {
    current_ = boot_;
    pinned_ = fan_max_ = false;
    current_name_ = boot_mode_.name;
    current_id_ = boot_mode_.id;
  }

  bool cached(const std::string& dataset) const { return cache_.count(dataset) > 0; }
  void mark_cached(const std::string& dataset) { cache_.insert(dataset); }
  void drop_caches() { cache_.clear(); }

 private:
  SimBoard() = default;
  Result<Settings> resolve_named(const std::string& name, const NamedMode** mode = nullptr) const;
  ModeMasks masks_of(const NamedMode& mode) const;   // none gated where the class's table has no entry
  static bool applies_live(const ModeMasks& want, const ModeMasks& booted);

  ClassCalibration class_;
  BoardClassTables tables_;
  NamedMode reference_mode_;
  ModeMasks booted_;                   // the GPU masks in force
  NamedMode boot_mode_;                // the mode it booted in, and its settings
  Settings boot_;
  Settings reference_;
  Settings current_;
  std::string current_name_;
  std::optional<int64_t> current_id_;
  bool pinned_ = false;
  bool fan_max_ = false;
  std::set<std::string> cache_;
};

}  // namespace jetsweep::perf
