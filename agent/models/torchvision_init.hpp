// The weight initialisation torchvision's classification models (VGG, MobileNetV3) apply after building:
// kaiming-normal (fan_out, ReLU gain) convolutions, BatchNorm to (1, 0), Linear N(0, 0.01), zero biases.
// A free function without state; the thread that builds the module calls it.
#pragma once

#include <torch/torch.h>

namespace jetsweep::agent::models {

// Initialises every submodule of `module` (not `module` itself) as above. (MobileNetV3's leaky_relu default with
// a = 0 has the same gain, sqrt(2), as ReLU.)
inline void init_torchvision_classifier(torch::nn::Module& module) {
  for (auto& m : module.modules(/*include_self=*/false)) {
    if (auto* conv = m->as<torch::nn::Conv2d>()) {
      torch::nn::init::kaiming_normal_(conv->weight, 0.0, torch::kFanOut, torch::kReLU);
      if (conv->bias.defined()) torch::nn::init::zeros_(conv->bias);
    } else if (auto* bn = m->as<torch::nn::BatchNorm2d>()) {
      torch::nn::init::ones_(bn->weight);
      torch::nn::init::zeros_(bn->bias);
    } else if (auto* fc = m->as<torch::nn::Linear>()) {
      torch::nn::init::normal_(fc->weight, 0.0, 0.01);
      torch::nn::init::zeros_(fc->bias);
    }
  }
}

}  // namespace jetsweep::agent::models
