#include "agent/models/resnet.hpp"

namespace jetsweep::agent::models {

namespace {

torch::nn::Conv2d conv(int64_t in, int64_t out, int64_t kernel, int64_t stride) {
  return torch::nn::Conv2d(torch::nn::Conv2dOptions(in, out, kernel).stride(stride).padding(kernel / 2).bias(false));
}

// torchvision BasicBlock: 3x3 conv-bn-relu, 3x3 conv-bn, plus identity or 1x1-conv-bn shortcut, relu.
class BasicBlockImpl : public torch::nn::Module {
 public:
  BasicBlockImpl(int64_t in, int64_t out, int64_t stride) {
    conv1_ = register_module("conv1", conv(in, out, 3, stride));
    bn1_ = register_module("bn1", torch::nn::BatchNorm2d(out));
    conv2_ = register_module("conv2", conv(out, out, 3, 1));
    bn2_ = register_module("bn2", torch::nn::BatchNorm2d(out));
    if (stride != 1 || in != out) {
      torch::nn::Sequential down;
      down->push_back(conv(in, out, 1, stride));
      down->push_back(torch::nn::BatchNorm2d(out));
      downsample_ = register_module("downsample", down);
    }
  }
  torch::Tensor forward(torch::Tensor x) {
    auto y = torch::relu(bn1_->forward(conv1_->forward(x)));
    y = bn2_->forward(conv2_->forward(y));
    return torch::relu(y + (downsample_ ? downsample_->forward(x) : x));
  }

 private:
  torch::nn::Conv2d conv1_{nullptr}, conv2_{nullptr};
  torch::nn::BatchNorm2d bn1_{nullptr}, bn2_{nullptr};
  torch::nn::Sequential downsample_{nullptr};
};
TORCH_MODULE(BasicBlock);

}  // namespace

ResNet18Impl::ResNet18Impl(Stem stem, int64_t in_channels, int64_t classes) : max_pool_(stem == Stem::kImageNet) {
  conv1_ = register_module("conv1", stem == Stem::kImageNet ? conv(in_channels, 64, 7, 2) : conv(in_channels, 64, 3, 1));
  bn1_ = register_module("bn1", torch::nn::BatchNorm2d(64));
  torch::nn::Sequential layers;
  int64_t in = 64;
  for (int64_t width : {64, 128, 256, 512}) {
    const int64_t stride = width == 64 ? 1 : 2;
    layers->push_back(BasicBlock(in, width, stride));
    layers->push_back(BasicBlock(width, width, 1));
    in = width;
  }
  layers_ = register_module("layers", layers);
  fc_ = register_module("fc", torch::nn::Linear(512, classes));
  for (auto& m : modules(/*include_self=*/false)) {
    if (auto* c = m->as<torch::nn::Conv2d>()) {
      torch::nn::init::kaiming_normal_(c->weight, 0.0, torch::kFanOut, torch::kReLU);
    } else if (auto* bn = m->as<torch::nn::BatchNorm2d>()) {
      torch::nn::init::ones_(bn->weight);
      torch::nn::init::zeros_(bn->bias);
    }
  }
}

torch::Tensor ResNet18Impl::forward(torch::Tensor x) {
  x = torch::relu(bn1_->forward(conv1_->forward(x)));
  if (max_pool_) x = torch::max_pool2d(x, 3, 2, 1);
  x = layers_->forward(x);
  x = torch::adaptive_avg_pool2d(x, {1, 1}).flatten(1);
  return fc_->forward(x);
}

}  // namespace jetsweep::agent::models
