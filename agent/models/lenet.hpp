// LeNet-5 as used by the papers' PyTorch harness: conv(6,5x5,pad 2)-relu-maxpool, conv(16,5x5)-relu-maxpool,
// fc 120-84-classes (61,706 parameters for 1x28x28 inputs and 10 classes). Owned by the training thread.
#pragma once

#include <torch/torch.h>

namespace jetsweep::agent::models {

class LeNet5Impl : public torch::nn::Module {
 public:
  LeNet5Impl(int64_t in_channels, int64_t image_size, int64_t classes);
  torch::Tensor forward(torch::Tensor x);

 private:
  torch::nn::Conv2d conv1_{nullptr}, conv2_{nullptr};
  torch::nn::Linear fc1_{nullptr}, fc2_{nullptr}, fc3_{nullptr};
};
TORCH_MODULE(LeNet5);

}  // namespace jetsweep::agent::models
