// ResNet-18 (He et al. 2016) with BasicBlocks [2, 2, 2, 2] and two stems:
//   kImageNet - torchvision.models.resnet18: conv 7x7/2 + max-pool 3x3/2; 11,689,512 parameters for
//               1000 classes (the papers' 11.68M, Table 2);
//   kCifar    - the usual CIFAR variant: conv 3x3/1, no max-pool (keeps 32x32 inputs spatially useful);
//               11,173,962 parameters for 10 classes.
// Owned by the training thread.
#pragma once

#include <torch/torch.h>

namespace jetsweep::agent::models {

class ResNet18Impl : public torch::nn::Module {
 public:
  enum class Stem { kCifar, kImageNet };
  ResNet18Impl(Stem stem, int64_t in_channels, int64_t classes);
  torch::Tensor forward(torch::Tensor x);

 private:
  bool max_pool_;
  torch::nn::Conv2d conv1_{nullptr};
  torch::nn::BatchNorm2d bn1_{nullptr};
  torch::nn::Sequential layers_{nullptr};
  torch::nn::Linear fc_{nullptr};
};
TORCH_MODULE(ResNet18);

}  // namespace jetsweep::agent::models
