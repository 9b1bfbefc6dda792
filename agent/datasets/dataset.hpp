// The Dataset abstraction every reader implements, and Batch, the unit the loader delivers. A Dataset
// is immutable once opened and its fetch() is safe to call from any number of loader threads at once.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <type_traits>
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

// Where minibatch memory comes from: ordinary memory, or page-locked memory when the run trains on a GPU, so
// loader workers build minibatches straight into memory the copy engine reads (no copy on the training
// thread). Thread-safe: loader workers allocate, the training thread releases.
class HostMemory {
 public:
  virtual ~HostMemory() = default;
  // At least `bytes`, aligned to kHostAlign; throws std::bad_alloc when it cannot.
  virtual void* allocate(size_t bytes) = 0;
  virtual void release(void* block, size_t bytes) noexcept = 0;
  static constexpr size_t kHostAlign = 64;
};
// Ordinary (pageable) memory.
HostMemory& pageable_host_memory();

// A typed window into a Batch's block (not owning).
template <class T>
class BufferView {
 public:
  BufferView() = default;
  BufferView(T* data, size_t size) : data_(data), size_(size) {}
  T* data() const { return data_; }
  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  T* begin() const { return data_; }
  T* end() const { return data_ + size_; }
  T& operator[](size_t i) const { return data_[i]; }
  std::vector<std::remove_const_t<T>> to_vector() const { return {begin(), end()}; }

 private:
  T* data_ = nullptr;
  size_t size_ = 0;
};

// One minibatch: its inputs (x: images or tokens) and labels (y) in one host block, so a minibatch takes one
// staging slot and one host-to-device copy. Move-only; the block goes back to its HostMemory when the Batch
// is destroyed or reallocated.
class Batch {
 public:
  Batch() = default;
  ~Batch() { free_block(); }
  Batch(Batch&& o) noexcept { *this = std::move(o); }
  Batch& operator=(Batch&& o) noexcept;
  Batch(const Batch&) = delete;
  Batch& operator=(const Batch&) = delete;

  // Sizes the block for n samples of `shape` (x first, y at an aligned offset), reusing it when it is large
  // enough and comes from the same memory; sets `size` and clears `status`.
  void allocate(const SampleShape& shape, int64_t n, HostMemory& memory = pageable_host_memory());

  int64_t index = -1;            // position in the epoch
  int64_t size = 0;              // samples
  BufferView<float> images;      // images: size * input_elems, preprocessed (normalised, augmented); else empty
  BufferView<int64_t> tokens;    // token sequences: size * seq_len ids; else empty
  BufferView<int64_t> labels;    // size * label_elems
  Status status;                 // not ok when a sample could not be fetched (names the file)

  // The whole block (x then y), for one host-to-device copy, and where y starts in it.
  const void* block() const { return block_; }
  size_t used_bytes() const { return used_bytes_; }
  size_t labels_offset() const { return labels_offset_; }
  size_t inputs_bytes() const { return images.empty() ? tokens.size() * sizeof(int64_t) : images.size() * sizeof(float); }

 private:
  void free_block() noexcept;
  HostMemory* memory_ = nullptr;
  void* block_ = nullptr;
  size_t capacity_ = 0;
  size_t used_bytes_ = 0;
  size_t labels_offset_ = 0;
};

class Dataset {
 public:
  virtual ~Dataset() = default;
  virtual const std::string& name() const = 0;
  virtual int64_t size() const = 0;
  virtual SampleShape shape() const = 0;
  // The files the samples are read from (page-cache residency and IO accounting).
  virtual const std::vector<std::string>& files() const = 0;
  // Files besides files() that decide what is trained on without being read per sample (GLD-23k's CSV of image
  // classes); with files(), what the data's fingerprint covers (fingerprint.hpp).
  virtual std::vector<std::string> label_files() const { return {}; }
  // Fetches and preprocesses sample `id` into slot `slot` of `out` (buffers already sized for the batch).
  // `augment_seed` fixes every random choice of the augmentation, so the result depends only on
  // (seed, epoch, sample) and never on which loader thread runs it.
  virtual Status fetch(int64_t id, uint64_t augment_seed, Batch& out, int64_t slot) const = 0;
};

// The sample shape of a dataset whose shape does not depend on its files, as its reader produces it: mnist and
// fashion-mnist 1x28x28 (10 classes), cifar10 3x32x32 (10), gld23k 3x224x224 (the GLD-23k's 203 classes). Nothing
// for imagefolder and text: their classes and vocabulary come from the data.
std::optional<SampleShape> standard_shape(const std::string& dataset);

// Opens the training split of a dataset by name (see known_datasets()) from its root directory.
Result<std::unique_ptr<Dataset>> open_training_set(const std::string& dataset, const std::string& root);

// Mixes (seed, epoch, sample) into one augmentation seed (splitmix64 steps).
uint64_t augment_seed(uint64_t seed, int64_t epoch, int64_t sample);

}  // namespace jetsweep::agent
