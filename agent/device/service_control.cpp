#include "agent/device/service_control.hpp"

#include <string>

#include "agent/device/fs_util.hpp"
#include "common/log.hpp"

namespace jetsweep::device {

namespace {

constexpr size_t kMaxMessageOutput = 600;

// The child's stderr (else stdout) as one line for a message: lines trimmed and joined with "; ", at most
// kMaxMessageOutput characters.
std::string output_for_message(const ProcessResult& r) {
  auto one_line = [](const std::string& text) {
    std::string out;
    size_t pos = 0;
    while (pos <= text.size()) {
      size_t end = text.find('\n', pos);
      if (end == std::string::npos) end = text.size();
      const std::string line = trim(std::string_view(text).substr(pos, end - pos));
      if (!line.empty()) out += (out.empty() ? "" : "; ") + line;
      pos = end + 1;
    }
    return out;
  };
  std::string out = one_line(r.err);
  if (out.empty()) out = one_line(r.out);
  if (out.empty()) return "no output";
  if (out.size() > kMaxMessageOutput) out = out.substr(0, kMaxMessageOutput) + "...";
  return out;
}

Status exited_badly(const std::vector<std::string>& argv, const ProcessResult& r) {
  const std::string how = r.signaled ? "was killed by signal " + std::to_string(r.exit_code - 128)
                                     : "exited with status " + std::to_string(r.exit_code);
  return io_error("'" + command_line(argv) + "' " + how + ": " + output_for_message(r));
}

}  // namespace

SystemctlServiceControl::SystemctlServiceControl(std::string systemctl, double timeout_s)
    : systemctl_(std::move(systemctl)), timeout_s_(timeout_s) {}

Result<bool> SystemctlServiceControl::is_active(const std::string& unit) {
  const std::vector<std::string> argv{systemctl_, "is-active", unit};
  JS_ASSIGN_OR_RETURN(ProcessResult r, run_process(argv, timeout_s_));
  if (r.exit_code == 0 && !r.signaled) return true;
  // systemctl(1): 3 = unit not active, 4 = no such unit.
  if (!r.signaled && (r.exit_code == 3 || r.exit_code == 4)) return false;
  return exited_badly(argv, r);
}

Status SystemctlServiceControl::stop(const std::string& unit) { return run_ok("stop", unit); }

Status SystemctlServiceControl::start(const std::string& unit) { return run_ok("start", unit); }

Status SystemctlServiceControl::run_ok(const std::string& verb, const std::string& unit) {
  const std::vector<std::string> argv{systemctl_, verb, unit};
  JS_ASSIGN_OR_RETURN(ProcessResult r, run_process(argv, timeout_s_));
  if (r.exit_code != 0 || r.signaled) return exited_badly(argv, r);
  JS_LOG_INFO << "device: " << command_line(argv);
  return Status::ok();
}

}  // namespace jetsweep::device
