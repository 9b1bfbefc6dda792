// The LibTorch plugin (libjetsweep_nn.so): the PowerTrain network behind nn_backend.hpp. The only translation
// unit that includes torch headers; loaded by nn_predictor.cpp on first use.
#include "analysis/nn_backend.hpp"
#include "analysis/nn_predictor.hpp"

#include <torch/torch.h>

#include <chrono>
#include <cmath>
#include <filesystem>

namespace jetsweep::analysis {

namespace {

// Inputs per mode: cores, CPU, GPU, EMC MHz; with inverse features also their inverses.
int64_t input_width(bool inverse) { return inverse ? 8 : 4; }

struct MlpImpl : torch::nn::Module {
  MlpImpl(int64_t inputs, double dropout)
      : l1(register_module("l1", torch::nn::Linear(inputs, 256))),
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

torch::Tensor raw_features(const std::vector<ModeKey>& x, bool inverse) {
  auto t = torch::empty({static_cast<int64_t>(x.size()), input_width(inverse)}, torch::kFloat64);
  auto a = t.accessor<double, 2>();
  for (size_t i = 0; i < x.size(); ++i) {
    const double v[4] = {static_cast<double>(x[i].cores), x[i].cpu_mhz, x[i].gpu_mhz, x[i].emc_mhz};
    for (int j = 0; j < 4; ++j) {
      a[i][j] = v[j];
      if (inverse) a[i][4 + j] = v[j] > 0 ? 1.0 / v[j] : 0.0;
    }
  }
  return t;
}

// A trained (or loading) network, its scalers and its training report.
class TorchModel final : public NnModel {
 public:
  mutable Mlp net{nullptr};   // mutable: predict() switches it to eval mode and runs it (one thread at a time)
  torch::Tensor x_mean, x_std;  // float64 [input_width]
  double y_mean = 0, y_std = 1;
  bool log_target = false;
  bool inverse_features = false;
  double dropout = 0.1;
  NnTrainingReport training;

  torch::Tensor scale_x(const std::vector<ModeKey>& x) const {
    return ((raw_features(x, inverse_features) - x_mean) / x_std).to(torch::kFloat32);
  }
  double to_target_space(double y) const { return ((log_target ? std::log(y) : y) - y_mean) / y_std; }
  double from_target_space(double z) const {
    const double v = z * y_std + y_mean;
    return log_target ? std::exp(v) : v;
  }

  // Fits the target scaler, then trains with Adam + MSE: full-batch steps on every sample when
  // o.full_batch_steps > 0, else epochs on a 90:10 split keeping the best-validation weights.
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
    const bool finished = o.full_batch_steps > 0 ? fit_full_batch(xs, ys, o) : fit_with_validation(xs, ys, o);
    net->eval();
    if (!finished) return Status(Code::kCancelled, "training cancelled");
    training.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    return Status::ok();
  }

  static bool cancelled(const NnOptions& o) { return o.cancel && o.cancel->load(std::memory_order_relaxed); }

  // Every sample in every step; the last weights are kept. False when cancelled (o.cancel).
  bool fit_full_batch(const torch::Tensor& xs, const torch::Tensor& ys, const NnOptions& o) {
    torch::optim::Adam opt(net->parameters(), torch::optim::AdamOptions(o.learning_rate));
    net->train();
    for (int step = 0; step < o.full_batch_steps; ++step) {
      if (cancelled(o)) return false;
      opt.zero_grad();
      auto loss = torch::mse_loss(net->forward(xs), ys);
      loss.backward();
      opt.step();
    }
    net->eval();
    torch::NoGradGuard ng;
    training.samples_train = static_cast<int>(xs.size(0));
    training.samples_validation = 0;
    training.best_epoch = o.full_batch_steps;
    training.best_validation_mse = torch::mse_loss(net->forward(xs), ys).item<double>();
    return true;
  }

  // PowerTrain's way: a seeded 90:10 split, `epochs` of minibatches, the best-validation weights kept. False when
  // cancelled (o.cancel).
  bool fit_with_validation(const torch::Tensor& xs, const torch::Tensor& ys, const NnOptions& o) {
    const int64_t n = xs.size(0);
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
      if (cancelled(o)) return false;
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
    training.samples_train = static_cast<int>(n_train);
    training.samples_validation = static_cast<int>(n_val);
    training.best_epoch = best_epoch;
    training.best_validation_mse = best_loss;
    return true;
  }

  Result<std::unique_ptr<NnModel>> transfer(const std::vector<ModeKey>& x, const std::vector<double>& y,
                                            const NnOptions& o) const override;
  std::vector<double> predict(const std::vector<ModeKey>& x) const override;
  Status save(const std::string& path) const override;
  const NnTrainingReport& report() const override { return training; }
};

// A network freshly initialised for `o` (seeded) on inputs with or without inverses, for training from
// scratch or for transfer.
std::unique_ptr<TorchModel> fresh(const NnOptions& o, bool inverse_features) {
  torch::manual_seed(o.seed);
  auto m = std::make_unique<TorchModel>();
  m->log_target = o.log_target;
  m->inverse_features = inverse_features;
  m->dropout = o.dropout;
  m->net = Mlp(input_width(inverse_features), o.dropout);
  return m;
}

Result<std::unique_ptr<NnModel>> TorchModel::transfer(const std::vector<ModeKey>& x, const std::vector<double>& y,
                                                      const NnOptions& o) const {
  try {
    ThreadScope threads(o.threads);
    if (o.inverse_features != inverse_features)
      return invalid_argument(std::string("PowerTrain transfer: the reference model was trained ") +
                              (inverse_features ? "with" : "without") + " inverse features");
    auto m = fresh(o, inverse_features);  // fresh output layer (seeded init); hidden layers copied below
    {
      torch::NoGradGuard ng;
      m->net->l1->weight.copy_(net->l1->weight);
      m->net->l1->bias.copy_(net->l1->bias);
      m->net->l2->weight.copy_(net->l2->weight);
      m->net->l2->bias.copy_(net->l2->bias);
      m->net->l3->weight.copy_(net->l3->weight);
      m->net->l3->bias.copy_(net->l3->bias);
    }
    m->x_mean = x_mean.clone();
    m->x_std = x_std.clone();
    JS_RETURN_IF_ERROR(m->fit(x, y, o));
    return std::unique_ptr<NnModel>(std::move(m));
  } catch (const std::exception& e) {
    return internal_error(std::string("PowerTrain transfer failed: ") + e.what());
  }
}

std::vector<double> TorchModel::predict(const std::vector<ModeKey>& x) const {
  std::vector<double> out(x.size(), 0.0);
  if (x.empty()) return out;
  torch::NoGradGuard ng;
  ThreadScope threads(1);
  net->eval();
  // Chunks keep the 256-wide activations in cache.
  constexpr size_t kChunk = 2048;
  for (size_t first = 0; first < x.size(); first += kChunk) {
    const size_t n = std::min(kChunk, x.size() - first);
    std::vector<ModeKey> part(x.begin() + static_cast<std::ptrdiff_t>(first),
                              x.begin() + static_cast<std::ptrdiff_t>(first + n));
    auto z = net->forward(scale_x(part)).to(torch::kFloat64).contiguous();
    auto a = z.accessor<double, 2>();
    for (size_t i = 0; i < n; ++i) out[first + i] = from_target_space(a[static_cast<int64_t>(i)][0]);
  }
  return out;
}

Status TorchModel::save(const std::string& path) const {
  try {
    std::error_code ec;
    std::filesystem::create_directories(std::filesystem::path(path).parent_path(), ec);
    torch::serialize::OutputArchive ar;
    net->save(ar);
    ar.write("x_mean", x_mean);
    ar.write("x_std", x_std);
    ar.write("y_scale", torch::tensor({y_mean, y_std, log_target ? 1.0 : 0.0, dropout,
                                       static_cast<double>(training.best_epoch), training.best_validation_mse,
                                       training.seconds, inverse_features ? 1.0 : 0.0},
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

// The plugin's one backend.
class TorchBackend final : public NnBackend {
 public:
  int abi() const override { return kNnBackendAbi; }

  Result<std::unique_ptr<NnModel>> train(const std::vector<ModeKey>& x, const std::vector<double>& y,
                                         const NnOptions& o) const override {
    try {
      ThreadScope threads(o.threads);
      auto m = fresh(o, o.inverse_features);
      auto raw = raw_features(x, o.inverse_features);
      m->x_mean = raw.mean(0);
      m->x_std = raw.std(0, /*unbiased=*/false);
      m->x_std = torch::where(m->x_std > 0, m->x_std, torch::ones_like(m->x_std));
      JS_RETURN_IF_ERROR(m->fit(x, y, o));
      return std::unique_ptr<NnModel>(std::move(m));
    } catch (const std::exception& e) {
      return internal_error(std::string("NN training failed: ") + e.what());
    }
  }

  Result<std::unique_ptr<NnModel>> load(const std::string& path) const override {
    try {
      torch::serialize::InputArchive ar;
      ar.load_from(path);
      torch::Tensor ys;
      ar.read("y_scale", ys);
      auto a = ys.accessor<double, 1>();
      auto m = std::make_unique<TorchModel>();
      m->y_mean = a[0];
      m->y_std = a[1];
      m->log_target = a[2] != 0;
      m->dropout = a[3];
      m->training.best_epoch = static_cast<int>(a[4]);
      m->training.best_validation_mse = a[5];
      m->training.seconds = a[6];
      m->inverse_features = ys.size(0) > 7 && a[7] != 0;   // files saved before ABI 2 hold 7 values
      m->net = Mlp(input_width(m->inverse_features), m->dropout);
      m->net->load(ar);
      ar.read("x_mean", m->x_mean);
      ar.read("x_std", m->x_std);
      m->net->eval();
      return std::unique_ptr<NnModel>(std::move(m));
    } catch (const std::exception& e) {
      return io_error(path + ": cannot load model: " + e.what());
    }
  }
};

}  // namespace

}  // namespace jetsweep::analysis

// The plugin's entry point (nn_backend.hpp): its backend, alive until the process exits.
extern "C" __attribute__((visibility("default"))) jetsweep::analysis::NnBackend* jetsweep_nn_backend() {
  static jetsweep::analysis::TorchBackend backend;
  return &backend;
}
