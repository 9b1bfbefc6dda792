// Before every include: LibTorch's RecordFunction has a member only when NDEBUG is not defined (inputs_valid_ in
// ATen/record_function.h, 1.13 through 2.x), and the MAC counter below reads RecordFunctions built by the library.
// Every LibTorch the agent links (Debian's, pip wheels, NVIDIA's Jetson wheels) is a release build, so this file
// must see the NDEBUG layout whatever the agent's build type: in a build without NDEBUG (CMake's Debug) the counter
// read a byte of padding as inputs_valid_, had LibTorch swallow the resulting assertion, and counted some ops and
// not others (LeNet-5 at 298,920 MACs instead of 416,520; VGG-11 at 0.11 G instead of 7.6 G). Tested by
// tests/workloads/test_model_macs_debug.cpp, which compiles this file without NDEBUG at -O0.
#ifndef NDEBUG
#define NDEBUG 1
#endif
#include "agent/models/registry.hpp"

#include <ATen/record_function.h>

#include "agent/models/factory.hpp"
#include "agent/models/lenet.hpp"
#include "agent/models/lstm_lm.hpp"
#include "agent/models/mobilenet_v3.hpp"
#include "agent/models/resnet.hpp"
#include "agent/models/vgg.hpp"
#include "agent/models/workload.hpp"

namespace jetsweep::agent::models {

std::string InputSpec::to_string() const {
  if (kind == Kind::kTokens) return "tokens x" + std::to_string(seq_len) + ", vocabulary " + std::to_string(classes);
  return std::to_string(channels) + "x" + std::to_string(height) + "x" + std::to_string(width) + ", " +
         std::to_string(classes) + " classes";
}

const std::vector<ModelEntry>& model_catalog() {
  static const std::vector<ModelEntry> kModels = {
      {"lenet5", {}, "LeNet-5: conv6-pool-conv16-pool-fc120-fc84 (ReLU, max-pool)", InputSpec::image(1, 28, 28, 10),
       "1x28x28 MNIST, 10 classes", 60e3, 4.4e6, 12},
      {"mobilenet_v3_large", {"mobilenet_v3"}, "MobileNetV3-Large as torchvision.models.mobilenet_v3_large",
       InputSpec::image(3, 224, 224, 1000), "3x224x224, 1000 classes (torchvision default; GLD-23k's 203 classes give 4,462,075)",
       5.48e6, 225.4e6, 32},
      {"mobilenet_v3_small", {}, "MobileNetV3-Small as torchvision.models.mobilenet_v3_small",
       InputSpec::image(3, 224, 224, 1000), "3x224x224, 1000 classes (not in the papers)", 0, 0, 32},
      {"resnet18", {}, "ResNet-18, CIFAR stem (conv 3x3/1, no max-pool)", InputSpec::image(3, 32, 32, 10),
       "3x32x32 CIFAR-10, 10 classes (the papers' 11.68M is the ImageNet stem: resnet18_imagenet)", 0, 0, 8},
      {"resnet18_imagenet", {}, "ResNet-18 as torchvision.models.resnet18 (conv 7x7/2 + max-pool)",
       InputSpec::image(3, 224, 224, 1000), "3x224x224, 1000 classes (torchvision default)", 11.68e6, 1.82e9, 32},
      {"vgg11", {}, "VGG-11 (configuration A, no BatchNorm) as torchvision.models.vgg11",
       InputSpec::image(3, 224, 224, 1000), "3x224x224, 1000 classes (torchvision default)", 132.86e6, 7.63e9, 32},
      {"lstm", {}, "2-layer LSTM language model, embedding = hidden = 256, tied decoder",
       InputSpec::tokens(35, 33278), "WikiText-2 vocabulary (33,278 words), 35-token sequences; 8.6M for ~29.4k words",
       8.6e6, 0, 0},
  };
  return kModels;
}

namespace {
std::string known_names() {
  std::string s;
  for (const auto& m : model_catalog()) {
    s += (s.empty() ? "" : ", ") + m.name;
    for (const auto& a : m.aliases) s += ", " + a;
  }
  return s;
}
}  // namespace

Result<const ModelEntry*> find_model(const std::string& name) {
  for (const auto& m : model_catalog()) {
    if (m.name == name) return &m;
    for (const auto& a : m.aliases)
      if (a == name) return &m;
  }
  return invalid_argument("model '" + name + "' is not built into this agent (known: " + known_names() + ")");
}

Status check_input(const ModelEntry& model, const InputSpec& spec) {
  const bool wants_tokens = model.reference.kind == InputSpec::Kind::kTokens;
  if (wants_tokens != (spec.kind == InputSpec::Kind::kTokens))
    return invalid_argument("model '" + model.name + "' takes " + (wants_tokens ? "token sequences" : "images") +
                            " but the dataset provides " + spec.to_string());
  if (spec.classes < 2) return invalid_argument("model '" + model.name + "': need at least 2 classes, got " + std::to_string(spec.classes));
  if (wants_tokens) {
    if (spec.seq_len < 1) return invalid_argument("model '" + model.name + "': sequence length must be >= 1");
    return Status::ok();
  }
  if (spec.channels < 1) return invalid_argument("model '" + model.name + "': channels must be >= 1");
  if (spec.height < model.min_image_side || spec.width < model.min_image_side)
    return invalid_argument("model '" + model.name + "' needs images of at least " + std::to_string(model.min_image_side) +
                            "x" + std::to_string(model.min_image_side) + ", got " + spec.to_string());
  if (model.name == "lenet5" && spec.height != spec.width)
    return invalid_argument("LeNet-5 needs square images, got " + spec.to_string());
  return Status::ok();
}

Result<torch::nn::AnyModule> make_model(const std::string& name, const InputSpec& spec) {
  JS_ASSIGN_OR_RETURN(const ModelEntry* m, find_model(name));
  JS_RETURN_IF_ERROR(check_input(*m, spec));
  try {
    const std::string& n = m->name;
    if (n == "lenet5") return torch::nn::AnyModule(LeNet5(spec.channels, spec.height, spec.classes));
    if (n == "mobilenet_v3_large")
      return torch::nn::AnyModule(MobileNetV3(MobileNetV3Impl::Size::kLarge, spec.channels, spec.classes));
    if (n == "mobilenet_v3_small")
      return torch::nn::AnyModule(MobileNetV3(MobileNetV3Impl::Size::kSmall, spec.channels, spec.classes));
    if (n == "resnet18") return torch::nn::AnyModule(ResNet18(ResNet18Impl::Stem::kCifar, spec.channels, spec.classes));
    if (n == "resnet18_imagenet")
      return torch::nn::AnyModule(ResNet18(ResNet18Impl::Stem::kImageNet, spec.channels, spec.classes));
    if (n == "vgg11") return torch::nn::AnyModule(Vgg11(spec.channels, spec.classes));
    if (n == "lstm") return torch::nn::AnyModule(LstmLm(spec.classes));
  } catch (const c10::Error& e) {
    return internal_error("building model '" + name + "' for " + spec.to_string() + ": " + e.what_without_backtrace());
  }
  return internal_error("model '" + name + "' is in the catalogue but has no constructor");
}

namespace {

int64_t count_parameters(torch::nn::Module& m) {
  int64_t n = 0;
  for (const auto& p : m.parameters()) n += p.numel();
  return n;
}

// Multiply-accumulates of the ops observed on this thread while a MacCounter is alive: convolutions
// (counted once at aten::convolution, not at the backend op it dispatches to) and matrix products.
thread_local int64_t* tl_macs = nullptr;

std::unique_ptr<at::ObserverContext> on_op(const at::RecordFunction& fn) {
  if (tl_macs == nullptr) return nullptr;
  const std::string_view name = fn.name();
  if (name != "aten::convolution" && name != "aten::mm" && name != "aten::addmm" && name != "aten::bmm") return nullptr;
  auto inputs = fn.inputs();
  auto tensor_sizes = [&](size_t i) -> std::vector<int64_t> {
    if (i >= inputs.size() || !inputs[i].isTensor()) return {};
    return inputs[i].toTensor().sizes().vec();
  };
  auto int_list = [&](size_t i) -> std::vector<int64_t> {
    if (i >= inputs.size() || !inputs[i].isIntList()) return {};
    return inputs[i].toIntVector();
  };
  if (name == "aten::convolution") {
    auto x = tensor_sizes(0), w = tensor_sizes(1);
    if (x.size() != 4 || w.size() != 4) return nullptr;
    auto stride = int_list(3), padding = int_list(4), dilation = int_list(5);
    if (stride.size() != 2 || padding.size() != 2 || dilation.size() != 2) return nullptr;
    int64_t out_elems = x[0] * w[0];
    for (int d = 0; d < 2; ++d)
      out_elems *= (x[2 + d] + 2 * padding[d] - dilation[d] * (w[2 + d] - 1) - 1) / stride[d] + 1;
    *tl_macs += out_elems * w[1] * w[2] * w[3];  // w[1] = input channels per group
  } else if (name == "aten::mm") {
    auto a = tensor_sizes(0), b = tensor_sizes(1);
    if (a.size() == 2 && b.size() == 2) *tl_macs += a[0] * a[1] * b[1];
  } else if (name == "aten::addmm") {
    auto a = tensor_sizes(1), b = tensor_sizes(2);
    if (a.size() == 2 && b.size() == 2) *tl_macs += a[0] * a[1] * b[1];
  } else if (name == "aten::bmm") {
    auto a = tensor_sizes(0), b = tensor_sizes(1);
    if (a.size() == 3 && b.size() == 3) *tl_macs += a[0] * a[1] * a[2] * b[2];
  }
  return nullptr;
}

class MacCounter {
 public:
  MacCounter() {
    tl_macs = &macs_;
    handle_ = at::addThreadLocalCallback(at::RecordFunctionCallback(&on_op).needsInputs(true).scopes({at::RecordScope::FUNCTION}));
  }
  ~MacCounter() {
    at::removeCallback(handle_);
    tl_macs = nullptr;
  }
  MacCounter(const MacCounter&) = delete;
  MacCounter& operator=(const MacCounter&) = delete;
  int64_t macs() const { return macs_; }

 private:
  int64_t macs_ = 0;
  at::CallbackHandle handle_;
};

}  // namespace

Result<int64_t> parameter_count(const std::string& name, const InputSpec& spec) {
  JS_ASSIGN_OR_RETURN(auto model, make_model(name, spec));
  return count_parameters(*model.ptr());
}

Result<ModelFigures> measure_workload(Workload& workload, const InputSpec& spec) {
  ModelFigures f;
  try {
    for (const auto& p : workload.parameters()) f.parameters += p.numel();
    torch::NoGradGuard no_grad;
    workload.set_training(false);
    const torch::Tensor x = probe_input(spec, 1);
    MacCounter counter;
    workload.forward(x);
    f.forward_macs = counter.macs();
  } catch (const std::exception& e) {   // c10::Error, or what a TorchScript model's own code raises
    const auto* c10_error = dynamic_cast<const c10::Error*>(&e);
    return invalid_argument("measuring a model on " + spec.to_string() + ": " +
                            (c10_error ? c10_error->what_without_backtrace() : e.what()));
  }
  return f;
}

Result<ModelFigures> measure_torchscript(const std::string& name, const std::string& file, const InputSpec& spec) {
  JS_ASSIGN_OR_RETURN(auto workload, make_workload(name, file, spec));
  return measure_workload(*workload, spec);
}

Result<ModelFigures> measure_model(const std::string& name, const InputSpec& spec) {
  JS_ASSIGN_OR_RETURN(auto workload, make_workload(name, "", spec));
  auto figures = measure_workload(*workload, spec);
  if (!figures) return figures.status().with_context("model '" + name + "'");
  return figures;
}

}  // namespace jetsweep::agent::models
