// Builds a registered model as a type-erased LibTorch module (forward(Tensor) -> Tensor). Includes torch:
// only for agent/trainer.cpp, agent/models/*.cpp and tests. Any thread; the module belongs to its caller.
#pragma once

#include <torch/torch.h>

#include "agent/models/registry.hpp"

namespace jetsweep::agent::models {

// Image models take float [N, C, H, W] and return logits [N, classes]; the LSTM takes int64 [N, T] and
// returns logits [N, T, vocabulary].
Result<torch::nn::AnyModule> make_model(const std::string& name, const InputSpec& spec);

}  // namespace jetsweep::agent::models
