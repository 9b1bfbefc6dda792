#include "agent/models/vgg.hpp"

#include "agent/models/torchvision_init.hpp"

namespace jetsweep::agent::models {

Vgg11Impl::Vgg11Impl(int64_t in_channels, int64_t classes) {
  constexpr int64_t kPool = 0;
  torch::nn::Sequential features;
  int64_t in = in_channels;
  for (int64_t v : std::initializer_list<int64_t>{64, kPool, 128, kPool, 256, 256, kPool, 512, 512, kPool, 512, 512, kPool}) {
    if (v == kPool) {
      features->push_back(torch::nn::MaxPool2d(torch::nn::MaxPool2dOptions(2).stride(2)));
    } else {
      features->push_back(torch::nn::Conv2d(torch::nn::Conv2dOptions(in, v, 3).padding(1)));
      features->push_back(torch::nn::ReLU(torch::nn::ReLUOptions(true)));
      in = v;
    }
  }
  features_ = register_module("features", features);
  torch::nn::Sequential classifier;
  classifier->push_back(torch::nn::Linear(512 * 7 * 7, 4096));
  classifier->push_back(torch::nn::ReLU(torch::nn::ReLUOptions(true)));
  classifier->push_back(torch::nn::Dropout(0.5));
  classifier->push_back(torch::nn::Linear(4096, 4096));
  classifier->push_back(torch::nn::ReLU(torch::nn::ReLUOptions(true)));
  classifier->push_back(torch::nn::Dropout(0.5));
  classifier->push_back(torch::nn::Linear(4096, classes));
  classifier_ = register_module("classifier", classifier);
  init_torchvision_classifier(*this);
}

torch::Tensor Vgg11Impl::forward(torch::Tensor x) {
  x = features_->forward(x);
  x = torch::adaptive_avg_pool2d(x, {7, 7}).flatten(1);
  return classifier_->forward(x);
}

}  // namespace jetsweep::agent::models
