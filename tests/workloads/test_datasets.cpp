// Dataset readers on files generated in the real formats (CIFAR-10 binary, JPEG with the GLD-23k CSV
// and class-per-folder layouts, text corpus), corrupt-input errors naming the file, the harness JPEG
// transforms, and `make-data` output read back by the readers.
#include <doctest/doctest.h>

#include <array>
#include <cmath>
#include <tuple>
#include <filesystem>
#include <fstream>
#include <set>

#include "agent/config.hpp"
#include "agent/datasets/cifar10.hpp"
#include "agent/datasets/jpeg_codec.hpp"
#include "agent/datasets/jpeg_folder.hpp"
#include "agent/datasets/synth.hpp"
#include "agent/datasets/text_corpus.hpp"
#include "agent/datasets/transforms.hpp"
#include "agent/loader.hpp"
#include "support/dataset_gen.hpp"
#include "support/temp_dir.hpp"

using namespace jetsweep;
using namespace jetsweep::agent;
using jetsweep::testing::TempDir;

namespace {

Batch batch_for(const Dataset& d, int64_t n) {
  Batch b;
  b.allocate(d.shape(), n);
  return b;
}

RgbImage solid(int64_t w, int64_t h, uint8_t r, uint8_t g, uint8_t b) {
  RgbImage img{w, h, {}};
  for (int64_t i = 0; i < w * h; ++i) img.pixels.insert(img.pixels.end(), {r, g, b});
  return img;
}

void write_jpeg(const std::string& path, const RgbImage& img) {
  auto bytes = encode_jpeg(img, 95, path);
  REQUIRE(bytes.is_ok());
  std::filesystem::create_directories(std::filesystem::path(path).parent_path());
  std::ofstream(path, std::ios::binary).write(reinterpret_cast<const char*>(bytes->data()), static_cast<std::streamsize>(bytes->size()));
}

}  // namespace

TEST_CASE("CIFAR-10 binary batches: records, planes, labels and normalisation") {
  TempDir dir;
  testing::write_cifar_batch((dir / "data_batch_1.bin").string(), 0, 30);
  testing::write_cifar_batch((dir / "data_batch_2.bin").string(), 30, 12);
  auto d = open_training_set("cifar10", dir.str());
  REQUIRE_MESSAGE(d.is_ok(), d.status().to_string());
  CHECK((*d)->size() == 42);
  CHECK((*d)->files().size() == 2);
  const auto s = (*d)->shape();
  CHECK((s.channels == 3 && s.height == 32 && s.width == 32 && s.classes == 10));
  // The in-memory reader without augmentation: exact normalised values.
  auto raw = cifar10::load_training_set(dir.str());
  REQUIRE(raw.is_ok());
  InMemoryImageDataset plain(raw.value(), InMemoryAugment{});
  Batch b = batch_for(plain, 1);
  REQUIRE(plain.fetch(35, 0, b, 0).is_ok());
  CHECK(b.labels[0] == 5);
  for (auto [c, y, x] : {std::tuple{0, 0, 0}, std::tuple{1, 5, 9}, std::tuple{2, 31, 31}}) {
    const float expect = (testing::cifar_pixel(35, c, y, x) / 255.0f - raw->channel_mean[c]) / raw->channel_std[c];
    CHECK(b.images[static_cast<size_t>((c * 32 + y) * 32 + x)] == doctest::Approx(expect).epsilon(1e-5));
  }
  // The training pipeline (pad-4 crop + flip) is a pure function of the augmentation seed.
  Batch b1 = batch_for(**d, 1), b2 = batch_for(**d, 1), b3 = batch_for(**d, 1);
  REQUIRE((*d)->fetch(35, 111, b1, 0).is_ok());
  REQUIRE((*d)->fetch(35, 111, b2, 0).is_ok());
  CHECK(b1.images.to_vector() == b2.images.to_vector());
  bool differs = false;
  for (uint64_t seed = 1; seed < 20 && !differs; ++seed) {
    REQUIRE((*d)->fetch(35, seed, b3, 0).is_ok());
    differs = b3.images.to_vector() != b1.images.to_vector();
  }
  CHECK(differs);
  // The cifar-10-batches-bin subdirectory of the tarball is found too.
  TempDir nested;
  testing::write_cifar_batch((nested / "cifar-10-batches-bin/data_batch_1.bin").string(), 0, 3);
  CHECK(open_training_set("cifar10", nested.str()).is_ok());
}

TEST_CASE("corrupt CIFAR-10 input names the file (and record)") {
  TempDir dir;
  const std::string p = (dir / "data_batch_1.bin").string();
  testing::write_cifar_batch(p, 0, 2);
  std::filesystem::resize_file(p, 2 * cifar10::kRecordBytes - 5);
  auto r = open_training_set("cifar10", dir.str());
  CHECK(r.status().message() == p + ": 6141 bytes is not a whole number of 3073-byte CIFAR-10 records (truncated or not a binary batch)");
  testing::write_cifar_batch(p, 0, 3);
  {
    std::fstream f(p, std::ios::binary | std::ios::in | std::ios::out);
    f.seekp(2 * cifar10::kRecordBytes);
    f.put(static_cast<char>(42));
  }
  CHECK(open_training_set("cifar10", dir.str()).status().message() == p + ": record 2 has label 42 (CIFAR-10 labels are 0-9)");
  TempDir empty;
  CHECK(open_training_set("cifar10", empty.str()).status().code() == Code::kNotFound);
}

TEST_CASE("JPEG decode with libjpeg-turbo: round trip, corrupt and truncated files name the file") {
  TempDir dir;
  const std::string p = (dir / "a.jpg").string();
  write_jpeg(p, solid(40, 24, 200, 100, 50));
  auto img = read_jpeg_file(p);
  REQUIRE_MESSAGE(img.is_ok(), img.status().to_string());
  CHECK(img->width == 40);
  CHECK(img->height == 24);
  CHECK(std::abs(int(img->pixels[0]) - 200) <= 3);
  CHECK(std::abs(int(img->pixels[1]) - 100) <= 3);
  CHECK(std::abs(int(img->pixels[2]) - 50) <= 3);

  const std::string garbage = (dir / "b.jpg").string();
  testing::write_file(garbage, "this is not a jpeg");
  CHECK(read_jpeg_file(garbage).status().message() == garbage + ": not a JPEG file (no SOI marker)");

  const std::string truncated = (dir / "c.jpg").string();
  std::filesystem::copy_file(p, truncated);
  std::filesystem::resize_file(truncated, std::filesystem::file_size(p) / 2);
  auto t = read_jpeg_file(truncated);
  REQUIRE_FALSE(t.is_ok());
  CHECK(t.status().message().rfind(truncated + ": ", 0) == 0);

  const std::string broken = (dir / "d.jpg").string();
  testing::write_file(broken, std::string("\xFF\xD8\xFF\xE0garbage-after-the-marker", 28));
  auto b = read_jpeg_file(broken);
  REQUIRE_FALSE(b.is_ok());
  CHECK(b.status().message().rfind(broken + ": corrupt JPEG: ", 0) == 0);
  CHECK(read_jpeg_file((dir / "missing.jpg").string()).status().code() == Code::kIoError);
}

TEST_CASE("RandomResizedCrop boxes follow torchvision's scale and ratio bounds") {
  transforms::Rng rng(3);
  for (int i = 0; i < 500; ++i) {
    auto box = transforms::random_resized_crop_box(300, 400, rng);
    REQUIRE(box.height > 0);
    REQUIRE(box.width > 0);
    CHECK(box.top + box.height <= 300);
    CHECK(box.left + box.width <= 400);
    const double area = static_cast<double>(box.height * box.width) / (300.0 * 400.0);
    CHECK(area >= 0.07);
    const double ratio = static_cast<double>(box.width) / static_cast<double>(box.height);
    CHECK(ratio >= 0.74);
    CHECK(ratio <= 1.35);
  }
  // Fallback for an extreme aspect ratio: the centre crop clipped to ratio 4/3.
  transforms::Rng r2(1);
  auto box = transforms::random_resized_crop_box(10, 1000, r2);
  CHECK(box.height == 10);
  CHECK(box.width == 13);
  CHECK(box.left == (1000 - 13) / 2);
}

TEST_CASE("harness transform: 3x224x224, ImageNet normalisation, one 16x16 cutout square") {
  const RgbImage img = solid(64, 48, 124, 116, 104);  // ~ the ImageNet mean
  std::vector<float> out(3 * 224 * 224);
  transforms::Rng rng(7);
  transforms::harness_transform(img, {}, rng, out.data());
  int64_t zeros = 0;
  for (int64_t c = 0; c < 3; ++c) {
    const float expect = (std::array<float, 3>{124, 116, 104}[c] / 255.0f - transforms::kImageNetMean[c]) / transforms::kImageNetStd[c];
    for (int64_t k = 0; k < 224 * 224; ++k) {
      const float v = out[static_cast<size_t>(c * 224 * 224 + k)];
      if (v == 0.0f) ++zeros;
      else CHECK(v == doctest::Approx(expect).epsilon(1e-4).scale(1.0));
    }
  }
  // The cutout square, clipped at the border: between 8x8 and 16x16 pixels in each of 3 channels.
  CHECK(zeros >= 3 * 64);
  CHECK(zeros <= 3 * 256);
  // Same seed, same output; flip mirrors a horizontal gradient.
  std::vector<float> again(out.size());
  transforms::Rng rng2(7);
  transforms::harness_transform(img, {}, rng2, again.data());
  CHECK(again == out);
  RgbImage grad{64, 64, {}};
  for (int64_t y = 0; y < 64; ++y)
    for (int64_t x = 0; x < 64; ++x) grad.pixels.insert(grad.pixels.end(), {uint8_t(x * 4), uint8_t(x * 4), uint8_t(x * 4)});
  std::vector<float> a(3 * 32 * 32), b(3 * 32 * 32);
  transforms::resize_normalise(grad, {0, 0, 64, 64}, 32, false, transforms::kImageNetMean, transforms::kImageNetStd, a.data());
  transforms::resize_normalise(grad, {0, 0, 64, 64}, 32, true, transforms::kImageNetMean, transforms::kImageNetStd, b.data());
  CHECK(a[0] < a[31]);
  CHECK(b[0] == a[31]);
  // 2x downscale with the antialiasing triangle filter: output x averages inputs 2x-1 .. 2x+2.
  CHECK(a[5] * transforms::kImageNetStd[0] + transforms::kImageNetMean[0] == doctest::Approx(std::round((9 * 4 + 10 * 4 * 3 + 11 * 4 * 3 + 12 * 4) / 8.0) / 255.0).epsilon(1e-4));
}

TEST_CASE("GLD-23k layout: CSV mapping, images decoded and transformed per (seed, epoch, sample)") {
  TempDir dir;
  testing::write_file(dir / "train.csv", "user_id,image_id,class\n0,aa01,2\n0,bb02,0\n7,cc03,4\n");
  write_jpeg((dir / "images/aa01.jpg").string(), solid(50, 40, 250, 0, 0));
  write_jpeg((dir / "images/bb02.jpg").string(), solid(30, 60, 0, 250, 0));
  write_jpeg((dir / "images/cc03.jpg").string(), solid(80, 80, 0, 0, 250));
  auto d = open_training_set("gld23k", dir.str());
  REQUIRE_MESSAGE(d.is_ok(), d.status().to_string());
  CHECK((*d)->size() == 3);
  CHECK((*d)->shape().classes == 5);
  CHECK((*d)->shape().height == 224);
  CHECK((*d)->files().size() == 3);
  DatasetBatchBuilder builder(**d, 9);
  Batch b1, b2;
  int64_t ids[] = {2, 0};
  builder.build(1, ids, 2, pageable_host_memory(), b1);
  builder.build(1, ids, 2, pageable_host_memory(), b2);
  REQUIRE(b1.status.is_ok());
  CHECK(b1.labels.to_vector() == std::vector<int64_t>{4, 2});
  CHECK(b1.images.to_vector() == b2.images.to_vector());
  // Sample 2 is blue: its B channel is far above its R channel (the cutout zeroes the same pixels in both).
  const size_t plane = 224 * 224;
  double red = 0, blue = 0;
  for (size_t k = 0; k < plane; ++k) {
    red += b1.images[k];
    blue += b1.images[2 * plane + k];
  }
  CHECK(blue > red + plane);
}

TEST_CASE("GLD-23k layout errors name the CSV line or the file") {
  TempDir dir;
  testing::write_file(dir / "train.csv", "user,image,label\n");
  const std::string csv = (dir / "train.csv").string();
  CHECK(open_training_set("gld23k", dir.str()).status().message() == csv + ":1: header is 'user,image,label', expected 'user_id,image_id,class'");
  testing::write_file(dir / "train.csv", "user_id,image_id,class\n0,zz,1\n");
  CHECK(open_training_set("gld23k", dir.str()).status().message() ==
        csv + ":2: image " + dir.str() + "/images/zz.jpg does not exist");
  write_jpeg((dir / "images/zz.jpg").string(), solid(16, 16, 1, 2, 3));
  testing::write_file(dir / "train.csv", "user_id,image_id,class\n0,zz,x1\n");
  CHECK(open_training_set("gld23k", dir.str()).status().message() == csv + ":2: class 'x1' is not a non-negative integer");
  // A corrupt image surfaces when its minibatch is built, naming the file.
  testing::write_file(dir / "train.csv", "user_id,image_id,class\n0,zz,1\n");
  testing::write_file(dir / "images/zz.jpg", "\xFF\xD8 not really");
  auto d = open_training_set("gld23k", dir.str());
  REQUIRE(d.is_ok());
  DatasetBatchBuilder builder(**d, 1);
  Batch b;
  int64_t id = 0;
  builder.build(0, &id, 1, pageable_host_memory(), b);
  CHECK(b.status.message().find(dir.str() + "/images/zz.jpg: ") == 0);
}

TEST_CASE("class-per-folder layout: sorted classes, .jpg/.jpeg only") {
  TempDir dir;
  write_jpeg((dir / "zebra/1.jpg").string(), solid(20, 20, 9, 9, 9));
  write_jpeg((dir / "ant/2.JPEG").string(), solid(20, 20, 9, 9, 9));
  write_jpeg((dir / "ant/1.jpeg").string(), solid(20, 20, 9, 9, 9));
  testing::write_file(dir / "ant/notes.txt", "ignored");
  auto d = JpegFolderDataset::open_class_folders(dir.str());
  REQUIRE_MESSAGE(d.is_ok(), d.status().to_string());
  REQUIRE((*d)->entries().size() == 3);
  CHECK((*d)->shape().classes == 2);
  CHECK((*d)->entries()[0].path == dir.str() + "/ant/1.jpeg");
  CHECK((*d)->entries()[0].label == 0);
  CHECK((*d)->entries()[2].label == 1);
  TempDir empty;
  CHECK(open_training_set("imagefolder", empty.str()).status().message() == empty.str() + ": no class directories (expected ROOT/CLASS/*.jpg)");
}

TEST_CASE("text corpus: <eos> per line, vocabulary in first-appearance order, shifted windows") {
  auto d = TextCorpusDataset::from_text("a b c\n\nb a d\n", "t.txt", 3, "text");
  REQUIRE_MESSAGE(d.is_ok(), d.status().to_string());
  // a b c <eos> b a d <eos> -> 0 1 2 3 1 0 4 3
  CHECK((*d)->tokens() == std::vector<int64_t>{0, 1, 2, 3, 1, 0, 4, 3});
  CHECK((*d)->vocabulary() == std::vector<std::string>{"a", "b", "c", "<eos>", "d"});
  CHECK((*d)->size() == 2);  // (8 - 1) / 3
  Batch b = batch_for(**d, 2);
  REQUIRE((*d)->fetch(1, 0, b, 1).is_ok());
  CHECK(std::vector<int64_t>(b.tokens.begin() + 3, b.tokens.end()) == std::vector<int64_t>{3, 1, 0});
  CHECK(std::vector<int64_t>(b.labels.begin() + 3, b.labels.end()) == std::vector<int64_t>{1, 0, 4});
  CHECK(TextCorpusDataset::from_text(std::string("ab\0c", 4), "t.txt", 3, "text").status().message() ==
        "t.txt: NUL byte at offset 2 (not a text corpus)");
  CHECK(TextCorpusDataset::from_text("a b", "t.txt", 35, "text").status().message() ==
        "t.txt: 3 tokens, need at least 36 for one 35-token sample");
  TempDir dir;
  CHECK(open_training_set("text", dir.str()).status().code() == Code::kNotFound);
  testing::write_file(dir / "wiki.train.tokens", " = Title = \n the cat sat on the mat . \n");
  auto w = TextCorpusDataset::open(dir.str(), 4);
  REQUIRE(w.is_ok());
  CHECK((*w)->files() == std::vector<std::string>{dir.str() + "/wiki.train.tokens"});
}

TEST_CASE("make-data writes every format at the chosen size, and the readers read it back") {
  struct Case {
    std::string format, dataset;
    int64_t samples, expect_size, expect_classes;  // text: expect_size is a lower bound (<eos> tokens add)
  };
  for (const auto& k : std::vector<Case>{{"mnist", "mnist", 30, 30, 10},
                                         {"cifar10", "cifar10", 25, 25, 10},
                                         {"jpeg-gld", "gld23k", 12, 12, 12},  // classes = max(class) + 1 of the CSV
                                         {"jpeg-folder", "imagefolder", 12, 12, 10},
                                         {"text", "text", 100, (1000 - 1) / 35, 0}}) {
    TempDir dir;
    synth::Options o;
    o.format = k.format;
    o.out_dir = dir.str();
    o.samples = k.samples;
    o.seed = 3;
    o.image_width = 48;
    o.image_height = 40;
    auto s = synth::write_dataset(o);
    REQUIRE_MESSAGE(s.is_ok(), s.status().to_string());
    CHECK(s->dataset == k.dataset);
    CHECK(s->bytes > 0);
    auto d = open_training_set(k.dataset, dir.str());
    REQUIRE_MESSAGE(d.is_ok(), std::string(k.format + ": " + d.status().to_string()));
    if (k.format == "text") CHECK((*d)->size() >= k.expect_size);
    else CHECK_MESSAGE((*d)->size() == k.expect_size, k.format);
    if (k.expect_classes > 0) CHECK_MESSAGE((*d)->shape().classes == k.expect_classes, k.format);
    // Deterministic from the seed: a second run writes identical first files.
    TempDir again;
    o.out_dir = again.str();
    REQUIRE(synth::write_dataset(o).is_ok());
    auto d2 = open_training_set(k.dataset, again.str());
    REQUIRE(d2.is_ok());
    std::ifstream f1((*d)->files().front(), std::ios::binary), f2((*d2)->files().front(), std::ios::binary);
    CHECK(std::string(std::istreambuf_iterator<char>(f1), {}) == std::string(std::istreambuf_iterator<char>(f2), {}));
  }
  synth::Options bad;
  bad.format = "tfrecord";
  bad.out_dir = TempDir().str();
  CHECK(synth::write_dataset(bad).status().message() == "make-data: unknown --format 'tfrecord' (known: mnist, cifar10, jpeg-gld, jpeg-folder, text)");
}

TEST_CASE("agent CLI: models, make-data and --storage") {
  auto m = parse_agent_args({"models", "--json"});
  REQUIRE(m.is_ok());
  CHECK(m->mode == AgentConfig::Mode::kModels);
  CHECK(m->json);
  auto d = parse_agent_args({"make-data", "--format", "jpeg-gld", "--out", "/tmp/x", "--samples", "10", "--image-size", "64x48"});
  REQUIRE_MESSAGE(d.is_ok(), d.status().message());
  CHECK(d->mode == AgentConfig::Mode::kMakeData);
  CHECK((d->image_width == 64 && d->image_height == 48 && d->data_samples == 10));
  CHECK(parse_agent_args({"make-data", "--format", "mnist", "--out", "/tmp/x"}).status().message() == "make-data: --samples N is required");
  CHECK(parse_agent_args({"make-data", "--format", "mnist", "--out", "/x", "--samples", "5", "--image-size", "64"}).status().message() ==
        "--image-size '64': expected WxH, e.g. 320x240");
  auto s = parse_agent_args({"run", "--spec", "a.yaml", "--out", "b.jsonl", "--storage", "ssd=/mnt/ssd", "--storage", "sd=/media/sd/"});
  REQUIRE_MESSAGE(s.is_ok(), s.status().message());
  CHECK(s->storage == std::vector<std::string>{"ssd=/mnt/ssd", "sd=/media/sd/"});
  CHECK(parse_agent_args({"run", "--spec", "a", "--out", "b", "--storage", "ssd"}).status().message() ==
        "--storage 'ssd': expected NAME=DIR (e.g. ssd=/mnt/ssd/datasets)");
  CHECK(parse_agent_args({"run", "--spec", "a", "--out", "b", "--storage", "ssd=rel"}).status().message() ==
        "--storage 'ssd=rel': DIR must be an absolute path");
  // Simulated boards offer simulated media (their read speeds modelled; the executor refuses unknown ones).
  auto sim = parse_agent_args({"run", "--spec", "a", "--out", "b", "--sim", "nano", "--storage", "ssd=/x"});
  REQUIRE_MESSAGE(sim.is_ok(), sim.status().message());
  CHECK(sim->storage == std::vector<std::string>{"ssd=/x"});
}
