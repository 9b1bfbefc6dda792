// The host backend: trains on this machine as it is. Nothing is applied; a run asking for a power mode or the
// fan is refused; drop_caches writes /proc/sys/vm/drop_caches; power from RAPL when readable. Stateless
// apart from its root: any thread may call it.
#pragma once

#include <string>

#include "agent/backend.hpp"

namespace jetsweep::agent {

class HostBackend final : public Backend {
 public:
  // root: "/" on a real machine, a fake /proc and /sys tree in tests.
  explicit HostBackend(std::string root) : root_(std::move(root)) {}

  bool has_power_sensor() const override;
  void describe(proto::DeviceFacts&) const override {}
  Status prepare(int64_t run_id, const RunConfig& config, proto::RunStarted& started) override;
  std::unique_ptr<PowerSource> power_source(int64_t run_id) override;

 private:
  std::string root_;
};

}  // namespace jetsweep::agent
