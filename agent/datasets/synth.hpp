// Synthetic datasets written in each real on-disk format (`jetsweep-agent make-data`), for machines that
// cannot fetch the real ones. Content is deterministic from the seed and label-dependent, so models can
// learn from it. Pure functions of their options; any thread (one writer per output directory).
#pragma once

#include <cstdint>
#include <string>

#include "common/status.hpp"

namespace jetsweep::agent::synth {

struct Options {
  std::string format;        // mnist | cifar10 | jpeg-gld | jpeg-folder | text
  std::string out_dir;
  int64_t samples = 1000;    // images, or (text) tokens / 10 ~ lines
  uint64_t seed = 1;
  int64_t classes = 0;       // 0 = the format's usual count (10; GLD-23k 203; folders 10)
  int64_t image_width = 320; // JPEG formats (GLD-23k images average ~120 KB)
  int64_t image_height = 240;
  int quality = 90;
};

struct Summary {
  int64_t samples = 0;
  int64_t classes = 0;
  int64_t files = 0;
  int64_t bytes = 0;
  std::string dataset;       // the RunConfig dataset name that reads it
};

Result<Summary> write_dataset(const Options& options);
// The formats write_dataset accepts, comma separated (for usage and errors).
std::string formats();

}  // namespace jetsweep::agent::synth
