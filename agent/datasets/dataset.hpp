// The Dataset abstraction every reader implements, and Batch, the unit the loader delivers. A Dataset
// is immutable once opened and its fetch() is safe to call from any number of loader threads at once.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "common/status.hpp"

namespace jetsweep::agent {

// Shape of one prepared sample: an image [channels, height, width] of floats with one label, or a
// token sequence of seq_len ids with seq_len next-token labels (classes = vocabulary size).
struct SampleShape {
  enum class Kind { kImage, kTokens } kind = Kind::kImage;
  int64_t channels = 1;
  int64_t height = 0;
  int64_t width = 0;
  int64_t seq_len = 0;
  int64_t classes = 10;

  int64_t input_elems() const { return kind == Kind::kImage ? channels * height * width : seq_len; }
  int64_t label_elems() const { return kind == Kind::kImage ? 1 : seq_len; }
};

struct Batch {
  int64_t index = -1;            // position in the epoch
  int64_t size = 0;              // samples
  std::vector<float> images;     // images: size * input_elems, preprocessed (normalised, augmented)
  std::vector<int64_t> tokens;   // token sequences: size * seq_len ids
  std::vector<int64_t> labels;   // size * label_elems
  Status status;                 // not ok when a sample could not be fetched (names the file)
};

class Dataset {
 public:
  virtual ~Dataset() = default;
  virtual const std::string& name() const = 0;
  virtual int64_t size() const = 0;
  virtual SampleShape shape() const = 0;
  // The files the samples are read from (page-cache residency and IO accounting).
  virtual const std::vector<std::string>& files() const = 0;
  // Fetches and preprocesses sample `id` into slot `slot` of `out` (buffers already sized for the batch).
  // `augment_seed` fixes every random choice of the augmentation, so the result depends only on
  // (seed, epoch, sample) and never on which loader thread runs it.
  virtual Status fetch(int64_t id, uint64_t augment_seed, Batch& out, int64_t slot) const = 0;
};

// Opens the training split of a dataset by name (see known_datasets()) from its root directory.
Result<std::unique_ptr<Dataset>> open_training_set(const std::string& dataset, const std::string& root);

// Mixes (seed, epoch, sample) into one augmentation seed (splitmix64 steps).
uint64_t augment_seed(uint64_t seed, int64_t epoch, int64_t sample);

}  // namespace jetsweep::agent
