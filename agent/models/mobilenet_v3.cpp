#include "agent/models/mobilenet_v3.hpp"

#include <vector>

#include "agent/models/torchvision_init.hpp"

namespace jetsweep::agent::models {

int64_t make_divisible(double v, int64_t divisor) {
  int64_t new_v = std::max<int64_t>(divisor, static_cast<int64_t>(v + static_cast<double>(divisor) / 2) / divisor * divisor);
  if (static_cast<double>(new_v) < 0.9 * v) new_v += divisor;
  return new_v;
}

namespace {

enum class Act { kNone, kReLU, kHardswish };

// Conv (no bias) + BatchNorm (eps 0.001, momentum 0.01) + optional activation: torchvision's
// Conv2dNormActivation as MobileNetV3 configures it. (A module, not a Sequential, so it can be nested
// in one.)
class ConvBnActImpl : public torch::nn::Module {
 public:
  ConvBnActImpl(int64_t in, int64_t out, int64_t kernel, int64_t stride, int64_t groups, Act act) : act_(act) {
    conv_ = register_module("conv", torch::nn::Conv2d(torch::nn::Conv2dOptions(in, out, kernel)
                                                          .stride(stride)
                                                          .padding((kernel - 1) / 2)
                                                          .groups(groups)
                                                          .bias(false)));
    bn_ = register_module("bn", torch::nn::BatchNorm2d(torch::nn::BatchNorm2dOptions(out).eps(0.001).momentum(0.01)));
  }
  torch::Tensor forward(torch::Tensor x) {
    x = bn_->forward(conv_->forward(x));
    if (act_ == Act::kReLU) return torch::relu_(x);
    if (act_ == Act::kHardswish) return torch::hardswish(x);
    return x;
  }

 private:
  Act act_;
  torch::nn::Conv2d conv_{nullptr};
  torch::nn::BatchNorm2d bn_{nullptr};
};
TORCH_MODULE(ConvBnAct);

torch::nn::AnyModule conv_bn_act(int64_t in, int64_t out, int64_t kernel, int64_t stride, int64_t groups, Act act) {
  return torch::nn::AnyModule(ConvBnAct(in, out, kernel, stride, groups, act));
}

// Squeeze-and-excitation: global average pool, 1x1 conv down, ReLU, 1x1 conv up, hard-sigmoid, rescale.
class SqueezeExcitationImpl : public torch::nn::Module {
 public:
  SqueezeExcitationImpl(int64_t channels, int64_t squeeze) {
    fc1_ = register_module("fc1", torch::nn::Conv2d(torch::nn::Conv2dOptions(channels, squeeze, 1)));
    fc2_ = register_module("fc2", torch::nn::Conv2d(torch::nn::Conv2dOptions(squeeze, channels, 1)));
  }
  torch::Tensor forward(torch::Tensor x) {
    auto s = torch::adaptive_avg_pool2d(x, {1, 1});
    s = torch::relu(fc1_->forward(s));
    s = torch::hardsigmoid(fc2_->forward(s));
    return x * s;
  }

 private:
  torch::nn::Conv2d fc1_{nullptr}, fc2_{nullptr};
};
TORCH_MODULE(SqueezeExcitation);

class InvertedResidualImpl : public torch::nn::Module {
 public:
  explicit InvertedResidualImpl(const BottleneckConfig& c)
      : use_residual_(c.stride == 1 && c.in_channels == c.out_channels) {
    const Act act = c.hardswish ? Act::kHardswish : Act::kReLU;
    torch::nn::Sequential block;
    if (c.expanded != c.in_channels) block->push_back(conv_bn_act(c.in_channels, c.expanded, 1, 1, 1, act));
    block->push_back(conv_bn_act(c.expanded, c.expanded, c.kernel, c.stride, c.expanded, act));
    if (c.use_se) block->push_back(SqueezeExcitation(c.expanded, make_divisible(static_cast<double>(c.expanded / 4))));
    block->push_back(conv_bn_act(c.expanded, c.out_channels, 1, 1, 1, Act::kNone));
    block_ = register_module("block", block);
  }
  torch::Tensor forward(torch::Tensor x) {
    auto y = block_->forward(x);
    return use_residual_ ? y + x : y;
  }

 private:
  bool use_residual_;
  torch::nn::Sequential block_{nullptr};
};
TORCH_MODULE(InvertedResidual);

// torchvision _mobilenet_v3_conf(), width multiplier 1, no dilation.
const std::vector<BottleneckConfig>& large_config() {
  static const std::vector<BottleneckConfig> k = {
      {16, 3, 16, 16, false, false, 1},   {16, 3, 64, 24, false, false, 2},   {24, 3, 72, 24, false, false, 1},
      {24, 5, 72, 40, true, false, 2},    {40, 5, 120, 40, true, false, 1},   {40, 5, 120, 40, true, false, 1},
      {40, 3, 240, 80, false, true, 2},   {80, 3, 200, 80, false, true, 1},   {80, 3, 184, 80, false, true, 1},
      {80, 3, 184, 80, false, true, 1},   {80, 3, 480, 112, true, true, 1},   {112, 3, 672, 112, true, true, 1},
      {112, 5, 672, 160, true, true, 2},  {160, 5, 960, 160, true, true, 1},  {160, 5, 960, 160, true, true, 1},
  };
  return k;
}

const std::vector<BottleneckConfig>& small_config() {
  static const std::vector<BottleneckConfig> k = {
      {16, 3, 16, 16, true, false, 2},   {16, 3, 72, 24, false, false, 2}, {24, 3, 88, 24, false, false, 1},
      {24, 5, 96, 40, true, true, 2},    {40, 5, 240, 40, true, true, 1},  {40, 5, 240, 40, true, true, 1},
      {40, 5, 120, 48, true, true, 1},   {48, 5, 144, 48, true, true, 1},  {48, 5, 288, 96, true, true, 2},
      {96, 5, 576, 96, true, true, 1},   {96, 5, 576, 96, true, true, 1},
  };
  return k;
}

}  // namespace

MobileNetV3Impl::MobileNetV3Impl(Size size, int64_t in_channels, int64_t classes) {
  const auto& blocks = size == Size::kLarge ? large_config() : small_config();
  const int64_t last_channel = size == Size::kLarge ? 1280 : 1024;
  torch::nn::Sequential features;
  features->push_back(conv_bn_act(in_channels, blocks.front().in_channels, 3, 2, 1, Act::kHardswish));
  for (const auto& b : blocks) features->push_back(InvertedResidual(b));
  const int64_t last_in = blocks.back().out_channels;
  const int64_t last_out = 6 * last_in;
  features->push_back(conv_bn_act(last_in, last_out, 1, 1, 1, Act::kHardswish));
  features_ = register_module("features", features);
  torch::nn::Sequential classifier;
  classifier->push_back(torch::nn::Linear(last_out, last_channel));
  classifier->push_back(torch::nn::Functional([](torch::Tensor x) { return torch::hardswish(x); }));
  classifier->push_back(torch::nn::Dropout(torch::nn::DropoutOptions(0.2).inplace(true)));
  classifier->push_back(torch::nn::Linear(last_channel, classes));
  classifier_ = register_module("classifier", classifier);
  init_torchvision_classifier(*this);
}

torch::Tensor MobileNetV3Impl::forward(torch::Tensor x) {
  x = features_->forward(x);
  x = torch::adaptive_avg_pool2d(x, {1, 1}).flatten(1);
  return classifier_->forward(x);
}

}  // namespace jetsweep::agent::models
