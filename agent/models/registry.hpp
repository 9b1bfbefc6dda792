// The models this agent can train: names (with aliases), the configuration that reproduces the papers'
// parameter counts, and measured figures (parameters, forward multiply-accumulates per sample). Torch-free
// header; the functions build models with LibTorch. Pure functions; any thread (measure_model() builds a
// model on the calling thread).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "common/status.hpp"

namespace jetsweep::agent::models {

// What a model consumes: images [C, H, W] with `classes` outputs, or token sequences of `seq_len`
// with `classes` = vocabulary size (next-word prediction).
struct InputSpec {
  enum class Kind { kImage, kTokens } kind = Kind::kImage;
  int64_t channels = 3;
  int64_t height = 224;
  int64_t width = 224;
  int64_t seq_len = 0;
  int64_t classes = 1000;

  static InputSpec image(int64_t c, int64_t h, int64_t w, int64_t classes) { return {Kind::kImage, c, h, w, 0, classes}; }
  static InputSpec tokens(int64_t seq_len, int64_t vocabulary) { return {Kind::kTokens, 0, 0, 0, seq_len, vocabulary}; }
  std::string to_string() const;
};

struct ModelEntry {
  std::string name;                  // canonical name (RunConfig::model)
  std::vector<std::string> aliases;  // other accepted names
  std::string architecture;          // what is built
  InputSpec reference;               // the configuration the papers' parameter count refers to
  std::string reference_note;        // which configuration reproduces the papers' figure
  double paper_parameters = 0;       // papers' Table 2 / PowerTrain Table 3 (0 = not in the papers)
  double paper_forward_macs = 0;     // papers' "FLOPs" column (multiply-accumulates, torchvision convention)
  int64_t min_image_side = 0;        // smallest input side the architecture accepts (images)
};

const std::vector<ModelEntry>& model_catalog();
// Resolves a name or alias; kInvalidArgument naming the known models otherwise.
Result<const ModelEntry*> find_model(const std::string& name);
// Checks that `spec` suits the model (kind, channels, minimum side, classes).
Status check_input(const ModelEntry& model, const InputSpec& spec);

struct ModelFigures {
  int64_t parameters = 0;
  int64_t forward_macs = 0;  // conv + matmul multiply-accumulates of one forward pass of one sample
};
// Builds the model for `spec` and measures it (one forward pass of one sample, observed through
// LibTorch's RecordFunction hooks). Torch errors become Status.
Result<ModelFigures> measure_model(const std::string& name, const InputSpec& spec);
// The same for the TorchScript model `name` (torchscript:<sha256>) in `file`, loaded and checked as for training.
Result<ModelFigures> measure_torchscript(const std::string& name, const std::string& file, const InputSpec& spec);
// Only loads the TorchScript file `file` (no probe: for a dataset whose sample shape comes from its files); the
// errors of load_torchscript_workload (not TorchScript, a newer PyTorch's file). Defined in torchscript.cpp.
Status load_torchscript(const std::string& name, const std::string& file);
// Parameter count only (no forward pass).
Result<int64_t> parameter_count(const std::string& name, const InputSpec& spec);

}  // namespace jetsweep::agent::models
