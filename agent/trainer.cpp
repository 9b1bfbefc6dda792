#include "agent/trainer.hpp"

#include <torch/torch.h>

#include <chrono>
#include <cstring>
#include <deque>

#if JETSWEEP_WITH_CUDA
#include <ATen/cuda/CUDAContext.h>
#include <ATen/cuda/CUDAEvent.h>
#include <ATen/detail/CUDAHooksInterface.h>
#include <cuda_runtime_api.h>
#include <c10/util/accumulate.h>
#include <c10/cuda/CUDAStream.h>
#include <torch/cuda.h>
#endif

#include "agent/loader.hpp"
#include "agent/models/factory.hpp"

namespace jetsweep::agent {

std::string torch_version() { return TORCH_VERSION; }

bool cuda_available() {
#if JETSWEEP_WITH_CUDA
  return torch::cuda::is_available();
#else
  return false;
#endif
}

std::string cuda_device_name() {
#if JETSWEEP_WITH_CUDA
  if (!torch::cuda::is_available()) return "";
  const cudaDeviceProp* p = at::cuda::getDeviceProperties(0);
  return p ? std::string(p->name) : std::string("GPU 0");
#else
  return "";
#endif
}

std::string cuda_versions() {
#if JETSWEEP_WITH_CUDA
  int runtime = 0;
  cudaRuntimeGetVersion(&runtime);
  const auto& hooks = at::detail::getCUDAHooks();
  return "CUDA runtime " + std::to_string(runtime) +
         (hooks.hasCuDNN() ? ", cuDNN " + std::to_string(hooks.versionCuDNN()) : std::string(", no cuDNN"));
#else
  return "";
#endif
}

std::string cuda_unavailable_reason() {
#if JETSWEEP_WITH_CUDA
  if (torch::cuda::is_available()) return "";
  return "LibTorch " + std::string(TORCH_VERSION) +
         " has CUDA but sees no GPU (torch::cuda::is_available() is false: driver, /dev/nvhost-* or /dev/nvidia* "
         "permissions, or CUDA_VISIBLE_DEVICES)";
#else
  return "this agent was built against LibTorch " + std::string(TORCH_VERSION) +
         " without CUDA (a CPU-only LibTorch: on a Jetson, build against NVIDIA's PyTorch wheel, docs/DEPLOY.md)";
#endif
}

Result<std::string> compute_device_for(const std::string& accelerator) {
  if (accelerator == "cpu") return std::string("cpu");
  if (accelerator != "cuda" && accelerator != "auto" && !accelerator.empty())
    return invalid_argument("accelerator '" + accelerator + "': expected auto, cuda or cpu");
  const std::string name = cuda_device_name();
  if (!name.empty()) return "cuda:0 (" + name + ")";
  if (accelerator == "cuda")
    return invalid_argument("accelerator: cuda: the run needs CUDA, but " + cuda_unavailable_reason() +
                            "; run jetsweep-agent doctor");
  return std::string("cpu");
}

namespace {

using clock = std::chrono::steady_clock;

models::InputSpec input_spec(const SampleShape& s) {
  if (s.kind == SampleShape::Kind::kTokens) return models::InputSpec::tokens(s.seq_len, s.classes);
  return models::InputSpec::image(s.channels, s.height, s.width, s.classes);
}

// One minibatch whose compute time is known (CPU: measured synchronously; GPU: resolved from events).
struct Timed {
  int64_t index;
  double stall_s;
  double compute_s;
};

// Measures forward + backward + step per minibatch and hands finished timings to the epoch's sums and
// the observer in minibatch order. Training thread only.
class ComputeClock {
 public:
  virtual ~ComputeClock() = default;
  virtual void begin() = 0;
  // Called after optimizer.step(); returns the minibatches whose timing is now known.
  virtual void end(int64_t index, double stall_s, std::vector<Timed>& done) = 0;
  // Resolves everything outstanding (end of epoch).
  virtual void drain(std::vector<Timed>& done) = 0;
};

// CPU: the ops have run when step() returns, so wall time is the compute time.
class CpuClock final : public ComputeClock {
 public:
  void begin() override { t0_ = clock::now(); }
  void end(int64_t index, double stall_s, std::vector<Timed>& done) override {
    done.push_back({index, stall_s, std::chrono::duration<double>(clock::now() - t0_).count()});
  }
  void drain(std::vector<Timed>&) override {}

 private:
  clock::time_point t0_;
};

#if JETSWEEP_WITH_CUDA
// GPU: CUDA events recorded on the current stream around forward + backward + step; a minibatch's
// elapsed time is read only once kLag later minibatches have been queued, when its end event has long
// completed, so the hot path never synchronises the device (the papers' harness synchronises every
// minibatch, which serialises the CPU and the GPU).
class CudaClock final : public ComputeClock {
 public:
  static constexpr size_t kLag = 4;
  void begin() override {
    pending_.push_back(Pending{});
    pending_.back().start.record(c10::cuda::getCurrentCUDAStream());
  }
  void end(int64_t index, double stall_s, std::vector<Timed>& done) override {
    Pending& p = pending_.back();
    p.index = index;
    p.stall_s = stall_s;
    p.stop.record(c10::cuda::getCurrentCUDAStream());
    while (pending_.size() > kLag) resolve_front(done);
  }
  void drain(std::vector<Timed>& done) override {
    while (!pending_.empty()) resolve_front(done);
  }

 private:
  struct Pending {
    at::cuda::CUDAEvent start{cudaEventDefault};  // timing enabled (the default flags disable it)
    at::cuda::CUDAEvent stop{cudaEventDefault};
    int64_t index = 0;
    double stall_s = 0;
  };
  void resolve_front(std::vector<Timed>& done) {
    Pending& p = pending_.front();
    p.stop.synchronize();  // kLag minibatches old: normally already complete
    done.push_back({p.index, p.stall_s, static_cast<double>(p.start.elapsed_time(p.stop)) / 1000.0});
    pending_.pop_front();
  }
  std::deque<Pending> pending_;
};

// Host staging in pinned memory so the host-to-device copies can be non-blocking; a ring of buffers, each
// reused only after the copy that read it has completed (its event).
class PinnedStaging {
 public:
  static constexpr size_t kSlots = 4;
  torch::Tensor to_device(const void* src, torch::IntArrayRef shape, torch::ScalarType type, const torch::Device& device) {
    Slot& s = slots_[next_++ % kSlots];
    if (s.used) s.copied.synchronize();
    const int64_t bytes = c10::multiply_integers(shape) * static_cast<int64_t>(c10::elementSize(type));
    if (!s.buffer.defined() || s.buffer.nbytes() < static_cast<size_t>(bytes))
      s.buffer = torch::empty({bytes}, torch::TensorOptions().dtype(torch::kUInt8).pinned_memory(true));
    std::memcpy(s.buffer.data_ptr(), src, static_cast<size_t>(bytes));
    // A view of the pinned buffer: the copy engine sees page-locked memory and copies asynchronously.
    auto host = torch::from_blob(s.buffer.data_ptr(), shape, torch::TensorOptions().dtype(type));
    auto dev = host.to(device, /*non_blocking=*/true);
    s.copied.record(c10::cuda::getCurrentCUDAStream());
    s.used = true;
    return dev;
  }

 private:
  struct Slot {
    torch::Tensor buffer;
    at::cuda::CUDAEvent copied;
    bool used = false;
  };
  Slot slots_[kSlots];
  size_t next_ = 0;
};
#endif

}  // namespace

Status train(const RunConfig& config, const Dataset& data, TrainingObserver& observer, const std::atomic<bool>& cancel) {
  const SampleShape shape = data.shape();
  const bool tokens = shape.kind == SampleShape::Kind::kTokens;
  try {
    torch::manual_seed(static_cast<uint64_t>(config.seed));
    torch::set_num_threads(static_cast<int>(config.threads));
    auto built = models::make_model(config.model, input_spec(shape));
    if (!built) return built.status().with_context("dataset '" + data.name() + "'");
    torch::nn::AnyModule model = std::move(built).value();
    auto device_name = compute_device_for(config.accelerator);
    if (!device_name) return device_name.status();
    const bool on_gpu = device_name.value() != "cpu";
    const torch::Device device = on_gpu ? torch::Device(torch::kCUDA) : torch::Device(torch::kCPU);
    model.ptr()->to(device);
    model.ptr()->train();
    torch::optim::SGD optimizer(model.ptr()->parameters(), torch::optim::SGDOptions(0.01).momentum(0.9));
    DatasetBatchBuilder builder(data, config.seed);
    Loader loader(builder, config.batch_size, config.workers, config.prefetch, config.seed, config.max_minibatches);
    std::unique_ptr<ComputeClock> compute_clock;
#if JETSWEEP_WITH_CUDA
    PinnedStaging staging;
    if (on_gpu) compute_clock = std::make_unique<CudaClock>();
#endif
    if (!compute_clock) compute_clock = std::make_unique<CpuClock>();

    auto to_device = [&](void* src, torch::IntArrayRef sizes, torch::ScalarType type) -> torch::Tensor {
#if JETSWEEP_WITH_CUDA
      if (on_gpu) return staging.to_device(src, sizes, type, device);
#endif
      return torch::from_blob(src, sizes, type);
    };

    std::vector<Timed> done;
    for (int64_t epoch = 0; epoch < config.epochs; ++epoch) {
      if (cancel.load()) return Status(Code::kCancelled, "run cancelled before epoch " + std::to_string(epoch));
      observer.on_epoch_start(epoch);
      EpochTiming timing;
      timing.epoch = epoch;
      auto report = [&] {
        for (const Timed& t : done) {
          observer.on_minibatch(epoch, t.index, t.stall_s, t.compute_s);
          timing.stall_s += t.stall_s;
          timing.compute_s += t.compute_s;
        }
        done.clear();
      };
      const auto epoch_start = clock::now();
      loader.start_epoch(epoch);
      torch::Tensor loss_sum = torch::zeros({}, torch::TensorOptions().dtype(torch::kFloat64).device(device));
      Batch batch;
      double stall_s = 0;
      while (loader.next(batch, stall_s)) {
        if (!batch.status.is_ok())
          return batch.status.with_context("epoch " + std::to_string(epoch) + " minibatch " + std::to_string(batch.index));
        compute_clock->begin();
        torch::Tensor x, y;
        if (tokens) {
          x = to_device(batch.tokens.data(), {batch.size, shape.seq_len}, torch::kInt64);
          y = to_device(batch.labels.data(), {batch.size * shape.seq_len}, torch::kInt64);
        } else {
          x = to_device(batch.images.data(), {batch.size, shape.channels, shape.height, shape.width}, torch::kFloat32);
          y = to_device(batch.labels.data(), {batch.size}, torch::kInt64);
        }
        optimizer.zero_grad();
        auto out = model.forward(x);
        if (tokens) out = out.reshape({-1, shape.classes});
        auto loss = torch::nn::functional::cross_entropy(out, y);
        loss.backward();
        optimizer.step();
        // Accumulated on the device: no per-minibatch host synchronisation for the loss.
        loss_sum += loss.detach().to(torch::kFloat64);
        compute_clock->end(batch.index, stall_s, done);
        ++timing.minibatches;
        report();
        if (cancel.load()) return Status(Code::kCancelled, "run cancelled in epoch " + std::to_string(epoch));
      }
      compute_clock->drain(done);
      report();
      timing.start = epoch_start;
      timing.end = clock::now();
      timing.e2e_s = std::chrono::duration<double>(timing.end - timing.start).count();
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
