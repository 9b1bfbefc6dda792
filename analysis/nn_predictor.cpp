// NnRegressor: input checks here, the network in the LibTorch plugin (nn_backend.hpp), loaded on first use.
#include "analysis/nn_predictor.hpp"

#include <dlfcn.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>

#include "analysis/nn_backend.hpp"

namespace jetsweep::analysis {

namespace {

constexpr const char* kPluginFile = "libjetsweep_nn.so";

// The plugin of the default candidates, loaded once per process (any thread).
Result<const NnBackend*> backend() {
  static const Result<const NnBackend*> loaded = load_nn_backend(nn_plugin_candidates());
  return loaded;
}

Status check_inputs(const std::vector<ModeKey>& x, const std::vector<double>& y, const NnOptions& o) {
  if (x.size() != y.size()) return invalid_argument("NN training: feature and target counts differ");
  if (x.size() < 2) return invalid_argument("--train-modes: the NN needs at least 2 profiled modes (one for validation)");
  for (double v : y) {
    if (!std::isfinite(v)) return invalid_argument("NN training: non-finite target value");
    if (o.log_target && v <= 0) return invalid_argument("NN training: log targets need positive values");
  }
  if (o.epochs < 1) return invalid_argument("--nn-epochs: must be at least 1");
  return Status::ok();
}

}  // namespace

std::vector<std::string> nn_plugin_candidates() {
  if (const char* path = std::getenv("JETSWEEP_NN_PLUGIN"); path && *path) return {path};
  std::error_code ec;
  const auto exe = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (ec) return {kPluginFile};   // the dynamic loader's search path
  const auto dir = exe.parent_path();
  return {(dir / kPluginFile).string(), (dir / ".." / "lib" / "jetsweep" / kPluginFile).string()};
}

Result<const NnBackend*> load_nn_backend(const std::vector<std::string>& candidates) {
  std::string tried;
  for (const auto& path : candidates) {
    void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!handle) {
      tried += "\n  " + path + ": " + dlerror();
      continue;
    }
    // A library that is not a plugin (or of another ABI) stays loaded: dlclose of a C++ library is unsafe.
    auto entry = reinterpret_cast<NnBackendEntry>(dlsym(handle, kNnBackendSymbol));
    if (!entry) return unavailable(path + ": not a jetsweep NN plugin (no " + kNnBackendSymbol + ")");
    const NnBackend* b = entry();
    if (b->abi() != kNnBackendAbi)
      return unavailable(path + ": NN plugin ABI " + std::to_string(b->abi()) + ", this jetsweep needs " +
                         std::to_string(kNnBackendAbi) + " (install the plugin of the same build)");
    return b;   // the handle stays open: the backend lives in it
  }
  return unavailable(std::string("the NN predictor needs the LibTorch plugin ") + kPluginFile +
                     " (built with jetsweep; set JETSWEEP_NN_PLUGIN to its path); tried:" + tried);
}

NnRegressor::NnRegressor() = default;
NnRegressor::NnRegressor(std::unique_ptr<NnModel> model) : impl_(std::move(model)) {}
NnRegressor::~NnRegressor() = default;
NnRegressor::NnRegressor(NnRegressor&&) noexcept = default;
NnRegressor& NnRegressor::operator=(NnRegressor&&) noexcept = default;

Result<NnRegressor> NnRegressor::train(const std::vector<ModeKey>& x, const std::vector<double>& y, const NnOptions& o) {
  JS_RETURN_IF_ERROR(check_inputs(x, y, o));
  JS_ASSIGN_OR_RETURN(const NnBackend* b, backend());
  JS_ASSIGN_OR_RETURN(auto model, b->train(x, y, o));
  return NnRegressor(std::move(model));
}

Result<NnRegressor> NnRegressor::transfer(const std::vector<ModeKey>& x, const std::vector<double>& y,
                                          const NnOptions& o) const {
  if (!impl_) return internal_error("transfer from an untrained NN");
  JS_RETURN_IF_ERROR(check_inputs(x, y, o));
  JS_ASSIGN_OR_RETURN(auto model, impl_->transfer(x, y, o));
  return NnRegressor(std::move(model));
}

std::vector<double> NnRegressor::predict(const std::vector<ModeKey>& x) const {
  if (!impl_) return std::vector<double>(x.size(), 0.0);
  return impl_->predict(x);
}

const NnTrainingReport& NnRegressor::report() const {
  static const NnTrainingReport kEmpty;
  return impl_ ? impl_->report() : kEmpty;
}

Status NnRegressor::save(const std::string& path) const {
  if (!impl_) return internal_error("saving an untrained NN");
  return impl_->save(path);
}

Result<NnRegressor> NnRegressor::load(const std::string& path) {
  JS_ASSIGN_OR_RETURN(const NnBackend* b, backend());
  JS_ASSIGN_OR_RETURN(auto model, b->load(path));
  return NnRegressor(std::move(model));
}

}  // namespace jetsweep::analysis
