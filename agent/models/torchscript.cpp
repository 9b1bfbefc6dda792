#include "agent/models/torchscript.hpp"

#include <caffe2/serialize/versions.h>
#include <torch/script.h>

#include <optional>
#include <regex>
#include <sstream>

namespace jetsweep::agent::models {

namespace {

std::string shape_of(const torch::Tensor& t) {
  std::ostringstream s;
  s << t.sizes() << " (" << t.dtype() << ")";
  return s.str();
}

// TorchScript's interpreter errors carry a script traceback; the line a user needs is the exception's own.
// (The interpreter throws torch::jit::JITException, a std::runtime_error, for errors raised inside the script.)
std::string essential(const std::string& m) {
  for (const char* kind : {"RuntimeError: ", "ValueError: ", "IndexError: ", "TypeError: ", "AssertionError: "}) {
    const size_t at = m.rfind(kind);
    if (at != std::string::npos) return m.substr(at, m.find('\n', at) - at);
  }
  const size_t nl = m.find('\n');
  return nl == std::string::npos ? m : m.substr(0, nl);
}
std::string essential(const c10::Error& e) { return essential(std::string(e.what_without_backtrace())); }
std::string essential(const std::exception& e) {
  if (const auto* c10_error = dynamic_cast<const c10::Error*>(&e)) return essential(*c10_error);
  return essential(std::string(e.what()));
}

Status load_error(const std::string& name, const std::string& file, const std::exception& e) {
  const auto* c10_error = dynamic_cast<const c10::Error*>(&e);
  const std::string m = c10_error ? c10_error->what_without_backtrace() : e.what();
  const std::string where = "model " + name + " ('" + file + "')";
  if (m.find("maximum supported version") != std::string::npos) {
    std::smatch v;
    const std::string found = std::regex_search(m, v, std::regex("version (\\d+)")) ? v[1].str() : "?";
    return invalid_argument(where + " was saved by a newer PyTorch than this agent's LibTorch " + TORCH_VERSION +
                            ": its file format version is " + found + ", LibTorch " + TORCH_VERSION +
                            " reads up to version " + std::to_string(caffe2::serialize::kMaxSupportedFileFormatVersion) +
                            ". Export it with PyTorch " + TORCH_VERSION + " (or older), or give the agent a newer LibTorch");
  }
  if (m.find("PytorchStreamReader") != std::string::npos || m.find("constants.pkl") != std::string::npos ||
      m.find("central directory") != std::string::npos)
    return invalid_argument(where + " is not a TorchScript file (" + essential(e) +
                            "). Export the model with torch.jit.script or torch.jit.trace and save it with torch.jit.save "
                            "(scripts/export-torchscript; a torch.save() checkpoint or state_dict is not enough)");
  if (m.find("Unknown builtin op") != std::string::npos || m.find("schema") != std::string::npos ||
      m.find("Unknown type name") != std::string::npos)
    return invalid_argument(where + " uses an operator this agent's LibTorch " + TORCH_VERSION +
                            " does not have; it was probably exported by a newer PyTorch (" + essential(e) + ")");
  return invalid_argument(where + " cannot be loaded by LibTorch " + TORCH_VERSION + ": " + essential(e));
}

class TorchScriptWorkload final : public Workload {
 public:
  TorchScriptWorkload(torch::jit::Module module, bool tokens, int64_t classes)
      : module_(std::move(module)), tokens_(tokens), classes_(classes) {
    own_loss_ = module_.find_method("training_loss");
  }

  std::vector<torch::Tensor> parameters() override {
    std::vector<torch::Tensor> v;
    for (const auto& p : module_.parameters()) v.push_back(p);
    return v;
  }
  void to(const torch::Device& device) override { module_.to(device); }
  void set_training(bool on) override { module_.train(on); }
  torch::Tensor forward(const torch::Tensor& x) override {
    auto out = module_.forward({x});
    if (!out.isTensor()) throw c10::Error({__func__, __FILE__, __LINE__}, "forward returns " + out.tagKind() + ", not a tensor of logits");
    return out.toTensor();
  }
  torch::Tensor loss(const torch::Tensor& x, const torch::Tensor& y) override {
    if (own_loss_) {
      auto out = (*own_loss_)({x, y});
      if (!out.isTensor()) throw c10::Error({__func__, __FILE__, __LINE__}, "training_loss returns " + out.tagKind() + ", not a tensor");
      return out.toTensor();
    }
    auto logits = forward(x);
    if (tokens_) logits = logits.reshape({-1, classes_});
    return torch::nn::functional::cross_entropy(logits, y);
  }
  bool fails_on_non_finite_loss() const override { return true; }
  bool has_own_loss() const { return own_loss_.has_value(); }

 private:
  torch::jit::Module module_;
  c10::optional<torch::jit::Method> own_loss_;
  bool tokens_;
  int64_t classes_;
};

// The contract, on a probe minibatch of two zero samples, in eval mode and without gradients: the model's weights and
// buffers are left as exported.
Status check_contract(const std::string& name, TorchScriptWorkload& w, const InputSpec& spec) {
  const bool tokens = spec.kind == InputSpec::Kind::kTokens;
  const torch::Tensor x = probe_input(spec, 2);
  const torch::Tensor y = torch::zeros({tokens ? 2 * spec.seq_len : 2}, torch::kInt64);
  const std::string samples = "the dataset's samples " + shape_of(x) + " (" + spec.to_string() + ")";
  torch::NoGradGuard no_grad;
  w.set_training(false);
  torch::Tensor logits;
  try {
    logits = w.forward(x);
  } catch (const std::exception& e) {
    return invalid_argument("model " + name + ": forward fails on " + samples + ": " + essential(e));
  }
  if (w.has_own_loss()) {   // still in eval mode: the probe must not move BatchNorm's running statistics
    torch::Tensor loss;
    try {
      loss = w.loss(x, y);
    } catch (const std::exception& e) {
      return invalid_argument("model " + name + ": training_loss(inputs, targets) fails on " + samples +
                              " and targets " + shape_of(y) + ": " + essential(e));
    }
    if (loss.dim() != 0)
      return invalid_argument("model " + name + ": training_loss returns a tensor of shape " + shape_of(loss) +
                              ", not a scalar loss (reduce it, e.g. with .mean())");
    return Status::ok();
  }
  const bool fits = tokens ? logits.dim() == 3 && logits.size(0) == 2 && logits.size(1) == spec.seq_len && logits.size(2) == spec.classes
                           : logits.dim() == 2 && logits.size(0) == 2 && logits.size(1) == spec.classes;
  if (!fits)
    return invalid_argument("model " + name + ": forward returns " + shape_of(logits) + " on " + samples + "; cross-entropy needs logits [" +
                            (tokens ? "2, " + std::to_string(spec.seq_len) + ", " : std::string("2, ")) +
                            std::to_string(spec.classes) + "], or the model must define training_loss(inputs, targets)");
  if (!logits.is_floating_point())
    return invalid_argument("model " + name + ": forward returns " + shape_of(logits) + ", not floating-point logits");
  return Status::ok();
}

}  // namespace

Result<std::unique_ptr<Workload>> load_torchscript_workload(const std::string& name, const std::string& file,
                                                            const InputSpec& spec) {
  torch::jit::Module module;
  try {   // c10::Error, and torch::jit::ErrorReport (a std::exception) for code this LibTorch cannot compile
    module = torch::jit::load(file, torch::kCPU);
  } catch (const std::exception& e) {
    return load_error(name, file, e);
  }
  auto w = std::make_unique<TorchScriptWorkload>(std::move(module), spec.kind == InputSpec::Kind::kTokens, spec.classes);
  try {
    JS_RETURN_IF_ERROR(check_contract(name, *w, spec));
  } catch (const std::exception& e) {
    return invalid_argument("model " + name + " fails the TorchScript contract on " + spec.to_string() + ": " + essential(e));
  }
  w->set_training(true);
  return std::unique_ptr<Workload>(std::move(w));
}

Status load_torchscript(const std::string& name, const std::string& file) {
  try {
    torch::jit::load(file, torch::kCPU);
  } catch (const std::exception& e) {
    return load_error(name, file, e);
  }
  return Status::ok();
}

}  // namespace jetsweep::agent::models
