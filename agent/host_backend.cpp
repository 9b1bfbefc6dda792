#include "agent/host_backend.hpp"

#include <unistd.h>

#include <fstream>

#include "agent/device/board_state.hpp"
#include "agent/telemetry.hpp"

namespace jetsweep::agent {

namespace {

Status drop_host_page_cache(const std::string& root) {
  ::sync();
  const std::string path = (root == "/" ? std::string() : root) + "/proc/sys/vm/drop_caches";
  std::ofstream out(path);
  if (!out) return io_error("drop_caches requested but " + path + " is not writable (run the agent as root)");
  out << "3\n";
  out.flush();
  if (!out) return io_error("drop_caches: writing 3 to " + path + " failed");
  return Status::ok();
}

}  // namespace

bool HostBackend::has_power_sensor() const { return RaplPowerSource::open(root_) != nullptr; }

Status HostBackend::prepare(int64_t, const RunConfig& config, proto::RunStarted& started) {
  if (config.has_power_mode() || config.fan_max)
    return invalid_argument(
        "the run asks for a power mode or the fan but this agent's backend is 'host' (they need --backend jetson "
        "or --sim)");
  if (config.drop_caches) {
    JS_RETURN_IF_ERROR(drop_host_page_cache(root_));
    started.page_cache_dropped = true;
  }
  // Nothing is applied on a host: its state as it is, read back, is what the run executes in.
  started.applied = device::read_board_state(root_, nullptr);
  return Status::ok();
}

std::unique_ptr<PowerSource> HostBackend::power_source(int64_t) { return RaplPowerSource::open(root_); }

}  // namespace jetsweep::agent
