#include "agent/trainer.hpp"

#include <torch/torch.h>

#include <chrono>

#include "agent/loader.hpp"
#include "agent/models/lenet.hpp"

namespace jetsweep::agent {

std::string torch_version() { return TORCH_VERSION; }

namespace {
constexpr int64_t kClasses = 10;

models::LeNet5 make_lenet(const ImageDataset& data) {
  return models::LeNet5(data.channels, data.rows, kClasses);
}
}  // namespace

int64_t model_parameter_count(const std::string& model, int64_t channels, int64_t image_size, int64_t classes) {
  if (model != "lenet5") return 0;
  models::LeNet5 net(channels, image_size, classes);
  int64_t n = 0;
  for (const auto& p : net->parameters()) n += p.numel();
  return n;
}

Status train(const RunConfig& config, const ImageDataset& data, TrainingObserver& observer,
             const std::atomic<bool>& cancel) {
  using clock = std::chrono::steady_clock;
  if (config.model != "lenet5") return invalid_argument("model '" + config.model + "' is not built into this agent");
  if (data.rows != data.cols) return invalid_argument("LeNet-5 needs square images");
  try {
    torch::manual_seed(static_cast<uint64_t>(config.seed));
    torch::set_num_threads(static_cast<int>(config.threads));
    auto model = make_lenet(data);
    model->train();
    torch::optim::SGD optimizer(model->parameters(), torch::optim::SGDOptions(0.01).momentum(0.9));
    ImageBatchBuilder builder(data);
    Loader loader(builder, config.batch_size, config.workers, config.prefetch, config.seed, config.max_minibatches);

    for (int64_t epoch = 0; epoch < config.epochs; ++epoch) {
      if (cancel.load()) return Status(Code::kCancelled, "run cancelled before epoch " + std::to_string(epoch));
      observer.on_epoch_start(epoch);
      EpochTiming timing;
      timing.epoch = epoch;
      const auto epoch_start = clock::now();
      loader.start_epoch(epoch);
      torch::Tensor loss_sum = torch::zeros({}, torch::kFloat64);
      Batch batch;
      double stall_s = 0;
      while (loader.next(batch, stall_s)) {
        const auto c0 = clock::now();
        auto x = torch::from_blob(batch.images.data(), {batch.size, data.channels, data.rows, data.cols},
                                  torch::kFloat32);
        auto y = torch::from_blob(batch.labels.data(), {batch.size}, torch::kInt64);
        optimizer.zero_grad();
        auto loss = torch::nn::functional::cross_entropy(model->forward(x), y);
        loss.backward();
        optimizer.step();
        // Accumulated on the device: no per-minibatch host synchronisation for the loss.
        loss_sum += loss.detach().to(torch::kFloat64);
        const double compute_s = std::chrono::duration<double>(clock::now() - c0).count();
        observer.on_minibatch(epoch, batch.index, stall_s, compute_s);
        timing.stall_s += stall_s;
        timing.compute_s += compute_s;
        ++timing.minibatches;
        if (cancel.load()) return Status(Code::kCancelled, "run cancelled in epoch " + std::to_string(epoch));
      }
      timing.e2e_s = std::chrono::duration<double>(clock::now() - epoch_start).count();
      timing.mean_loss = timing.minibatches > 0 ? loss_sum.item<double>() / static_cast<double>(timing.minibatches) : 0;
      observer.on_epoch_end(timing);
    }
    return Status::ok();
  } catch (const c10::Error& e) {
    return internal_error(std::string("LibTorch error while training ") + config.model + ": " + e.what_without_backtrace());
  } catch (const std::exception& e) {
    return internal_error(std::string("error while training ") + config.model + ": " + e.what());
  }
}

}  // namespace jetsweep::agent
