// Moving minibatches to the device a run trains on, and that device's timeline (compute_timing.hpp): the
// host (the CPU: tensors are views of the batch's block) or, when LibTorch has CUDA, the GPU (pinned
// blocks built by the loader workers, one copy per minibatch on a copy stream, pooled blocking-sync events).
// Includes torch headers: only the training code includes it. A DeviceFeed belongs to one training thread.
#pragma once

#include <torch/torch.h>

#include <memory>
#include <optional>

#include "agent/compute_timing.hpp"
#include "agent/datasets/dataset.hpp"

namespace jetsweep::agent {

class DeviceFeed {
 public:
  struct Tensors {
    torch::Tensor x;
    torch::Tensor y;
    std::optional<CopySpan> copy;   // the copy's markers on the copy lane; none on the CPU
  };
  virtual ~DeviceFeed() = default;
  virtual DeviceTimeline& timeline() = 0;
  // Where the loader builds minibatches (page-locked on the GPU).
  virtual HostMemory& host_memory() = 0;
  // Queues `batch` for the compute lane and keeps its block alive until the copy has read it. x has
  // x_shape/x_type, y int64 of y_shape; work queued on the compute lane after this sees them.
  virtual Tensors feed(Batch&& batch, torch::IntArrayRef x_shape, torch::ScalarType x_type,
                       torch::IntArrayRef y_shape) = 0;
};

// The CPU: no copy; x and y are views of the current batch's block (kept until the next feed).
std::unique_ptr<DeviceFeed> make_host_feed();
// GPU 0 when this agent was built with CUDA (JETSWEEP_WITH_CUDA); nullptr otherwise.
std::unique_ptr<DeviceFeed> make_cuda_feed();

}  // namespace jetsweep::agent
