// An in-memory labelled image dataset (uint8 pixels, row-major NCHW with C=1) plus its normalisation.
// Immutable after loading; safe to read from any number of threads.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "common/status.hpp"

namespace jetsweep::agent {

struct ImageDataset {
  std::string name;
  int64_t count = 0;
  int64_t channels = 1;
  int64_t rows = 0;
  int64_t cols = 0;
  std::vector<uint8_t> pixels;   // count * channels * rows * cols
  std::vector<uint8_t> labels;   // count
  float mean = 0.f;              // normalisation: (x/255 - mean) / std
  float std = 1.f;
  std::vector<std::string> files;  // files it was read from (for page-cache and IO accounting)

  int64_t sample_bytes() const { return channels * rows * cols; }
};

// Loads the training split of a dataset by name from its root directory (see known_datasets()).
Result<ImageDataset> load_training_set(const std::string& dataset, const std::string& root);

}  // namespace jetsweep::agent
