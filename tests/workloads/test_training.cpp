// Training on CPU: every model trains a few minibatches through train(); stall/compute accounting
// against a dataset with a known injected fetch delay; runs through RunExecutor on generated datasets in
// the real formats, with the data named through a storage medium and per-epoch page-cache/IO figures.
#include <doctest/doctest.h>

#include <chrono>
#include <cmath>
#include <thread>

#include "agent/datasets/synth.hpp"
#include "agent/models/registry.hpp"
#include "agent/run_executor.hpp"
#include "agent/trainer.hpp"
#include "support/collecting_sink.hpp"
#include "support/run_checks.hpp"
#include "support/temp_dir.hpp"

using namespace jetsweep;
using namespace jetsweep::agent;
using jetsweep::testing::CollectingSink;
using jetsweep::testing::TempDir;

namespace {

// Images whose channel means depend on the label (learnable), or token sequences counting upwards
// modulo the vocabulary; fetch() optionally sleeps a known delay per sample (the injected fetch cost).
class GeneratedDataset final : public Dataset {
 public:
  GeneratedDataset(SampleShape shape, int64_t count, std::chrono::microseconds delay = {})
      : shape_(shape), count_(count), delay_(delay) {}
  const std::string& name() const override { return name_; }
  int64_t size() const override { return count_; }
  SampleShape shape() const override { return shape_; }
  const std::vector<std::string>& files() const override { return files_; }
  Status fetch(int64_t id, uint64_t seed, Batch& out, int64_t slot) const override {
    if (delay_.count() > 0) std::this_thread::sleep_for(delay_);
    const int64_t label = id % shape_.classes;
    if (shape_.kind == SampleShape::Kind::kTokens) {
      for (int64_t t = 0; t < shape_.seq_len; ++t) {
        out.tokens[static_cast<size_t>(slot * shape_.seq_len + t)] = (id + t) % shape_.classes;
        out.labels[static_cast<size_t>(slot * shape_.seq_len + t)] = (id + t + 1) % shape_.classes;
      }
      return Status::ok();
    }
    const int64_t n = shape_.input_elems();
    uint64_t x = seed | 1;
    for (int64_t k = 0; k < n; ++k) {
      x ^= x << 13, x ^= x >> 7, x ^= x << 17;
      out.images[static_cast<size_t>(slot * n + k)] = static_cast<float>(label) * 0.3f - 1.0f + static_cast<float>(x % 1000) / 2000.0f;
    }
    out.labels[static_cast<size_t>(slot)] = label;
    return Status::ok();
  }

 private:
  std::string name_ = "generated";
  SampleShape shape_;
  int64_t count_;
  std::chrono::microseconds delay_;
  std::vector<std::string> files_;
};

struct Recorder final : public TrainingObserver {
  void on_epoch_start(int64_t) override {}
  void on_minibatch(int64_t epoch, const MinibatchTimes& t) override {
    indices.push_back(t.index);
    stalls.push_back(t.stall_s);
    computes.push_back(t.compute_s);
    copies.push_back(t.copy_s);
  }
  void on_epoch_end(const EpochTiming& t) override { epochs.push_back(t); }
  std::vector<int64_t> indices;
  std::vector<double> stalls, computes;
  std::vector<std::optional<double>> copies;
  std::vector<EpochTiming> epochs;
};

RunConfig small_config(const std::string& model, int64_t batch, int64_t minibatches) {
  RunConfig c = testing::make_run(model, RunConfig{}.dataset, batch, 0, 1);
  c.threads = 2;
  c.seed = 3;
  c.max_minibatches = minibatches;
  return c;
}

SampleShape image_shape(int64_t c, int64_t side, int64_t classes) {
  return {SampleShape::Kind::kImage, c, side, side, 0, classes};
}

}  // namespace

TEST_CASE("every model trains a few minibatches on CPU with finite, falling loss") {
  struct Case {
    std::string model;
    SampleShape shape;
    int64_t batch, minibatches;
  };
  // Smallest inputs each architecture takes; VGG-11 keeps its full 25088-4096-4096 classifier.
  for (const auto& k : std::vector<Case>{{"lenet5", image_shape(1, 28, 10), 8, 6},
                                         {"lenet5", image_shape(3, 32, 10), 8, 3},
                                         {"mobilenet_v3_large", image_shape(3, 32, 5), 4, 3},
                                         {"mobilenet_v3_small", image_shape(3, 32, 5), 4, 3},
                                         {"mobilenet_v3", image_shape(3, 32, 5), 4, 2},
                                         {"resnet18", image_shape(3, 32, 10), 4, 3},
                                         {"resnet18_imagenet", image_shape(3, 64, 10), 4, 3},
                                         {"vgg11", image_shape(3, 32, 10), 2, 2},
                                         {"lstm", SampleShape{SampleShape::Kind::kTokens, 0, 0, 0, 12, 50}, 4, 6}}) {
    CAPTURE(k.model);
    GeneratedDataset data(k.shape, k.batch * k.minibatches);
    Recorder rec;
    std::atomic<bool> cancel{false};
    RunConfig c = small_config(k.model, k.batch, k.minibatches);
    c.epochs = 2;
    Status s = train(c, data, rec, cancel);
    REQUIRE_MESSAGE(s.is_ok(), s.to_string());
    REQUIRE(rec.epochs.size() == 2);
    CHECK(rec.epochs[0].minibatches == k.minibatches);
    CHECK(std::isfinite(rec.epochs[0].mean_loss));
    CHECK(rec.epochs[0].mean_loss > 0);
    for (double ct : rec.computes) CHECK(ct > 0);
    if (k.model == "lenet5" || k.model == "lstm") CHECK(rec.epochs[1].mean_loss < rec.epochs[0].mean_loss);
  }
}

TEST_CASE("a model that does not fit the dataset fails the run with the reason") {
  GeneratedDataset tokens(SampleShape{SampleShape::Kind::kTokens, 0, 0, 0, 8, 20}, 8);
  Recorder rec;
  std::atomic<bool> cancel{false};
  Status s = train(small_config("resnet18", 4, 1), tokens, rec, cancel);
  CHECK(s.code() == Code::kInvalidArgument);
  CHECK(s.message() == "dataset 'generated': model 'resnet18' takes images but the dataset provides tokens x8, vocabulary 20");
}

TEST_CASE("stall/compute accounting against a known injected fetch delay") {
  const auto delay = std::chrono::milliseconds(4);
  const int64_t batch = 4, batches = 6;
  SUBCASE("w = 0: every minibatch stalls for its whole fetch; compute excludes it") {
    GeneratedDataset data(image_shape(1, 28, 10), batch * batches, delay);
    Recorder rec;
    std::atomic<bool> cancel{false};
    REQUIRE(train(small_config("lenet5", batch, batches), data, rec, cancel).is_ok());
    REQUIRE(rec.stalls.size() == static_cast<size_t>(batches));
    for (size_t i = 0; i < rec.stalls.size(); ++i) {
      CHECK(rec.indices[i] == static_cast<int64_t>(i));
      CHECK(rec.stalls[i] >= batch * 0.004);  // sleep_for never returns early
    }
    const auto& e = rec.epochs.at(0);
    CHECK(e.stall_s >= batches * batch * 0.004);
    CHECK(e.e2e_s >= e.stall_s + e.compute_s);
    // The fetch delay is not in the compute time: the same run without delay computes as fast.
    GeneratedDataset fast(image_shape(1, 28, 10), batch * batches);
    Recorder quick;
    REQUIRE(train(small_config("lenet5", batch, batches), fast, quick, cancel).is_ok());
    CHECK(quick.epochs.at(0).stall_s < e.stall_s);
    // Deterministic: the epoch holds the injected delay in its stalls, so compute cannot contain it.
    CHECK(e.compute_s <= e.e2e_s - batches * batch * 0.004);
  }
  SUBCASE("w = 1: one worker builds all minibatches in sequence; the loop waits for what it cannot hide") {
    GeneratedDataset data(image_shape(1, 28, 10), batch * batches, delay);
    Recorder rec;
    std::atomic<bool> cancel{false};
    RunConfig c = small_config("lenet5", batch, batches);
    c.workers = 1;
    c.prefetch = 2;
    REQUIRE(train(c, data, rec, cancel).is_ok());
    const auto& e = rec.epochs.at(0);
    // The last minibatch cannot arrive before the worker has fetched them all.
    CHECK(e.e2e_s >= batches * batch * 0.004);
    CHECK(e.stall_s + e.compute_s >= 0.9 * batches * batch * 0.004 - 0.002);
    CHECK(rec.stalls.at(0) >= batch * 0.004);  // nothing prefetched yet for the first minibatch
  }
}

TEST_CASE("timing: pipelined on the CPU: stalls and computes tile the epoch, in order, nothing copied") {
  const auto delay = std::chrono::milliseconds(3);
  const int64_t batch = 4, batches = 9;   // more than MinibatchClock::kLag, so markers are read late
  GeneratedDataset data(image_shape(1, 28, 10), batch * batches, delay);
  std::atomic<bool> cancel{false};
  RunConfig c = small_config("lenet5", batch, batches);
  c.epochs = 2;
  c.timing = "pipelined";
  Recorder rec;
  REQUIRE(train(c, data, rec, cancel).is_ok());
  REQUIRE(rec.epochs.size() == 2);
  REQUIRE(rec.indices.size() == static_cast<size_t>(2 * batches));
  for (size_t i = 0; i < rec.indices.size(); ++i) {
    CHECK(rec.indices[i] == static_cast<int64_t>(i) % batches);
    CHECK(rec.stalls[i] >= batch * 0.003);   // the compute lane (the CPU) waited for the whole fetch
    CHECK_FALSE(rec.copies[i].has_value());   // nothing is copied on the CPU
  }
  for (const auto& e : rec.epochs) {
    CHECK(e.minibatches == batches);
    CHECK(e.stall_s + e.compute_s <= e.e2e_s);
    CHECK(e.stall_s + e.compute_s > 0.5 * e.e2e_s);   // they tile the epoch from its start marker
    CHECK_FALSE(e.copy_s.has_value());
  }
  c.timing = "sometimes";
  Recorder none;
  Status s = train(c, data, none, cancel);
  CHECK(s.code() == Code::kInvalidArgument);
  CHECK(s.message() == "timing 'sometimes': expected paper or pipelined");
  CHECK(none.indices.empty());
}

TEST_CASE("runs on make-data datasets through the executor: storage medium, page cache and IO per epoch") {
  TempDir media;
  struct Case {
    std::string format, model, dataset;
    int64_t samples, batch;
  };
  for (const auto& k : std::vector<Case>{{"cifar10", "resnet18", "cifar10", 48, 8},
                                         {"jpeg-gld", "mobilenet_v3", "gld23k", 12, 4},
                                         {"jpeg-folder", "mobilenet_v3_small", "imagefolder", 12, 4},
                                         {"text", "lstm", "text", 200, 8}}) {
    CAPTURE(k.format);
    synth::Options o;
    o.format = k.format;
    o.out_dir = (media / ("ssd/" + k.dataset)).string();
    o.samples = k.samples;
    o.image_width = 64;
    o.image_height = 48;
    o.classes = k.format == "jpeg-gld" ? 5 : 0;
    REQUIRE(synth::write_dataset(o).is_ok());
    ExecutorOptions eo;
    REQUIRE(eo.storage.add("ssd=" + (media / "ssd").string()).is_ok());
    auto ex = RunExecutor::open(eo);
    REQUIRE(ex.is_ok());
    RunConfig c = small_config(k.model, k.batch, 2);
    c.dataset = k.dataset;
    c.data = "@ssd";  // = MEDIA/ssd/<dataset>
    c.workers = 2;
    c.epochs = 2;
    CollectingSink sink;
    std::atomic<bool> cancel{false};
    auto fin = (*ex)->execute(7, c, sink, cancel);
    REQUIRE_MESSAGE(fin.status == "done", fin.error);
    auto epochs = sink.epochs();
    REQUIRE(epochs.size() == 2);
    for (const auto& e : epochs) {
      CHECK(e.minibatches == 2);
      REQUIRE(e.cache_start_frac.has_value());
      REQUIRE(e.cache_end_frac.has_value());
      CHECK(*e.cache_end_frac > 0.5);  // files just written or read: resident
      CHECK(*e.cache_end_frac <= 1.0);
    }
  }
}

TEST_CASE("a corrupt image fails the run with the file and the minibatch named") {
  TempDir dir;
  synth::Options o;
  o.format = "jpeg-folder";
  o.out_dir = dir.str();
  o.samples = 4;
  o.image_width = 32;
  o.image_height = 32;
  REQUIRE(synth::write_dataset(o).is_ok());
  const std::string bad = dir.str() + "/n00000002/img_0000002.JPEG";
  REQUIRE(std::filesystem::exists(bad));
  testing::write_file(bad, "\xFF\xD8 truncated");
  RunExecutor ex("/");
  RunConfig c = small_config("mobilenet_v3_small", 2, 0);
  c.dataset = "imagefolder";
  c.data = dir.str();
  c.workers = 1;
  CollectingSink sink;
  std::atomic<bool> cancel{false};
  auto fin = ex.execute(9, c, sink, cancel);
  CHECK(fin.status == "failed");
  CHECK(fin.error.find("epoch 0 minibatch ") != std::string::npos);
  CHECK(fin.error.find(bad + ": corrupt JPEG") != std::string::npos);
}

TEST_CASE("a run naming an unknown medium fails with the media the agent has") {
  ExecutorOptions eo;
  REQUIRE(eo.storage.add("emmc=/data").is_ok());
  auto ex = RunExecutor::open(eo);
  REQUIRE(ex.is_ok());
  RunConfig c = small_config("lenet5", 4, 1);
  c.dataset = "mnist";
  c.data = "@hdd/mnist";
  CollectingSink sink;
  std::atomic<bool> cancel{false};
  auto fin = (*ex)->execute(1, c, sink, cancel);
  CHECK(fin.status == "failed");
  CHECK(fin.error == "invalid_argument: data '@hdd/mnist': this agent has no storage medium 'hdd' (known: emmc=/data)");
}
