// The jetson backend: a detected Jetson board put in each run's state through device::PowerController
// (the class's reference state, its default nvpmodel mode, overlaid with the run's mode, pinned clocks and
// fan), put back as found by restore_board(), page cache dropped through the device layer, power from the
// INA3221 rails. prepare() and power_source() run on the training thread; board_modified(),
// restore_board() and describe() may be called from the io thread (mu_ serialises board access).
#pragma once

#include <memory>
#include <mutex>
#include <string>

#include "agent/backend.hpp"
#include "agent/device/board.hpp"

namespace jetsweep::device {
class PowerController;
}

namespace jetsweep::agent {

class JetsonBackend final : public Backend {
 public:
  // Restores the settings a previous agent left recorded in options.state_dir (device::restore_pending),
  // detects the board under options.root; fails when the board cannot be read. Unreadable power rails
  // are a warning (energy null).
  static Result<std::unique_ptr<JetsonBackend>> open(const ExecutorOptions& options);
  ~JetsonBackend() override;

  // cuda: a Jetson run on the CPU would be a wrong number that looks right.
  std::string default_accelerator() const override { return "cuda"; }
  bool has_power_sensor() const override { return power_readable_; }
  void describe(proto::DeviceFacts& facts) const override;
  bool board_modified() const override;
  Status restore_board() override;
  // Facts: live_modes, the nvpmodel modes that apply without a reboot on the masks the board booted with.
  Result<std::optional<proto::RebootPending>> reboot_for(const RunConfig& config) override;
  Status prepare(int64_t run_id, const RunConfig& config, proto::RunStarted& started) override;
  std::unique_ptr<PowerSource> power_source(int64_t run_id) override;
  const device::Board* board() const override { return &board_; }

 private:
  JetsonBackend(const ExecutorOptions& options, device::Board board);

  std::string root_;
  std::string state_dir_;
  device::Board board_;
  mutable std::mutex mu_;                               // guards controller_ and modified_
  std::unique_ptr<device::PowerController> controller_;  // owner of the restore state file
  bool power_readable_ = false;
  bool modified_ = false;
};

}  // namespace jetsweep::agent
