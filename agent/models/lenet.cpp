#include "agent/models/lenet.hpp"

namespace jetsweep::agent::models {

LeNet5Impl::LeNet5Impl(int64_t in_channels, int64_t image_size, int64_t classes) {
  conv1_ = register_module("conv1", torch::nn::Conv2d(torch::nn::Conv2dOptions(in_channels, 6, 5).padding(2)));
  conv2_ = register_module("conv2", torch::nn::Conv2d(torch::nn::Conv2dOptions(6, 16, 5)));
  // 28 -> conv(pad 2) 28 -> pool 14 -> conv 10 -> pool 5
  const int64_t side = ((image_size / 2) - 4) / 2;
  fc1_ = register_module("fc1", torch::nn::Linear(16 * side * side, 120));
  fc2_ = register_module("fc2", torch::nn::Linear(120, 84));
  fc3_ = register_module("fc3", torch::nn::Linear(84, classes));
}

torch::Tensor LeNet5Impl::forward(torch::Tensor x) {
  x = torch::max_pool2d(torch::relu(conv1_->forward(x)), 2);
  x = torch::max_pool2d(torch::relu(conv2_->forward(x)), 2);
  x = x.flatten(1);
  x = torch::relu(fc1_->forward(x));
  x = torch::relu(fc2_->forward(x));
  return fc3_->forward(x);
}

}  // namespace jetsweep::agent::models
