// Rebooting the agent's board into an nvpmodel mode whose GPU masks differ from those it booted with (issue 28;
// docs/DEPLOY.md "Reboots"), the way NVIDIA does it: `nvpmodel -m ID` with its "DO YOU WANT TO REBOOT NOW?"
// prompt answered YES (nvpmodel records the mode and reboots), then the reboot command in case nvpmodel returned
// without rebooting. At boot nvpmodel.service applies the recorded mode, masks included; the agent's unit starts
// after it. What the agent must find again after the boot - the run, its config and the announced masks - is kept
// in STATE_DIR/reboot_pending.json, written durably before any command runs:
//   {"version": 1, "run_id": N, "config": RunConfig JSON, "announced": the reboot_pending message as sent,
//    "commands_started": whether nvpmodel and the reboot command were started (rewritten just before)}
// Free functions; any thread.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "common/protocol.hpp"
#include "common/run_config.hpp"
#include "common/status.hpp"

namespace jetsweep::agent {

struct RebootOptions {
  bool allowed = false;                                                // --allow-reboot (off by default)
  std::vector<std::string> nvpmodel_command = {"nvpmodel"};            // --nvpmodel-command (split at spaces)
  std::vector<std::string> reboot_command = {"systemctl", "reboot"};   // --reboot-command (split at spaces)
  // --reboot-timeout-s: how long the controller holds the run and the board for the agent to come back, and
  // how long the agent waits, after the commands returned, for the reboot to take it down before it fails the run.
  std::chrono::seconds expected_back{600};
  std::string pending_file;   // STATE_DIR/reboot_pending.json
};

// What survives the reboot.
struct PendingReboot {
  int64_t run_id = 0;
  RunConfig config;
  proto::RebootPending announced;
  // False: the agent stopped before it ran the commands (no reboot happened): the agent that starts again
  // announces the same reboot again and goes on. True: it rebooted (or tried to), so the masks decide.
  bool commands_started = false;
};

// STATE_DIR/reboot_pending.json.
std::string pending_reboot_file(const std::string& state_dir);
Status save_pending_reboot(const std::string& file, const PendingReboot& pending);
// nullopt when there is none; an unreadable or malformed file is an error naming it (the agent then refuses
// to start: a run would otherwise be lost or run on the wrong gating without a word).
Result<std::optional<PendingReboot>> load_pending_reboot(const std::string& file);
Status clear_pending_reboot(const std::string& file);

// "TPC_PG_MASK 240 -> 0, FBP_PG_MASK 2 -> 2" (the masks the mode sets).
std::string describe_mask_change(const proto::RebootPending& r);

// Runs `nvpmodel -m ID` answering its prompt YES, then the reboot command. Returns when both returned (a real
// reboot usually takes the agent down before); kUnavailable naming the command, its exit code and output.
Status set_mode_and_reboot(const RebootOptions& options, int64_t nvpmodel_id);

}  // namespace jetsweep::agent
