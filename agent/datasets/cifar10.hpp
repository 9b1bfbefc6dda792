// CIFAR-10 binary version (cifar-10-binary.tar.gz): data_batch_1.bin .. data_batch_5.bin, each a sequence of
// 3073-byte records (1 label byte 0-9, then 1024 R, 1024 G, 1024 B bytes of a 32x32 image, row-major).
// Pure functions; any thread.
#pragma once

#include <string>
#include <vector>

#include "agent/datasets/image_dataset.hpp"

namespace jetsweep::agent::cifar10 {

constexpr int64_t kSide = 32;
constexpr int64_t kRecordBytes = 1 + 3 * kSide * kSide;

// Finds the batch files under `root` (or root/cifar-10-batches-bin) and loads them into memory with the
// usual per-channel normalisation. Errors name the file (and record for bad labels).
Result<ImageDataset> load_training_set(const std::string& root);
// Parses the records of one batch file's bytes, appending to `into`.
Status parse_batch(const std::vector<uint8_t>& bytes, const std::string& where, ImageDataset& into);
// Writes records (labels.size() images of 3x32x32 planes) in the binary format (make-data and tests).
Status write_batch(const std::string& path, const std::vector<uint8_t>& labels, const std::vector<uint8_t>& planes);

}  // namespace jetsweep::agent::cifar10
