// The on-disk record of original file contents (and of the services the agent stopped) that lets
// the agent put the board back as it found it, even after a crash. Free functions; one thread at a
// time per state directory (the agent's control thread), since they read-modify-write one file.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "common/status.hpp"

namespace jetsweep::device {

namespace fs = std::filesystem;

class ServiceControl;

// How an entry is ordered on restore (see restore_pending).
enum class EntryRole { kCpuOnline, kFreqMin, kFreqMax, kOther };

struct RestoreEntry {
  EntryRole role = EntryRole::kOther;
  fs::path path;          // absolute path (root already joined)
  std::string original;   // exact bytes read before the first change
};

// `root` in the one form stored in state files ("/tmp/x/" and "/tmp/x/." become "/tmp/x").
fs::path normalized_root(const fs::path& root);

// <state_dir>/device-restore.state
fs::path restore_state_path(const fs::path& state_dir);

// Loaded state: the root it was recorded for, its entries in recording order and the services (systemd
// units) the agent stopped, which restore starts again.
struct RestoreState {
  fs::path root;
  std::vector<RestoreEntry> entries;
  std::vector<std::string> stopped_services;
  bool contains(const fs::path& path) const;
};

// kNotFound when there is no state file; kInvalidArgument (naming file:line) when it is corrupt.
Result<RestoreState> load_restore_state(const fs::path& state_dir);

// Reads the current content of each path not yet in the state file, appends it and rewrites
// the state file atomically (temp file, fsync, rename) before returning. A missing path is
// kIoError naming it. Existing entries are kept: the first recorded content is the original.
Status record_originals(const fs::path& state_dir, const fs::path& root,
                        const std::vector<std::pair<EntryRole, fs::path>>& paths);

// Records that the agent is about to stop `unit`, found active, so that restore_pending starts it again
// (also after a crash); rewrites the state file atomically like record_originals. Recording an already
// recorded unit does nothing.
Status record_stopped_service(const fs::path& state_dir, const fs::path& root, const std::string& unit);
// Drops that record again: for a stop that failed and left the unit running (nothing to start then).
Status forget_stopped_service(const fs::path& state_dir, const std::string& unit);

// If a state file exists: writes every original back in a safe order (CPUs that were online
// first; min/max pairs ordered so min <= max always holds; other files in reverse recording
// order; CPUs that were offline last), verifies each by read-back, then starts every recorded
// stopped service (through `services`; a SystemctlServiceControl running "systemctl" when null,
// used only when a service is recorded), and removes the state file when every step succeeded.
// Returns true if a restore ran, false if there was nothing to do.
// On failure the state file is kept and the error lists every path and command that failed (a
// service is started even when a file failed: it is never left stopped).
// `written`, when given, receives every path written back, in order.
Result<bool> restore_pending(const fs::path& state_dir, std::vector<fs::path>* written = nullptr,
                             ServiceControl* services = nullptr);

}  // namespace jetsweep::device
