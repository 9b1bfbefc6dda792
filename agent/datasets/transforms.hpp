// The papers' harness image pipeline for JPEG datasets, as torchvision applies it per sample:
// RandomResizedCrop(224, scale (0.08, 1), ratio (3/4, 4/3)) with bilinear antialiased resampling (PIL),
// RandomHorizontalFlip(0.5), ToTensor + Normalize(ImageNet mean/std), Cutout(16) (DeVries & Taylor 2017:
// one 16x16 square, centre uniform over the image, clipped at the borders, zeroed after normalisation).
// Every random choice comes from the caller's Rng, seeded per (seed, epoch, sample). Pure; any thread.
#pragma once

#include <cstdint>
#include <random>

#include "agent/datasets/jpeg_codec.hpp"

namespace jetsweep::agent::transforms {

using Rng = std::mt19937_64;

struct CropBox {
  int64_t top = 0, left = 0, height = 0, width = 0;
};

// torchvision RandomResizedCrop.get_params (10 attempts, then the centre-crop fallback).
CropBox random_resized_crop_box(int64_t height, int64_t width, Rng& rng, double scale_min = 0.08, double scale_max = 1.0,
                                double ratio_min = 3.0 / 4.0, double ratio_max = 4.0 / 3.0);

// Resamples `box` of `image` to out_side x out_side with PIL's bilinear filter (support widened when
// downscaling), optionally mirrored, and writes normalised CHW floats: (v/255 - mean[c]) / std[c].
void resize_normalise(const RgbImage& image, const CropBox& box, int64_t out_side, bool flip, const float mean[3],
                      const float std[3], float* out_chw);

// Zeroes one size x size square (all channels) centred at a uniformly drawn pixel, clipped at the borders.
void cutout(float* chw, int64_t channels, int64_t height, int64_t width, int64_t size, Rng& rng);

// The whole harness pipeline for one decoded image.
struct HarnessOptions {
  int64_t side = 224;
  int64_t cutout = 16;   // 0 = no cutout
  bool flip = true;
};
void harness_transform(const RgbImage& image, const HarnessOptions& options, Rng& rng, float* out_chw);

extern const float kImageNetMean[3];
extern const float kImageNetStd[3];

}  // namespace jetsweep::agent::transforms
