#include "agent/datasets/dataset.hpp"

#include <algorithm>
#include <new>
#include <random>

#include "agent/datasets/cifar10.hpp"
#include "agent/datasets/image_dataset.hpp"
#include "agent/datasets/jpeg_folder.hpp"
#include "agent/datasets/text_corpus.hpp"

namespace jetsweep::agent {

namespace {
uint64_t splitmix64(uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}
}  // namespace

namespace {
// operator new with the host alignment: what std::vector gave the batches before.
class PageableHostMemory final : public HostMemory {
 public:
  void* allocate(size_t bytes) override { return ::operator new(bytes, std::align_val_t(kHostAlign)); }
  void release(void* block, size_t) noexcept override { ::operator delete(block, std::align_val_t(kHostAlign)); }
};

size_t round_up(size_t n, size_t to) { return (n + to - 1) / to * to; }
}  // namespace

HostMemory& pageable_host_memory() {
  static PageableHostMemory memory;
  return memory;
}

Batch& Batch::operator=(Batch&& o) noexcept {
  if (this == &o) return *this;
  free_block();
  index = o.index;
  size = o.size;
  images = o.images;
  tokens = o.tokens;
  labels = o.labels;
  status = std::move(o.status);
  memory_ = o.memory_;
  block_ = o.block_;
  capacity_ = o.capacity_;
  used_bytes_ = o.used_bytes_;
  labels_offset_ = o.labels_offset_;
  o.memory_ = nullptr;
  o.block_ = nullptr;
  o.capacity_ = o.used_bytes_ = o.labels_offset_ = 0;
  o.images = {};
  o.tokens = {};
  o.labels = {};
  return *this;
}

void Batch::free_block() noexcept {
  if (block_ != nullptr) memory_->release(block_, capacity_);
  block_ = nullptr;
  memory_ = nullptr;
  capacity_ = 0;
}

void Batch::allocate(const SampleShape& shape, int64_t n, HostMemory& memory) {
  const bool image = shape.kind == SampleShape::Kind::kImage;
  const size_t inputs = static_cast<size_t>(n * shape.input_elems());
  const size_t label_count = static_cast<size_t>(n * shape.label_elems());
  const size_t input_bytes = inputs * (image ? sizeof(float) : sizeof(int64_t));
  labels_offset_ = round_up(input_bytes, HostMemory::kHostAlign);
  used_bytes_ = labels_offset_ + label_count * sizeof(int64_t);
  if (block_ == nullptr || memory_ != &memory || capacity_ < used_bytes_) {
    free_block();
    const size_t bytes = std::max(round_up(used_bytes_, HostMemory::kHostAlign), HostMemory::kHostAlign);
    block_ = memory.allocate(bytes);
    memory_ = &memory;
    capacity_ = bytes;
  }
  auto* base = static_cast<unsigned char*>(block_);
  images = image ? BufferView<float>(reinterpret_cast<float*>(base), inputs) : BufferView<float>();
  tokens = image ? BufferView<int64_t>() : BufferView<int64_t>(reinterpret_cast<int64_t*>(base), inputs);
  labels = BufferView<int64_t>(reinterpret_cast<int64_t*>(base + labels_offset_), label_count);
  size = n;
  status = Status::ok();
}

uint64_t augment_seed(uint64_t seed, int64_t epoch, int64_t sample) {
  return splitmix64(splitmix64(splitmix64(seed) ^ static_cast<uint64_t>(epoch)) ^ static_cast<uint64_t>(sample));
}

Status InMemoryImageDataset::fetch(int64_t id, uint64_t augment_seed, Batch& out, int64_t slot) const {
  const int64_t c_n = data_.channels, h = data_.rows, w = data_.cols;
  const uint8_t* src = data_.pixels.data() + id * data_.sample_bytes();
  float* dst = out.images.data() + slot * data_.sample_bytes();
  int64_t dy = 0, dx = 0;
  bool flip = false;
  if (augment_.crop_padding > 0 || augment_.horizontal_flip) {
    std::mt19937_64 rng(augment_seed);
    if (augment_.crop_padding > 0) {
      // RandomCrop(side, padding=p): offset of the crop window in the zero-padded image, minus p.
      std::uniform_int_distribution<int64_t> off(0, 2 * augment_.crop_padding);
      dy = off(rng) - augment_.crop_padding;
      dx = off(rng) - augment_.crop_padding;
    }
    if (augment_.horizontal_flip) flip = std::uniform_real_distribution<double>(0, 1)(rng) < 0.5;
  }
  for (int64_t c = 0; c < c_n; ++c) {
    const float scale = 1.0f / (255.0f * data_.std_of(c));
    const float shift = data_.mean_of(c) / data_.std_of(c);
    for (int64_t y = 0; y < h; ++y) {
      const int64_t sy = y + dy;
      for (int64_t x = 0; x < w; ++x) {
        // Crop first, then flip the cropped window (torchvision's order).
        const int64_t sx = (flip ? w - 1 - x : x) + dx;
        const bool inside = sy >= 0 && sy < h && sx >= 0 && sx < w;
        const float v = inside ? static_cast<float>(src[(c * h + sy) * w + sx]) : 0.0f;
        dst[(c * h + y) * w + x] = v * scale - shift;
      }
    }
  }
  out.labels[static_cast<size_t>(slot)] = data_.labels[static_cast<size_t>(id)];
  return Status::ok();
}

std::optional<SampleShape> standard_shape(const std::string& dataset) {
  using Kind = SampleShape::Kind;
  if (dataset == "mnist" || dataset == "fashion-mnist") return SampleShape{Kind::kImage, 1, 28, 28, 0, 10};
  if (dataset == "cifar10") return SampleShape{Kind::kImage, 3, 32, 32, 0, 10};
  if (dataset == "gld23k") return SampleShape{Kind::kImage, 3, 224, 224, 0, 203};
  return std::nullopt;
}

Result<std::unique_ptr<Dataset>> open_training_set(const std::string& dataset, const std::string& root) {
  if (dataset == "mnist" || dataset == "fashion-mnist") {
    // The harness: ToTensor + Normalize, no augmentation.
    JS_ASSIGN_OR_RETURN(auto d, load_training_set(dataset, root));
    return std::unique_ptr<Dataset>(new InMemoryImageDataset(std::move(d), InMemoryAugment{}));
  }
  if (dataset == "cifar10") {
    // The usual CIFAR-10 training pipeline: RandomCrop(32, padding=4), RandomHorizontalFlip, Normalize.
    JS_ASSIGN_OR_RETURN(auto d, cifar10::load_training_set(root));
    return std::unique_ptr<Dataset>(new InMemoryImageDataset(std::move(d), InMemoryAugment{4, true}));
  }
  if (dataset == "gld23k") {
    JS_ASSIGN_OR_RETURN(auto d, JpegFolderDataset::open_gld(root, dataset));
    return std::unique_ptr<Dataset>(std::move(d));
  }
  if (dataset == "imagefolder") {
    JS_ASSIGN_OR_RETURN(auto d, JpegFolderDataset::open_class_folders(root, dataset));
    return std::unique_ptr<Dataset>(std::move(d));
  }
  if (dataset == "text") {
    JS_ASSIGN_OR_RETURN(auto d, TextCorpusDataset::open(root, TextCorpusDataset::kSeqLen, dataset));
    return std::unique_ptr<Dataset>(std::move(d));
  }
  return invalid_argument("dataset '" + dataset + "' has no reader in this agent (known: mnist, fashion-mnist, cifar10, gld23k, imagefolder, text)");
}

}  // namespace jetsweep::agent
