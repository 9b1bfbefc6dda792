// A user's model exported from Python as TorchScript (torch.jit.script/trace + torch.jit.save), trained under the
// contract of docs/WORKLOADS.md ("Your own model"): forward returns logits for cross-entropy, or the module's
// training_loss(inputs, targets) returns the scalar loss. Includes torch. Built and called on the training thread.
#pragma once

#include "agent/models/workload.hpp"

namespace jetsweep::agent::models {

// Loads `file` and checks it on a probe minibatch of `spec`'s shape. Each error a user will hit is its own clear
// kInvalidArgument: not a TorchScript file; written by a newer PyTorch than this LibTorch (both versions named);
// forward failing on the dataset's sample shape (the shape named); logits of the wrong shape; training_loss not
// returning a scalar. `name` (torchscript:<sha256>) names the model in messages.
Result<std::unique_ptr<Workload>> load_torchscript_workload(const std::string& name, const std::string& file,
                                                            const InputSpec& spec);

}  // namespace jetsweep::agent::models
