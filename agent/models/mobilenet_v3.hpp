// MobileNetV3 (large and small) as torchvision builds it (Howard et al. 2019; torchvision.models.mobilenet_v3_*):
// inverted residual blocks with squeeze-and-excitation and hard-swish, BatchNorm eps 0.001 momentum 0.01,
// classifier Linear(last conv, 1280|1024)-Hardswish-Dropout(0.2)-Linear(classes). With 3x224x224 inputs and
// 1000 classes: large 5,483,032 parameters (the papers' 5.48M), small 2,542,856. Owned by the training thread.
#pragma once

#include <torch/torch.h>

namespace jetsweep::agent::models {

// One bottleneck row of the MobileNetV3 tables (torchvision's InvertedResidualConfig, width multiplier 1).
struct BottleneckConfig {
  int64_t in_channels;
  int64_t kernel;
  int64_t expanded;
  int64_t out_channels;
  bool use_se;
  bool hardswish;  // "HS" (else "RE": ReLU)
  int64_t stride;
};

class MobileNetV3Impl : public torch::nn::Module {
 public:
  enum class Size { kLarge, kSmall };
  MobileNetV3Impl(Size size, int64_t in_channels, int64_t classes);
  torch::Tensor forward(torch::Tensor x);

 private:
  torch::nn::Sequential features_{nullptr};
  torch::nn::Sequential classifier_{nullptr};
};
TORCH_MODULE(MobileNetV3);

// torchvision's _make_divisible(v, 8).
int64_t make_divisible(double v, int64_t divisor = 8);

}  // namespace jetsweep::agent::models
