#include "analysis/nn_predictor.hpp"

#include <torch/torch.h>

#include <chrono>
#include <cmath>
#include <filesystem>

namespace jetsweep::analysis {

namespace {

constexpr int kFeatures = 4;

struct MlpImpl : torch::nn::Module {
  explicit MlpImpl(double dropout)
      : l1(register_module("l1", torch::nn::Linear(kFeatures, 256))),
        l2(register_module("l2", torch::nn::Linear(256, 128))),
        l3(register_module("l3", torch::nn::Linear(128, 64))),
        out(register_module("out", torch::nn::Linear(64, 1))),
        d1(register_module("d1", torch::nn::Dropout(dropout))),
        d2(register_module("d2", torch::nn::Dropout(dropout))) {}
  torch::Tensor forward(torch::Tensor x) {
    x = d1(torch::relu(l1(x)));
    x = d2(torch::relu(l2(x)));
    x = torch::relu(l3(x));
    return out(x);
  }
  torch::nn::Linear l1, l2, l3, out;
  torch::nn::Dropout d1, d2;
};
TORCH_MODULE(Mlp);

// Restores the process-wide LibTorch thread count on scope exit.
class ThreadScope {
 public:
  explicit ThreadScope(int n) : saved_(torch::get_num_threads()) {
    if (n > 0) torch::set_num_threads(n);
  }
  ~ThreadScope() { torch::set_num_threads(saved_); }

 private:
  int saved_;
};

torch::Tensor raw_features(const std::vector<ModeKey>& x) {
  auto t = torch::empty({static_cast<int64_t>(x.size()), kFeatures}, torch::kFloat64);
  auto a = t.accessor<double, 2>();
  for (size_t i = 0; i < x.size(); ++i) {
    a[i][0] = x[i].cores;
    a[i][1] = x[i].cpu_mhz;
    a[i][2] = x[i].gpu_mhz;
    a[i][3] = x[i].emc_mhz;
  }
  return t;
}

}  // namespace

struct NnRegressor::Impl {
  Mlp net{nullptr};
  torch::Tensor x_mean, x_std;  // float64 [4]
  double y_mean = 0, y_std = 1;
  bool log_target = false;
  double dropout = 0.1;
  NnTrainingReport report;

  torch::Tensor scale_x(const std::vector<ModeKey>& x) const {
    return ((raw_features(x) - x_mean) / x_std).to(torch::kFloat32);
  }
  double to_target_space(double y) const { return ((log_target ? std::log(y) : y) - y_mean) / y_std; }
  double from_target_space(double z) const {
    const double v = z * y_std + y_mean;
    return log_target ? std::exp(v) : v;
  }

  // Fits the target scaler, splits 90:10, trains with Adam + MSE, keeps the best-validation weights.
  Status fit(const std::vector<ModeKey>& x, const std::vector<double>& y, const NnOptions& o) {
    const auto start = std::chrono::steady_clock::now();
    const int64_t n = static_cast<int64_t>(x.size());
    std::vector<double> ty(y.size());
    for (size_t i = 0; i < y.size(); ++i) ty[i] = log_target ? std::log(y[i]) : y[i];
    double m = 0, s = 0;
    for (double v : ty) m += v;
    m /= static_cast<double>(n);
    for (double v : ty) s += (v - m) * (v - m);
    s = std::sqrt(s / static_cast<double>(n));
    y_mean = m;
    y_std = s > 0 ? s : 1.0;

    auto xs = scale_x(x);
    auto ys = torch::empty({n, 1}, torch::kFloat32);
    for (int64_t i = 0; i < n; ++i) ys[i][0] = static_cast<float>((ty[static_cast<size_t>(i)] - y_mean) / y_std);

    auto perm = torch::randperm(n, torch::TensorOptions().dtype(torch::kInt64));
    int64_t n_val = static_cast<int64_t>(std::llround(static_cast<double>(n) * o.validation_fraction));
    n_val = std::max<int64_t>(1, std::min<int64_t>(n_val, n - 1));
    auto val_idx = perm.slice(0, 0, n_val);
    auto train_idx = perm.slice(0, n_val, n);
    auto x_train = xs.index_select(0, train_idx), y_train = ys.index_select(0, train_idx);
    auto x_val = xs.index_select(0, val_idx), y_val = ys.index_select(0, val_idx);
    const int64_t n_train = x_train.size(0);

    torch::optim::Adam opt(net->parameters(), torch::optim::AdamOptions(o.learning_rate));
    std::vector<torch::Tensor> best;
    double best_loss = std::numeric_limits<double>::infinity();
    int best_epoch = 0;
    const int64_t bs = std::max(1, o.batch_size);
    for (int epoch = 1; epoch <= o.epochs; ++epoch) {
      net->train();
      auto order = torch::randperm(n_train, torch::TensorOptions().dtype(torch::kInt64));
      for (int64_t b = 0; b < n_train; b += bs) {
        auto idx = order.slice(0, b, std::min(b + bs, n_train));
        opt.zero_grad();
        auto loss = torch::mse_loss(net->forward(x_train.index_select(0, idx)), y_train.index_select(0, idx));
        loss.backward();
        opt.step();
      }
      net->eval();
      double val_loss;
      {
        torch::NoGradGuard ng;
        val_loss = torch::mse_loss(net->forward(x_val), y_val).item<double>();
      }
      if (val_loss < best_loss) {
        best_loss = val_loss;
        best_epoch = epoch;
        best.clear();
        for (const auto& p : net->parameters()) best.push_back(p.detach().clone());
      }
    }
    if (!best.empty()) {
      torch::NoGradGuard ng;
      auto params = net->parameters();
      for (size_t i = 0; i < params.size(); ++i) params[i].copy_(best[i]);
    }
    net->eval();
    report.samples_train = static_cast<int>(n_train);
    report.samples_validation = static_cast<int>(n_val);
    report.best_epoch = best_epoch;
    report.best_validation_mse = best_loss;
    report.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    return Status::ok();
  }
};

NnRegressor::NnRegressor() = default;
NnRegressor::~NnRegressor() = default;
NnRegressor::NnRegressor(NnRegressor&&) noexcept = default;
NnRegressor& NnRegressor::operator=(NnRegressor&&) noexcept = default;

namespace {
Status check_inputs(const std::vector<ModeKey>& x, const std::vector<double>& y, const NnOptions& o) {
  if (x.size() != y.size()) return invalid_argument("NN training: feature and target counts differ");
  if (x.size() < 2) return invalid_argument("--train-modes: the NN needs at least 2 profiled modes (one for validation)");
  for (double v : y) {
    if (!std::isfinite(v)) return invalid_argument("NN training: non-finite target value");
    if (o.log_target && v <= 0) return invalid_argument("NN training: log targets need positive values");
  }
  if (o.epochs < 1) return invalid_argument("--nn-epochs: must be at least 1");
  return Status::ok();
}
}  // namespace

NnRegressor NnRegressor::fresh(const NnOptions& o) {
  torch::manual_seed(o.seed);
  NnRegressor r;
  r.impl_ = std::make_unique<Impl>();
  r.impl_->log_target = o.log_target;
  r.impl_->dropout = o.dropout;
  r.impl_->net = Mlp(o.dropout);
  return r;
}

Result<NnRegressor> NnRegressor::train(const std::vector<ModeKey>& x, const std::vector<double>& y, const NnOptions& o) {
  JS_RETURN_IF_ERROR(check_inputs(x, y, o));
  try {
    ThreadScope threads(o.threads);
    NnRegressor r = fresh(o);
    auto& im = *r.impl_;
    auto raw = raw_features(x);
    im.x_mean = raw.mean(0);
    im.x_std = raw.std(0, /*unbiased=*/false);
    im.x_std = torch::where(im.x_std > 0, im.x_std, torch::ones_like(im.x_std));
    JS_RETURN_IF_ERROR(im.fit(x, y, o));
    return r;
  } catch (const std::exception& e) {
    return internal_error(std::string("NN training failed: ") + e.what());
  }
}

Result<NnRegressor> NnRegressor::transfer(const std::vector<ModeKey>& x, const std::vector<double>& y,
                                          const NnOptions& o) const {
  if (!impl_) return internal_error("transfer from an untrained NN");
  JS_RETURN_IF_ERROR(check_inputs(x, y, o));
  try {
    ThreadScope threads(o.threads);
    NnRegressor r = fresh(o);  // fresh output layer (seeded init); hidden layers copied below
    auto& im = *r.impl_;
    {
      torch::NoGradGuard ng;
      im.net->l1->weight.copy_(impl_->net->l1->weight);
      im.net->l1->bias.copy_(impl_->net->l1->bias);
      im.net->l2->weight.copy_(impl_->net->l2->weight);
      im.net->l2->bias.copy_(impl_->net->l2->bias);
      im.net->l3->weight.copy_(impl_->net->l3->weight);
      im.net->l3->bias.copy_(impl_->net->l3->bias);
    }
    im.x_mean = impl_->x_mean.clone();
    im.x_std = impl_->x_std.clone();
    JS_RETURN_IF_ERROR(im.fit(x, y, o));
    return r;
  } catch (const std::exception& e) {
    return internal_error(std::string("PowerTrain transfer failed: ") + e.what());
  }
}

std::vector<double> NnRegressor::predict(const std::vector<ModeKey>& x) const {
  std::vector<double> out(x.size(), 0.0);
  if (!impl_ || x.empty()) return out;
  torch::NoGradGuard ng;
  ThreadScope threads(1);
  impl_->net->eval();
  // Chunks keep the 256-wide activations in cache.
  constexpr size_t kChunk = 2048;
  for (size_t first = 0; first < x.size(); first += kChunk) {
    const size_t n = std::min(kChunk, x.size() - first);
    std::vector<ModeKey> part(x.begin() + static_cast<std::ptrdiff_t>(first),
                              x.begin() + static_cast<std::ptrdiff_t>(first + n));
    auto z = impl_->net->forward(impl_->scale_x(part)).to(torch::kFloat64).contiguous();
    auto a = z.accessor<double, 2>();
    for (size_t i = 0; i < n; ++i) out[first + i] = impl_->from_target_space(a[static_cast<int64_t>(i)][0]);
  }
  return out;
}

const NnTrainingReport& NnRegressor::report() const {
  static const NnTrainingReport kEmpty;
  return impl_ ? impl_->report : kEmpty;
}

Status NnRegressor::save(const std::string& path) const {
  if (!impl_) return internal_error("saving an untrained NN");
  try {
    std::error_code ec;
    std::filesystem::create_directories(std::filesystem::path(path).parent_path(), ec);
    torch::serialize::OutputArchive ar;
    impl_->net->save(ar);
    ar.write("x_mean", impl_->x_mean);
    ar.write("x_std", impl_->x_std);
    ar.write("y_scale", torch::tensor({impl_->y_mean, impl_->y_std, impl_->log_target ? 1.0 : 0.0, impl_->dropout,
                                       static_cast<double>(impl_->report.best_epoch),
                                       impl_->report.best_validation_mse, impl_->report.seconds},
                                      torch::kFloat64));
    const std::string tmp = path + ".tmp";
    ar.save_to(tmp);
    std::filesystem::rename(tmp, path, ec);
    if (ec) return io_error(path + ": cannot save model: " + ec.message());
    return Status::ok();
  } catch (const std::exception& e) {
    return io_error(path + ": cannot save model: " + e.what());
  }
}

Result<NnRegressor> NnRegressor::load(const std::string& path) {
  try {
    torch::serialize::InputArchive ar;
    ar.load_from(path);
    torch::Tensor ys;
    ar.read("y_scale", ys);
    auto a = ys.accessor<double, 1>();
    NnRegressor r;
    r.impl_ = std::make_unique<Impl>();
    auto& im = *r.impl_;
    im.y_mean = a[0];
    im.y_std = a[1];
    im.log_target = a[2] != 0;
    im.dropout = a[3];
    im.report.best_epoch = static_cast<int>(a[4]);
    im.report.best_validation_mse = a[5];
    im.report.seconds = a[6];
    im.net = Mlp(im.dropout);
    im.net->load(ar);
    ar.read("x_mean", im.x_mean);
    ar.read("x_std", im.x_std);
    im.net->eval();
    return r;
  } catch (const std::exception& e) {
    return io_error(path + ": cannot load model: " + e.what());
  }
}

}  // namespace jetsweep::analysis
