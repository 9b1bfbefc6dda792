// VGG-11 (Simonyan & Zisserman 2015, configuration "A", no BatchNorm) as torchvision.models.vgg11 builds it:
// eight 3x3 convs with max-pools, adaptive average pool to 7x7, classifier 25088-4096-4096-classes with
// dropout. 132,863,336 parameters for 1000 classes (the papers' 132.86M); the adaptive pool lets it train on
// CIFAR-sized inputs (>= 32x32) with the same classifier, as the SIGMETRICS'23 harness does with CIFAR-10.
// Owned by the training thread.
#pragma once

#include <torch/torch.h>

namespace jetsweep::agent::models {

class Vgg11Impl : public torch::nn::Module {
 public:
  Vgg11Impl(int64_t in_channels, int64_t classes);
  torch::Tensor forward(torch::Tensor x);

 private:
  torch::nn::Sequential features_{nullptr};
  torch::nn::Sequential classifier_{nullptr};
};
TORCH_MODULE(Vgg11);

}  // namespace jetsweep::agent::models
