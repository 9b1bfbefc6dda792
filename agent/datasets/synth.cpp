#include "agent/datasets/synth.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <random>
#include <vector>

#include "agent/datasets/cifar10.hpp"
#include "agent/datasets/idx.hpp"
#include "agent/datasets/jpeg_codec.hpp"

namespace jetsweep::agent::synth {
namespace fs = std::filesystem;

std::string formats() { return "mnist, cifar10, jpeg-gld, jpeg-folder, text"; }

namespace {

using Rng = std::mt19937_64;

int64_t file_size(const std::string& p) {
  std::error_code ec;
  auto n = fs::file_size(p, ec);
  return ec ? 0 : static_cast<int64_t>(n);
}

// A label-dependent picture: colour and gradient direction from the label, plus noise.
RgbImage picture(int64_t label, int64_t classes, int64_t w, int64_t h, Rng& rng) {
  RgbImage img;
  img.width = w;
  img.height = h;
  img.pixels.resize(static_cast<size_t>(w * h * 3));
  const double hue = 6.283185307 * static_cast<double>(label) / static_cast<double>(std::max<int64_t>(classes, 1));
  const double base[3] = {128 + 90 * std::cos(hue), 128 + 90 * std::cos(hue + 2.094), 128 + 90 * std::cos(hue + 4.189)};
  const double angle = hue * 3;
  std::uniform_int_distribution<int> noise(-12, 12);
  for (int64_t y = 0; y < h; ++y)
    for (int64_t x = 0; x < w; ++x) {
      const double g = 40 * std::sin((std::cos(angle) * x + std::sin(angle) * y) * 0.05);
      for (int c = 0; c < 3; ++c)
        img.pixels[static_cast<size_t>((y * w + x) * 3 + c)] =
            static_cast<uint8_t>(std::clamp(base[c] + g + noise(rng), 0.0, 255.0));
    }
  return img;
}

Status write_bytes(const std::string& path, const std::vector<uint8_t>& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (!out) return io_error(path + ": cannot create");
  out.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
  out.flush();
  if (!out) return io_error(path + ": write failed");
  return Status::ok();
}

Result<Summary> write_mnist(const Options& o, Rng& rng) {
  const int64_t n = o.samples, classes = 10;
  std::vector<uint8_t> pixels(static_cast<size_t>(n * 784)), labels(static_cast<size_t>(n));
  std::uniform_int_distribution<int> noise(0, 31);
  for (int64_t i = 0; i < n; ++i) {
    const auto label = static_cast<uint8_t>(i % classes);
    labels[static_cast<size_t>(i)] = label;
    for (int64_t k = 0; k < 784; ++k) pixels[static_cast<size_t>(i * 784 + k)] = static_cast<uint8_t>(label * 20 + noise(rng));
  }
  const std::string images = o.out_dir + "/train-images-idx3-ubyte", label_file = o.out_dir + "/train-labels-idx1-ubyte";
  JS_RETURN_IF_ERROR(idx::write_file(images, {n, 28, 28}, pixels));
  JS_RETURN_IF_ERROR(idx::write_file(label_file, {n}, labels));
  return Summary{n, classes, 2, file_size(images) + file_size(label_file), "mnist"};
}

Result<Summary> write_cifar(const Options& o, Rng& rng) {
  const int64_t n = o.samples, classes = 10, per_file = 10000;
  Summary s{n, classes, 0, 0, "cifar10"};
  for (int64_t first = 0, file = 1; first < n; first += per_file, ++file) {
    const int64_t count = std::min(per_file, n - first);
    std::vector<uint8_t> labels(static_cast<size_t>(count)), planes;
    planes.reserve(static_cast<size_t>(count * 3072));
    for (int64_t i = 0; i < count; ++i) {
      const int64_t label = (first + i) % classes;
      labels[static_cast<size_t>(i)] = static_cast<uint8_t>(label);
      RgbImage img = picture(label, classes, 32, 32, rng);
      for (int c = 0; c < 3; ++c)
        for (int64_t p = 0; p < 1024; ++p) planes.push_back(img.pixels[static_cast<size_t>(p * 3 + c)]);
    }
    if (file > 5) return invalid_argument("cifar10: at most 50000 samples fit the 5 training batch files");
    const std::string path = o.out_dir + "/data_batch_" + std::to_string(file) + ".bin";
    JS_RETURN_IF_ERROR(cifar10::write_batch(path, labels, planes));
    ++s.files;
    s.bytes += file_size(path);
  }
  return s;
}

Status write_jpeg(const std::string& path, int64_t label, int64_t classes, const Options& o, Rng& rng) {
  RgbImage img = picture(label, classes, o.image_width, o.image_height, rng);
  JS_ASSIGN_OR_RETURN(auto bytes, encode_jpeg(img, o.quality, path));
  return write_bytes(path, bytes);
}

Result<Summary> write_gld(const Options& o, Rng& rng) {
  const int64_t n = o.samples, classes = o.classes > 0 ? o.classes : 203;
  fs::create_directories(o.out_dir + "/images");
  const std::string csv = o.out_dir + "/train.csv";
  std::ofstream out(csv, std::ios::trunc);
  if (!out) return io_error(csv + ": cannot create");
  out << "user_id,image_id,class\n";
  Summary s{n, classes, 1, 0, "gld23k"};
  // GLD-23k has 233 users; images are named by a hex id.
  for (int64_t i = 0; i < n; ++i) {
    const int64_t label = i % classes;
    char id[32];
    std::snprintf(id, sizeof id, "%016llx", static_cast<unsigned long long>(rng()));
    const std::string path = o.out_dir + "/images/" + id + ".jpg";
    JS_RETURN_IF_ERROR(write_jpeg(path, label, classes, o, rng));
    out << (i % 233) << ',' << id << ',' << label << '\n';
    ++s.files;
    s.bytes += file_size(path);
  }
  out.flush();
  if (!out) return io_error(csv + ": write failed");
  s.bytes += file_size(csv);
  return s;
}

Result<Summary> write_folders(const Options& o, Rng& rng) {
  const int64_t n = o.samples, classes = o.classes > 0 ? o.classes : 10;
  Summary s{n, classes, 0, 0, "imagefolder"};
  for (int64_t i = 0; i < n; ++i) {
    const int64_t label = i % classes;
    char cls[32], file[32];
    std::snprintf(cls, sizeof cls, "n%08lld", static_cast<long long>(label));
    std::snprintf(file, sizeof file, "img_%07lld.JPEG", static_cast<long long>(i));
    const std::string dir = o.out_dir + "/" + cls;
    fs::create_directories(dir);
    const std::string path = dir + "/" + file;
    JS_RETURN_IF_ERROR(write_jpeg(path, label, classes, o, rng));
    ++s.files;
    s.bytes += file_size(path);
  }
  return s;
}

// Lines of Zipf-distributed made-up words with a fixed successor for each word half of the time, so the
// next word is partly predictable (an LSTM's loss can fall).
Result<Summary> write_text(const Options& o, Rng& rng) {
  const int64_t vocab = std::max<int64_t>(o.classes > 0 ? o.classes : 2000, 2);
  const int64_t tokens = std::max<int64_t>(o.samples * 10, 64);
  std::vector<double> weights(static_cast<size_t>(vocab));
  for (int64_t r = 0; r < vocab; ++r) weights[static_cast<size_t>(r)] = 1.0 / static_cast<double>(r + 1);
  std::discrete_distribution<int64_t> zipf(weights.begin(), weights.end());
  std::bernoulli_distribution follow(0.5);
  std::uniform_int_distribution<int> line_len(5, 25);
  const std::string path = o.out_dir + "/train.txt";
  std::ofstream out(path, std::ios::trunc);
  if (!out) return io_error(path + ": cannot create");
  auto word = [](int64_t id) {
    static const char* kSyllables[] = {"ka", "lo", "mi", "ne", "ru", "sa", "to", "vi", "ze", "po", "da", "fu"};
    std::string w;
    int64_t x = id + 1;
    while (x > 0) {
      w += kSyllables[x % 12];
      x /= 12;
    }
    return w;
  };
  int64_t written = 0, prev = 0;
  while (written < tokens) {
    const int len = line_len(rng);
    for (int k = 0; k < len && written < tokens; ++k, ++written) {
      const int64_t id = follow(rng) ? (prev * 7 + 3) % vocab : zipf(rng);
      out << (k ? " " : "") << word(id);
      prev = id;
    }
    out << '\n';
  }
  out.flush();
  if (!out) return io_error(path + ": write failed");
  return Summary{tokens, vocab, 1, file_size(path), "text"};
}

}  // namespace

Result<Summary> write_dataset(const Options& o) {
  if (o.out_dir.empty()) return invalid_argument("make-data: --out DIR is required");
  if (o.samples < 1) return invalid_argument("make-data: --samples must be >= 1");
  if (o.image_width < 8 || o.image_height < 8 || o.image_width > 8192 || o.image_height > 8192)
    return invalid_argument("make-data: image size must be between 8x8 and 8192x8192");
  std::error_code ec;
  fs::create_directories(o.out_dir, ec);
  if (ec) return io_error(o.out_dir + ": cannot create: " + ec.message());
  Rng rng(o.seed * 0x9e3779b97f4a7c15ULL + 1);
  if (o.format == "mnist") return write_mnist(o, rng);
  if (o.format == "cifar10") return write_cifar(o, rng);
  if (o.format == "jpeg-gld") return write_gld(o, rng);
  if (o.format == "jpeg-folder") return write_folders(o, rng);
  if (o.format == "text") return write_text(o, rng);
  return invalid_argument("make-data: unknown --format '" + o.format + "' (known: " + formats() + ")");
}

}  // namespace jetsweep::agent::synth
