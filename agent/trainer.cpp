#include "agent/trainer.hpp"

#include <torch/torch.h>

#include <chrono>
#include <cmath>

#include "agent/compute_timing.hpp"
#include "agent/device_feed.hpp"
#include "agent/loader.hpp"
#include "agent/models/workload.hpp"

namespace jetsweep::agent {

std::string torch_version() { return TORCH_VERSION; }

models::InputSpec input_spec_for(const SampleShape& s) {
  if (s.kind == SampleShape::Kind::kTokens) return models::InputSpec::tokens(s.seq_len, s.classes);
  return models::InputSpec::image(s.channels, s.height, s.width, s.classes);
}

namespace {

using clock = std::chrono::steady_clock;

// Checks each minibatch's loss: a scalar, and, for a model whose non-finite loss fails its run, finite. On a GPU the
// first non-finite minibatch of an epoch is kept on the device (no per-minibatch host synchronisation) and read at
// the epoch's end; on the CPU the loss is read as it comes.
class LossWatch {
 public:
  LossWatch(std::string model, bool fail_on_non_finite, const torch::Device& device)
      : model_(std::move(model)),
        enabled_(fail_on_non_finite),
        on_cpu_(device.is_cpu()),
        options_(torch::TensorOptions().dtype(torch::kInt64).device(device)) {}
  void start_epoch() {
    first_cpu_ = -1;
    if (enabled_ && !on_cpu_) first_ = torch::full({}, -1, options_);
  }
  Status observe(const torch::Tensor& loss, int64_t epoch, int64_t index) {
    if (loss.dim() != 0)
      return invalid_argument("model " + model_ + ": the loss of epoch " + std::to_string(epoch) + " minibatch " +
                              std::to_string(index) + " has " + std::to_string(loss.dim()) + " dimensions, not a scalar");
    if (!enabled_) return Status::ok();
    if (on_cpu_) {   // reading a CPU scalar costs less than the four small ops below
      if (first_cpu_ < 0 && !std::isfinite(loss.item<double>())) first_cpu_ = index;
    } else {
      first_ = torch::where(first_.lt(0).logical_and(loss.detach().isfinite().logical_not()), torch::full({}, index, options_), first_);
    }
    return Status::ok();
  }
  Status end_epoch(int64_t epoch) const {
    const int64_t bad = !enabled_ ? -1 : on_cpu_ ? first_cpu_ : first_.item<int64_t>();
    if (bad < 0) return Status::ok();
    return invalid_argument("model " + model_ + ": the training loss is not finite (NaN or infinite) from epoch " +
                            std::to_string(epoch) + " minibatch " + std::to_string(bad) +
                            " on; the run stops (lower the learning rate or check the model's loss)");
  }

 private:
  std::string model_;
  bool enabled_;
  bool on_cpu_;
  torch::TensorOptions options_;
  torch::Tensor first_;     // on a GPU: kept on the device
  int64_t first_cpu_ = -1;  // on the CPU
};

}  // namespace

Status train(const RunConfig& config, const Dataset& data, TrainingObserver& observer, const std::atomic<bool>& cancel,
             const std::string& model_file) {
  const SampleShape shape = data.shape();
  const bool tokens = shape.kind == SampleShape::Kind::kTokens;
  try {
    torch::manual_seed(static_cast<uint64_t>(config.seed));
    torch::set_num_threads(static_cast<int>(config.threads));
    auto built = models::make_workload(config.model, model_file, input_spec_for(shape));
    if (!built)   // a TorchScript model's errors name the model, the file and the sample shape themselves
      return is_torchscript_model(config.model) ? built.status() : built.status().with_context("dataset '" + data.name() + "'");
    models::Workload& model = *built.value();
    auto device_name = compute_device_for(config.accelerator);
    if (!device_name) return device_name.status();
    const bool on_gpu = device_name.value() != "cpu";
    const torch::Device device = on_gpu ? torch::Device(torch::kCUDA) : torch::Device(torch::kCPU);
    model.to(device);
    model.set_training(true);
    torch::optim::SGD optimizer(model.parameters(), torch::optim::SGDOptions(0.01).momentum(0.9));
    LossWatch loss_watch(config.model, model.fails_on_non_finite_loss(), device);
    auto mode = parse_timing_mode(config.timing);
    if (!mode) return mode.status();
    // Declared before the loader: the feed's (pinned) memory outlives every batch the loader builds.
    std::unique_ptr<DeviceFeed> feed = on_gpu ? make_cuda_feed() : make_host_feed();
    if (!feed) return internal_error("no CUDA feed in an agent built without CUDA");
    DatasetBatchBuilder builder(data, config.seed);
    Loader loader(builder, config.batch_size, config.workers, config.prefetch, config.seed, config.max_minibatches,
                  feed->host_memory());
    MinibatchClock minibatch_clock(mode.value(), feed->timeline());
    const bool paper = mode.value() == TimingMode::kPaper;
    const std::vector<int64_t> x_shape =
        tokens ? std::vector<int64_t>{0, shape.seq_len} : std::vector<int64_t>{0, shape.channels, shape.height, shape.width};

    std::vector<MinibatchTimes> done;
    for (int64_t epoch = 0; epoch < config.epochs; ++epoch) {
      if (cancel.load()) return Status(Code::kCancelled, "run cancelled before epoch " + std::to_string(epoch));
      observer.on_epoch_start(epoch);
      EpochTiming timing;
      timing.epoch = epoch;
      auto report = [&] {
        for (const MinibatchTimes& t : done) {
          observer.on_minibatch(epoch, t);
          timing.stall_s += t.stall_s;
          timing.compute_s += t.compute_s;
          if (t.copy_s) timing.copy_s = timing.copy_s.value_or(0) + *t.copy_s;
        }
        done.clear();
      };
      const auto epoch_start = clock::now();
      minibatch_clock.start_epoch();
      loader.start_epoch(epoch);
      torch::Tensor loss_sum = torch::zeros({}, torch::TensorOptions().dtype(torch::kFloat64).device(device));
      loss_watch.start_epoch();
      Batch batch;
      double fetch_s = 0;
      auto fetch_start = clock::now();
      while (loader.next(batch, fetch_s)) {
        if (!batch.status.is_ok())
          return batch.status.with_context("epoch " + std::to_string(epoch) + " minibatch " + std::to_string(batch.index));
        const int64_t index = batch.index;
        std::vector<int64_t> xs = x_shape;
        xs[0] = batch.size;
        const std::vector<int64_t> ys{tokens ? batch.size * shape.seq_len : batch.size};
        auto fed = feed->feed(std::move(batch), xs, tokens ? torch::kInt64 : torch::kFloat32, ys);
        double stall_s = fetch_s;
        if (paper) {
          // The papers' harness: the minibatch is on the device before its compute starts.
          if (fed.copy) feed->timeline().wait(fed.copy->end);
          stall_s = std::chrono::duration<double>(clock::now() - fetch_start).count();
        }
        minibatch_clock.begin(index, stall_s, fed.copy);
        optimizer.zero_grad();
        auto loss = model.loss(fed.x, fed.y);
        JS_RETURN_IF_ERROR(loss_watch.observe(loss, epoch, index));
        loss.backward();
        optimizer.step();
        // Accumulated on the device: no per-minibatch host synchronisation for the loss.
        loss_sum += loss.detach().to(torch::kFloat64);
        minibatch_clock.end(done);
        ++timing.minibatches;
        report();
        if (cancel.load()) return Status(Code::kCancelled, "run cancelled in epoch " + std::to_string(epoch));
        fetch_start = clock::now();
      }
      minibatch_clock.drain(done);
      report();
      timing.start = epoch_start;
      timing.end = clock::now();
      timing.e2e_s = std::chrono::duration<double>(timing.end - timing.start).count();
      timing.mean_loss = timing.minibatches > 0 ? loss_sum.item<double>() / static_cast<double>(timing.minibatches) : 0;
      observer.on_epoch_end(timing);
      JS_RETURN_IF_ERROR(loss_watch.end_epoch(epoch));
    }
    return Status::ok();
  } catch (const c10::Error& e) {
    return internal_error(std::string("LibTorch error while training ") + config.model + ": " + e.what_without_backtrace());
  } catch (const std::exception& e) {
    return internal_error(std::string("error while training ") + config.model + ": " + e.what());
  }
}

}  // namespace jetsweep::agent
