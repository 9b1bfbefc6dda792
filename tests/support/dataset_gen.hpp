// Writes small datasets in the real on-disk formats for tests: MNIST/Fashion-MNIST IDX (optionally
// gzip-compressed) with label-dependent brightness so a model can learn it, and CIFAR-10 binary batch
// records assembled byte by byte (independently of the agent's writer).
#pragma once

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "agent/datasets/idx.hpp"

namespace jetsweep::testing {

inline void write_idx_dataset(const std::string& dir, int64_t count, bool gz, uint32_t seed = 1) {
  std::vector<uint8_t> pixels(static_cast<size_t>(count * 28 * 28));
  std::vector<uint8_t> labels(static_cast<size_t>(count));
  uint32_t x = seed * 2654435761u + 1;
  for (int64_t i = 0; i < count; ++i) {
    const uint8_t label = static_cast<uint8_t>(i % 10);
    labels[static_cast<size_t>(i)] = label;
    for (int64_t k = 0; k < 28 * 28; ++k) {
      x = x * 1664525u + 1013904223u;
      pixels[static_cast<size_t>(i * 784 + k)] = static_cast<uint8_t>(label * 20 + (x >> 27));
    }
  }
  const std::string suffix = gz ? ".gz" : "";
  std::filesystem::create_directories(dir);
  for (const auto& s : {agent::idx::write_file(dir + "/train-images-idx3-ubyte" + suffix, {count, 28, 28}, pixels),
                        agent::idx::write_file(dir + "/train-labels-idx1-ubyte" + suffix, {count}, labels)})
    if (!s.is_ok()) throw std::runtime_error("writing the test dataset failed: " + s.to_string());
}

// One CIFAR-10 binary record: label byte, then the R, G and B planes (32x32 each). Pixel (c, y, x) of
// image i is (i * 7 + c * 50 + y + x) mod 256, so tests can predict any value.
inline uint8_t cifar_pixel(int64_t i, int64_t c, int64_t y, int64_t x) {
  return static_cast<uint8_t>((i * 7 + c * 50 + y + x) % 256);
}

inline void write_cifar_batch(const std::string& path, int64_t first_image, int64_t count) {
  std::filesystem::create_directories(std::filesystem::path(path).parent_path());
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  for (int64_t i = first_image; i < first_image + count; ++i) {
    out.put(static_cast<char>(i % 10));
    for (int64_t c = 0; c < 3; ++c)
      for (int64_t y = 0; y < 32; ++y)
        for (int64_t x = 0; x < 32; ++x) out.put(static_cast<char>(cifar_pixel(i, c, y, x)));
  }
  if (!out) throw std::runtime_error(path + ": write failed");
}

}  // namespace jetsweep::testing
