// Writes a small dataset in the real MNIST/Fashion-MNIST IDX format (optionally gzip-compressed), with
// deterministic pixels whose mean brightness depends on the label so a model can learn it.
#pragma once

#include <cstdint>
#include <filesystem>
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

}  // namespace jetsweep::testing
