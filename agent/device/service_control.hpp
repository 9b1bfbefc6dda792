// Querying, stopping and starting system services that would undo a setting the agent makes: on L4T R35+
// nvfancontrol.service rewrites the pwm-fan's pwm1 while it runs (JETSON.md), so fan_max stops it as
// jetson_clocks --fan does, and restore starts it again (see PowerController and restore_pending).
#pragma once

#include <string>
#include <vector>

#include "common/process.hpp"
#include "common/status.hpp"

namespace jetsweep::device {

// The systemd unit that owns the fan on L4T R35+.
inline constexpr const char* kFanService = "nvfancontrol";

// Queries and changes system services (systemd units); owns no board state. One thread at a time per
// instance (the agent's control thread, which also applies and restores the board).
class ServiceControl {
 public:
  virtual ~ServiceControl() = default;
  // true when `unit` is active, false when it is not (inactive, failed, or no such unit).
  virtual Result<bool> is_active(const std::string& unit) = 0;
  // Stops / starts `unit` and waits until systemd reports the job done.
  virtual Status stop(const std::string& unit) = 0;
  virtual Status start(const std::string& unit) = 0;
};

// ServiceControl through a systemctl executable (`systemctl is-active|stop|start UNIT`), run without a shell,
// stdin from /dev/null, stdout and stderr captured. Owns only the executable's path and the time limit; each
// call runs its own child process, so any thread may call it.
// Errors name the command line: kUnavailable when it cannot be run or runs past the time limit (it is then
// killed), kIoError when it exits non-zero (with its exit code and stderr); `is-active` exiting 3 or 4
// (not active, no such unit) is not an error.
class SystemctlServiceControl : public ServiceControl {
 public:
  // `systemctl`: a path, or a name looked up in PATH.
  explicit SystemctlServiceControl(std::string systemctl = "systemctl", double timeout_s = 60);

  Result<bool> is_active(const std::string& unit) override;
  Status stop(const std::string& unit) override;
  Status start(const std::string& unit) override;

  const std::string& systemctl() const { return systemctl_; }

 private:
  Status run_ok(const std::string& verb, const std::string& unit);

  std::string systemctl_;
  double timeout_s_;
};

// run_process, ProcessResult and command_line: common/process.hpp.
using jetsweep::command_line;
using jetsweep::ProcessResult;
using jetsweep::run_process;

}  // namespace jetsweep::device
