// A model as the training loop sees it: its parameters and the loss of one minibatch. Built-in models train with
// cross-entropy on their logits; a TorchScript file exported from Python (torchscript.cpp; docs/WORKLOADS.md "Your
// own model") does the same, or brings its own training_loss. Includes torch: only for agent/trainer.cpp,
// agent/models/*.cpp and tests. Built and called on the training thread.
#pragma once

#include <torch/torch.h>

#include <memory>
#include <string>
#include <vector>

#include "agent/models/registry.hpp"

namespace jetsweep::agent::models {

class Workload {
 public:
  virtual ~Workload() = default;
  virtual std::vector<torch::Tensor> parameters() = 0;
  virtual void to(const torch::Device& device) = 0;
  virtual void set_training(bool on) = 0;
  // Logits: [N, classes] for images [N, C, H, W], [N, T, vocabulary] for tokens [N, T].
  virtual torch::Tensor forward(const torch::Tensor& x) = 0;
  // The minibatch's scalar loss; targets are the labels [N] (images) or the next tokens [N * T].
  virtual torch::Tensor loss(const torch::Tensor& x, const torch::Tensor& y) = 0;
  // A TorchScript model's non-finite loss fails its run (naming the epoch and minibatch); a built-in model's is
  // reported as a null loss (the model diverged under the papers' settings: a finding, not a user's bug).
  virtual bool fails_on_non_finite_loss() const = 0;
};

// `model` is a built-in name (registry.hpp) or "torchscript:<sha256>", whose verified file is `model_file`.
// A TorchScript model is loaded and checked against the contract on a probe minibatch of `spec`'s shape.
Result<std::unique_ptr<Workload>> make_workload(const std::string& model, const std::string& model_file, const InputSpec& spec);
// Parameters and forward multiply-accumulates of one sample (as measure_model); defined in registry.cpp.
Result<ModelFigures> measure_workload(Workload& workload, const InputSpec& spec);
// A zero input of `spec`'s shape with `n` samples (float32 images or int64 tokens).
torch::Tensor probe_input(const InputSpec& spec, int64_t n);

}  // namespace jetsweep::agent::models
