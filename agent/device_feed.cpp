// The host feed, and everything CUDA-specific in the agent (compiled in only with JETSWEEP_WITH_CUDA; CI
// compiles it against LibTorch's real c10/ATen CUDA headers and a stub of the CUDA runtime API,
// tests/cuda_stub, because no CUDA LibTorch can be installed there).
#include "agent/device_feed.hpp"

#include <deque>
#include <map>
#include <mutex>
#include <new>
#include <vector>

#if JETSWEEP_WITH_CUDA
#include <ATen/detail/CUDAHooksInterface.h>
#include <c10/cuda/CUDAException.h>
#include <c10/cuda/CUDAGuard.h>
#include <c10/cuda/CUDAStream.h>
#include <cuda_runtime_api.h>
#include <torch/cuda.h>
#endif

#include "agent/trainer.hpp"

namespace jetsweep::agent {

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
  cudaDeviceProp prop{};
  if (cudaGetDeviceProperties(&prop, 0) != cudaSuccess) return "GPU 0";
  return std::string(prop.name);
#else
  return "";
#endif
}

std::string cuda_versions() {
#if JETSWEEP_WITH_CUDA
  int runtime = 0;
  if (cudaRuntimeGetVersion(&runtime) != cudaSuccess) runtime = 0;
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

// x and y as views of the batch's block; the batch is kept until the next minibatch replaces it.
class HostFeed final : public DeviceFeed {
 public:
  DeviceTimeline& timeline() override { return timeline_; }
  HostMemory& host_memory() override { return pageable_host_memory(); }
  Tensors feed(Batch&& batch, torch::IntArrayRef x_shape, torch::ScalarType x_type,
               torch::IntArrayRef y_shape) override {
    current_ = std::move(batch);
    auto* base = static_cast<unsigned char*>(const_cast<void*>(current_.block()));
    Tensors t;
    t.x = torch::from_blob(base, x_shape, x_type);
    t.y = torch::from_blob(base + current_.labels_offset(), y_shape, torch::kInt64);
    return t;
  }

 private:
  HostTimeline timeline_;
  Batch current_;
};

#if JETSWEEP_WITH_CUDA
// Pooled CUDA events with cudaEventBlockingSync (a wait sleeps instead of spinning a core the loader
// needs on a 4-core board), recorded on the compute stream (the current one) or the copy stream.
class CudaTimeline final : public DeviceTimeline {
 public:
  CudaTimeline(c10::cuda::CUDAStream compute, c10::cuda::CUDAStream copy) : compute_(compute), copy_(copy) {}
  ~CudaTimeline() override {
    for (cudaEvent_t e : events_) cudaEventDestroy(e);
  }
  CudaTimeline(const CudaTimeline&) = delete;
  CudaTimeline& operator=(const CudaTimeline&) = delete;

  Marker mark(Lane lane) override {
    Marker m;
    if (!free_.empty()) {
      m = free_.back();
      free_.pop_back();
    } else {
      cudaEvent_t e = nullptr;
      C10_CUDA_CHECK(cudaEventCreateWithFlags(&e, cudaEventBlockingSync));
      events_.push_back(e);
      m = events_.size() - 1;
    }
    C10_CUDA_CHECK(cudaEventRecord(events_[m], lane == Lane::kCompute ? compute_.stream() : copy_.stream()));
    return m;
  }
  double elapsed_s(Marker from, Marker to) override {
    C10_CUDA_CHECK(cudaEventSynchronize(events_.at(from)));
    C10_CUDA_CHECK(cudaEventSynchronize(events_.at(to)));
    float ms = 0;
    C10_CUDA_CHECK(cudaEventElapsedTime(&ms, events_[from], events_[to]));
    return static_cast<double>(ms) / 1000.0;
  }
  void wait(Marker m) override { C10_CUDA_CHECK(cudaEventSynchronize(events_.at(m))); }
  bool happened(Marker m) {
    const cudaError_t e = cudaEventQuery(events_.at(m));
    if (e == cudaErrorNotReady) {
      (void)cudaGetLastError();   // not an error: clear it
      return false;
    }
    C10_CUDA_CHECK(e);
    return true;
  }
  // Work queued on the compute stream after this call starts only once `m` (on the copy stream) has happened.
  void compute_waits_for(Marker m) { C10_CUDA_CHECK(cudaStreamWaitEvent(compute_.stream(), events_.at(m), 0)); }
  void release(Marker m) override { free_.push_back(m); }

 private:
  c10::cuda::CUDAStream compute_;
  c10::cuda::CUDAStream copy_;
  std::vector<cudaEvent_t> events_;
  std::vector<Marker> free_;
};

// Page-locked blocks, pooled by size (minibatches repeat their size): loader workers allocate, the
// training thread releases once the copy has read the block. Thread-safe.
class PinnedHostMemory final : public HostMemory {
 public:
  ~PinnedHostMemory() override {
    for (auto& [bytes, block] : free_) cudaFreeHost(block);
  }
  void* allocate(size_t bytes) override {
    {
      std::lock_guard lock(mu_);
      if (auto it = free_.find(bytes); it != free_.end()) {
        void* block = it->second;
        free_.erase(it);
        return block;
      }
    }
    void* block = nullptr;
    if (cudaHostAlloc(&block, bytes, cudaHostAllocDefault) != cudaSuccess) {
      (void)cudaGetLastError();
      throw std::bad_alloc();
    }
    return block;   // cudaHostAlloc aligns to at least the page size (>= kHostAlign)
  }
  void release(void* block, size_t bytes) noexcept override {
    std::lock_guard lock(mu_);
    free_.emplace(bytes, block);
  }

 private:
  std::mutex mu_;
  std::multimap<size_t, void*> free_;
};

// One host-to-device copy per minibatch (x and y in one block) on a copy stream, so the copy of minibatch
// i + 1 overlaps the compute of minibatch i; the compute stream waits for the copy's end event. The device
// buffer is allocated on the copy stream and recorded on the compute stream, so the caching allocator does
// not reuse it until the compute that reads it has finished.
class CudaFeed final : public DeviceFeed {
 public:
  static constexpr size_t kMaxInFlight = MinibatchClock::kLag + 2;
  CudaFeed()
      : compute_(c10::cuda::getCurrentCUDAStream()),
        copy_(c10::cuda::getStreamFromPool()),
        timeline_(compute_, copy_) {}
  ~CudaFeed() override {
    for (auto& f : in_flight_) timeline_.wait(f.copied);   // blocks go back to the pool only once read
  }
  DeviceTimeline& timeline() override { return timeline_; }
  HostMemory& host_memory() override { return memory_; }
  Tensors feed(Batch&& batch, torch::IntArrayRef x_shape, torch::ScalarType x_type,
               torch::IntArrayRef y_shape) override {
    retire();
    const auto bytes = static_cast<int64_t>(batch.used_bytes());
    Tensors t;
    CopySpan span;
    torch::Tensor device_block;
    {
      c10::cuda::CUDAStreamGuard on_copy(copy_);
      device_block = torch::empty({bytes}, torch::TensorOptions().dtype(torch::kUInt8).device(torch::kCUDA));
      span.begin = timeline_.mark(DeviceTimeline::Lane::kCopy);
      C10_CUDA_CHECK(cudaMemcpyAsync(device_block.data_ptr(), batch.block(), static_cast<size_t>(bytes),
                                     cudaMemcpyHostToDevice, copy_.stream()));
      span.end = timeline_.mark(DeviceTimeline::Lane::kCopy);
    }
    const DeviceTimeline::Marker copied = timeline_.mark(DeviceTimeline::Lane::kCopy);   // this feed's own
    timeline_.compute_waits_for(span.end);
    device_block.record_stream(compute_);
    const auto x_bytes = static_cast<int64_t>(batch.inputs_bytes());
    const auto y_offset = static_cast<int64_t>(batch.labels_offset());
    t.x = device_block.narrow(0, 0, x_bytes).view(x_type).view(x_shape);
    t.y = device_block.narrow(0, y_offset, bytes - y_offset).view(torch::kInt64).view(y_shape);
    t.copy = span;
    in_flight_.push_back(InFlight{std::move(batch), copied});
    return t;
  }

 private:
  struct InFlight {
    Batch batch;
    DeviceTimeline::Marker copied;
  };
  // Returns the blocks whose copy has finished to the pool; waits for the oldest when too many are out.
  void retire() {
    while (!in_flight_.empty() &&
           (in_flight_.size() >= kMaxInFlight || timeline_.happened(in_flight_.front().copied))) {
      timeline_.wait(in_flight_.front().copied);
      timeline_.release(in_flight_.front().copied);
      in_flight_.pop_front();
    }
  }

  c10::cuda::CUDAStream compute_;
  c10::cuda::CUDAStream copy_;
  CudaTimeline timeline_;
  PinnedHostMemory memory_;          // declared before in_flight_: outlives the batches
  std::deque<InFlight> in_flight_;
};
#endif

}  // namespace

std::unique_ptr<DeviceFeed> make_host_feed() { return std::make_unique<HostFeed>(); }

std::unique_ptr<DeviceFeed> make_cuda_feed() {
#if JETSWEEP_WITH_CUDA
  return std::make_unique<CudaFeed>();
#else
  return nullptr;
#endif
}

}  // namespace jetsweep::agent
