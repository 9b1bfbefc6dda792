// JPEG decode/encode with libjpeg-turbo (libjpeg API), RGB 8-bit interleaved. Decoding errors (corrupt or
// truncated data, unsupported colour spaces) become Status naming the file. Pure; any thread.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "common/status.hpp"

namespace jetsweep::agent {

struct RgbImage {
  int64_t width = 0;
  int64_t height = 0;
  std::vector<uint8_t> pixels;  // height * width * 3, row-major, RGB
};

Result<RgbImage> decode_jpeg(const uint8_t* data, size_t size, const std::string& where);
// Reads the whole file (one read, as PIL does for small files) and decodes it.
Result<RgbImage> read_jpeg_file(const std::string& path);
Result<std::vector<uint8_t>> encode_jpeg(const RgbImage& image, int quality, const std::string& where);

}  // namespace jetsweep::agent
