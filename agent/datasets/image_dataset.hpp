// An in-memory labelled image dataset (uint8 pixels, row-major NCHW) plus its normalisation, used for the
// small datasets that the papers' harness keeps in memory (MNIST IDX, CIFAR-10 binary batches).
// Immutable after loading; safe to read from any number of threads.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "agent/datasets/dataset.hpp"
#include "common/status.hpp"

namespace jetsweep::agent {

struct ImageDataset {
  std::string name;
  int64_t count = 0;
  int64_t channels = 1;
  int64_t rows = 0;
  int64_t cols = 0;
  int64_t classes = 10;
  std::vector<uint8_t> pixels;   // count * channels * rows * cols
  std::vector<uint8_t> labels;   // count
  float mean = 0.f;              // normalisation of single-channel data: (x/255 - mean) / std
  float std = 1.f;
  std::vector<float> channel_mean;  // per-channel normalisation; when empty, mean/std for every channel
  std::vector<float> channel_std;
  std::vector<std::string> files;  // files it was read from (for page-cache and IO accounting)

  int64_t sample_bytes() const { return channels * rows * cols; }
  float mean_of(int64_t c) const { return channel_mean.empty() ? mean : channel_mean[static_cast<size_t>(c)]; }
  float std_of(int64_t c) const { return channel_std.empty() ? std : channel_std[static_cast<size_t>(c)]; }
};

// Loads the training split of MNIST / Fashion-MNIST (IDX) from its root directory.
Result<ImageDataset> load_training_set(const std::string& dataset, const std::string& root);

// Augmentation of an in-memory dataset as the harness applies it per sample.
struct InMemoryAugment {
  int64_t crop_padding = 0;   // RandomCrop(side, padding=p) with zero padding; 0 = none
  bool horizontal_flip = false;
};

// Dataset view over an ImageDataset: normalise, plus the optional augmentation. Any thread.
class InMemoryImageDataset final : public Dataset {
 public:
  InMemoryImageDataset(ImageDataset data, InMemoryAugment augment) : data_(std::move(data)), augment_(augment) {}
  const std::string& name() const override { return data_.name; }
  int64_t size() const override { return data_.count; }
  SampleShape shape() const override {
    return {SampleShape::Kind::kImage, data_.channels, data_.rows, data_.cols, 0, data_.classes};
  }
  const std::vector<std::string>& files() const override { return data_.files; }
  Status fetch(int64_t id, uint64_t augment_seed, Batch& out, int64_t slot) const override;
  const ImageDataset& data() const { return data_; }

 private:
  ImageDataset data_;
  InMemoryAugment augment_;
};

}  // namespace jetsweep::agent
