#include "agent/backend.hpp"

#include <vector>

#include "agent/host_backend.hpp"
#include "agent/jetson_backend.hpp"
#include "agent/sim/sim_executor.hpp"
#include "agent/trainer.hpp"

namespace jetsweep::agent {

std::string Backend::accelerator_fact() const {
  auto device = compute_device_for(default_accelerator());
  return device ? device.value() : "none: " + cuda_unavailable_reason();
}

std::optional<proto::RunFinished> Backend::execute_modelled(int64_t, const RunConfig&, ResultSink&,
                                                            const std::atomic<bool>&, const ModelFileLookup&) {
  return std::nullopt;
}

Result<bool> Backend::reboot_into(const RebootOptions& options, const proto::RebootPending& reboot,
                                  const std::atomic<bool>&) {
  JS_RETURN_IF_ERROR(set_mode_and_reboot(options, reboot.nvpmodel_id));
  return false;
}

Result<std::unique_ptr<Backend>> open_backend(const ExecutorOptions& options) {
  if (options.backend == "host") return std::unique_ptr<Backend>(std::make_unique<HostBackend>(options.root));
  if (options.backend == "sim") {
    JS_ASSIGN_OR_RETURN(auto sim, sim::SimExecutor::open(options.sim_class, options.sim_instance, options.time_scale));
    std::vector<std::string> media;
    for (const auto& [name, dir] : options.storage.media()) media.push_back(name);
    JS_RETURN_IF_ERROR(sim->set_media(media));
    return std::unique_ptr<Backend>(std::move(sim));
  }
  if (options.backend == "jetson") {
    JS_ASSIGN_OR_RETURN(auto jetson, JetsonBackend::open(options));
    return std::unique_ptr<Backend>(std::move(jetson));
  }
  return invalid_argument("--backend '" + options.backend + "': expected host, jetson or sim");
}

}  // namespace jetsweep::agent
