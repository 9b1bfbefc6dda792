// The boundary between the torch-free analysis library and the LibTorch plugin (libjetsweep_nn.so, built from
// nn_torch.cpp), which the `jetsweep` CLI loads only when an NN is trained or loaded: linking LibTorch into the
// CLI cost every command, `jetsweep status` included, ~0.6 s of LibTorch's static initialisation. The plugin
// exports one C symbol, kNnBackendSymbol, returning its NnBackend (a static object: never freed). Both sides are
// built from the same tree (Result, Status, ModeKey and NnOptions cross the boundary as C++ objects), which
// kNnBackendAbi guards: bump it when this header or a type it names changes layout.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "analysis/corpus.hpp"
#include "common/status.hpp"

namespace jetsweep::analysis {

struct NnOptions;
struct NnTrainingReport;

inline constexpr int kNnBackendAbi = 3;
inline constexpr const char* kNnBackendSymbol = "jetsweep_nn_backend";

// One trained network with its input and target scalers. One thread at a time.
class NnModel {
 public:
  virtual ~NnModel() = default;
  // PowerTrain transfer: a copy with these hidden layers and input scaler, a fresh output layer, fine-tuned.
  virtual Result<std::unique_ptr<NnModel>> transfer(const std::vector<ModeKey>& x, const std::vector<double>& y,
                                                    const NnOptions& o) const = 0;
  virtual std::vector<double> predict(const std::vector<ModeKey>& x) const = 0;
  virtual Status save(const std::string& path) const = 0;
  virtual const NnTrainingReport& report() const = 0;
};

// Makes networks: trains one from scratch, or loads a saved one. Any thread.
class NnBackend {
 public:
  virtual int abi() const = 0;   // kNnBackendAbi of the build that made the plugin
  virtual Result<std::unique_ptr<NnModel>> train(const std::vector<ModeKey>& x, const std::vector<double>& y,
                                                 const NnOptions& o) const = 0;
  virtual Result<std::unique_ptr<NnModel>> load(const std::string& path) const = 0;

 protected:
  ~NnBackend() = default;   // the plugin owns its backend
};

using NnBackendEntry = NnBackend* (*)();

// Loads the first of `candidates` that dlopen can open and that is a plugin of this ABI (nn_predictor.cpp caches
// the result of the default candidates for the process); kUnavailable naming every path tried and why. Any thread.
Result<const NnBackend*> load_nn_backend(const std::vector<std::string>& candidates);
// The default candidates: $JETSWEEP_NN_PLUGIN when set (only it), else libjetsweep_nn.so next to the executable,
// else in ../lib/jetsweep/ from it.
std::vector<std::string> nn_plugin_candidates();

}  // namespace jetsweep::analysis
