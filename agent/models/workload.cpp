#include "agent/models/workload.hpp"

#include "agent/models/factory.hpp"
#include "agent/models/torchscript.hpp"
#include "common/run_config.hpp"

namespace jetsweep::agent::models {

namespace {

// A model compiled into the agent (registry.hpp), trained with cross-entropy on its logits.
class BuiltinWorkload final : public Workload {
 public:
  BuiltinWorkload(torch::nn::AnyModule model, bool tokens, int64_t classes)
      : model_(std::move(model)), tokens_(tokens), classes_(classes) {}
  std::vector<torch::Tensor> parameters() override { return model_.ptr()->parameters(); }
  void to(const torch::Device& device) override { model_.ptr()->to(device); }
  void set_training(bool on) override { model_.ptr()->train(on); }
  torch::Tensor forward(const torch::Tensor& x) override { return model_.forward(x); }
  torch::Tensor loss(const torch::Tensor& x, const torch::Tensor& y) override {
    auto out = model_.forward(x);
    if (tokens_) out = out.reshape({-1, classes_});
    return torch::nn::functional::cross_entropy(out, y);
  }
  bool fails_on_non_finite_loss() const override { return false; }

 private:
  torch::nn::AnyModule model_;
  bool tokens_;
  int64_t classes_;
};

}  // namespace

torch::Tensor probe_input(const InputSpec& spec, int64_t n) {
  return spec.kind == InputSpec::Kind::kTokens ? torch::zeros({n, spec.seq_len}, torch::kInt64)
                                               : torch::zeros({n, spec.channels, spec.height, spec.width});
}

Result<std::unique_ptr<Workload>> make_workload(const std::string& model, const std::string& model_file, const InputSpec& spec) {
  if (is_torchscript_model(model)) {
    if (model_file.empty()) return internal_error("model " + model + ": no file given for it");
    return load_torchscript_workload(model, model_file, spec);
  }
  JS_ASSIGN_OR_RETURN(auto built, make_model(model, spec));
  return std::unique_ptr<Workload>(
      std::make_unique<BuiltinWorkload>(std::move(built), spec.kind == InputSpec::Kind::kTokens, spec.classes));
}

}  // namespace jetsweep::agent::models
