#include "agent/datasets/transforms.hpp"

#include <algorithm>
#include <cmath>
#include <vector>

namespace jetsweep::agent::transforms {

const float kImageNetMean[3] = {0.485f, 0.456f, 0.406f};
const float kImageNetStd[3] = {0.229f, 0.224f, 0.225f};

CropBox random_resized_crop_box(int64_t height, int64_t width, Rng& rng, double scale_min, double scale_max,
                                double ratio_min, double ratio_max) {
  const double area = static_cast<double>(height * width);
  std::uniform_real_distribution<double> scale(scale_min, scale_max);
  std::uniform_real_distribution<double> log_ratio(std::log(ratio_min), std::log(ratio_max));
  for (int attempt = 0; attempt < 10; ++attempt) {
    const double target_area = area * scale(rng);
    const double aspect = std::exp(log_ratio(rng));
    const auto w = static_cast<int64_t>(std::lround(std::sqrt(target_area * aspect)));
    const auto h = static_cast<int64_t>(std::lround(std::sqrt(target_area / aspect)));
    if (w > 0 && w <= width && h > 0 && h <= height) {
      const int64_t top = std::uniform_int_distribution<int64_t>(0, height - h)(rng);
      const int64_t left = std::uniform_int_distribution<int64_t>(0, width - w)(rng);
      return {top, left, h, w};
    }
  }
  const double in_ratio = static_cast<double>(width) / static_cast<double>(height);
  int64_t w = width, h = height;
  if (in_ratio < ratio_min) {
    h = static_cast<int64_t>(std::lround(static_cast<double>(w) / ratio_min));
  } else if (in_ratio > ratio_max) {
    w = static_cast<int64_t>(std::lround(static_cast<double>(h) * ratio_max));
  }
  return {(height - h) / 2, (width - w) / 2, h, w};
}

namespace {

// PIL-style resampling coefficients for one axis: output pixel o covers input [in0, in0 + in_size) scaled
// to out_size, triangle (bilinear) filter whose support grows with the downscale factor (antialiasing).
struct AxisWeights {
  std::vector<int64_t> first;   // first input index per output
  std::vector<int64_t> count;   // taps per output
  std::vector<float> weights;   // out_size * max_taps
  int64_t max_taps = 0;
};

AxisWeights axis_weights(int64_t in0, int64_t in_size, int64_t out_size) {
  AxisWeights a;
  const double scale = static_cast<double>(in_size) / static_cast<double>(out_size);
  const double filter_scale = std::max(scale, 1.0);
  const double support = 1.0 * filter_scale;  // bilinear support 1
  a.max_taps = static_cast<int64_t>(std::ceil(support)) * 2 + 1;
  a.first.resize(static_cast<size_t>(out_size));
  a.count.resize(static_cast<size_t>(out_size));
  a.weights.assign(static_cast<size_t>(out_size * a.max_taps), 0.f);
  for (int64_t o = 0; o < out_size; ++o) {
    const double center = (static_cast<double>(o) + 0.5) * scale;
    int64_t lo = std::max<int64_t>(0, static_cast<int64_t>(center - support + 0.5));
    int64_t hi = std::min<int64_t>(in_size, static_cast<int64_t>(center + support + 0.5));
    if (hi - lo > a.max_taps) hi = lo + a.max_taps;
    double total = 0;
    float* w = a.weights.data() + o * a.max_taps;
    for (int64_t i = lo; i < hi; ++i) {
      const double x = (static_cast<double>(i) - center + 0.5) / filter_scale;
      const double v = std::max(0.0, 1.0 - std::abs(x));
      w[i - lo] = static_cast<float>(v);
      total += v;
    }
    if (total > 0)
      for (int64_t i = 0; i < hi - lo; ++i) w[i] = static_cast<float>(w[i] / total);
    a.first[static_cast<size_t>(o)] = in0 + lo;
    a.count[static_cast<size_t>(o)] = hi - lo;
  }
  return a;
}

}  // namespace

void resize_normalise(const RgbImage& image, const CropBox& box, int64_t out_side, bool flip, const float mean[3],
                      const float std[3], float* out_chw) {
  const AxisWeights wx = axis_weights(box.left, box.width, out_side);
  const AxisWeights wy = axis_weights(box.top, box.height, out_side);
  // Horizontal pass over the rows the vertical pass needs: [box.top, box.top + box.height).
  const int64_t rows = box.height;
  std::vector<float> tmp(static_cast<size_t>(rows * out_side * 3));
  for (int64_t r = 0; r < rows; ++r) {
    const uint8_t* src = image.pixels.data() + (box.top + r) * image.width * 3;
    float* dst = tmp.data() + r * out_side * 3;
    for (int64_t o = 0; o < out_side; ++o) {
      const float* w = wx.weights.data() + o * wx.max_taps;
      const uint8_t* p = src + wx.first[static_cast<size_t>(o)] * 3;
      float acc[3] = {0, 0, 0};
      for (int64_t k = 0; k < wx.count[static_cast<size_t>(o)]; ++k)
        for (int c = 0; c < 3; ++c) acc[c] += w[k] * static_cast<float>(p[k * 3 + c]);
      for (int c = 0; c < 3; ++c) dst[o * 3 + c] = acc[c];
    }
  }
  const int64_t plane = out_side * out_side;
  float scale[3], shift[3];
  for (int c = 0; c < 3; ++c) {
    scale[c] = 1.0f / (255.0f * std[c]);
    shift[c] = mean[c] / std[c];
  }
  for (int64_t y = 0; y < out_side; ++y) {
    const float* w = wy.weights.data() + y * wy.max_taps;
    const int64_t r0 = wy.first[static_cast<size_t>(y)] - box.top;
    for (int64_t x = 0; x < out_side; ++x) {
      float acc[3] = {0, 0, 0};
      for (int64_t k = 0; k < wy.count[static_cast<size_t>(y)]; ++k) {
        const float* p = tmp.data() + ((r0 + k) * out_side + x) * 3;
        for (int c = 0; c < 3; ++c) acc[c] += w[k] * p[c];
      }
      const int64_t ox = flip ? out_side - 1 - x : x;
      for (int c = 0; c < 3; ++c) {
        // PIL rounds and clamps to uint8 before ToTensor.
        const float v = std::clamp(std::round(acc[c]), 0.0f, 255.0f);
        out_chw[c * plane + y * out_side + ox] = v * scale[c] - shift[c];
      }
    }
  }
}

void cutout(float* chw, int64_t channels, int64_t height, int64_t width, int64_t size, Rng& rng) {
  const int64_t cy = std::uniform_int_distribution<int64_t>(0, height - 1)(rng);
  const int64_t cx = std::uniform_int_distribution<int64_t>(0, width - 1)(rng);
  const int64_t y0 = std::clamp<int64_t>(cy - size / 2, 0, height), y1 = std::clamp<int64_t>(cy + size / 2, 0, height);
  const int64_t x0 = std::clamp<int64_t>(cx - size / 2, 0, width), x1 = std::clamp<int64_t>(cx + size / 2, 0, width);
  for (int64_t c = 0; c < channels; ++c)
    for (int64_t y = y0; y < y1; ++y) std::fill(chw + (c * height + y) * width + x0, chw + (c * height + y) * width + x1, 0.0f);
}

void harness_transform(const RgbImage& image, const HarnessOptions& options, Rng& rng, float* out_chw) {
  const CropBox box = random_resized_crop_box(image.height, image.width, rng);
  const bool flip = options.flip && std::uniform_real_distribution<double>(0, 1)(rng) < 0.5;
  resize_normalise(image, box, options.side, flip, kImageNetMean, kImageNetStd, out_chw);
  if (options.cutout > 0) cutout(out_chw, 3, options.side, options.side, options.cutout, rng);
}

}  // namespace jetsweep::agent::transforms
