// A user's own model (issue 31): TorchScript files exported inside the test with Debian's python3-torch and
// python3-torchvision (the same 1.13 as the agent's LibTorch) by the user-facing scripts/export-torchscript, trained
// on real Fashion-MNIST through train() and RunExecutor; parameter counts against Python's, FLOPs and losses
// against the built-in LeNet-5; each error a user will hit; the content-addressed model cache.
#include <doctest/doctest.h>

#include <boost/json.hpp>
#include <cmath>
#include <cstdio>
#include <filesystem>

#include "agent/datasets/dataset.hpp"
#include "agent/model_cache.hpp"
#include "agent/models/workload.hpp"
#include "agent/run_executor.hpp"
#include "agent/trainer.hpp"
#include "support/collecting_sink.hpp"
#include "support/temp_dir.hpp"

using namespace jetsweep;
using namespace jetsweep::agent;
using jetsweep::testing::CollectingSink;
using jetsweep::testing::TempDir;

namespace {

const std::string kSource = JETSWEEP_SOURCE_DIR;
const models::InputSpec kFashion = models::InputSpec::image(1, 28, 28, 10);

// Runs a shell command; returns its standard output, failing the test when it exits non-zero.
std::string run(const std::string& command) {
  std::string out;
  FILE* p = ::popen(command.c_str(), "r");
  REQUIRE(p != nullptr);
  char buf[4096];
  size_t n;
  while ((n = std::fread(buf, 1, sizeof buf, p)) > 0) out.append(buf, n);
  const int rc = ::pclose(p);
  REQUIRE_MESSAGE(rc == 0, command << " exited " << rc << ": " << out);
  return out;
}

// scripts/export-torchscript MODEL for 1x28x28 images, 10 classes; its JSON line (file, sha256, parameters).
boost::json::object export_model(const TempDir& dir, const std::string& model, int64_t seed = 1) {
  const std::string file = (dir / (model + ".pt")).string();
  const std::string out = run("/usr/bin/python3 " + kSource + "/scripts/export-torchscript " + model +
                              " --channels 1 --size 28 --classes 10 --seed " + std::to_string(seed) + " -o " + file);
  return boost::json::parse(out).as_object();
}

std::string str(const boost::json::object& o, const char* key) { return std::string(o.at(key).as_string()); }

struct LossRecorder final : public TrainingObserver {
  void on_epoch_start(int64_t) override {}
  void on_minibatch(int64_t, const MinibatchTimes&) override { ++minibatches; }
  void on_epoch_end(const EpochTiming& t) override { losses.push_back(t.mean_loss); }
  int64_t minibatches = 0;
  std::vector<double> losses;
};

RunConfig fashion_run(const std::string& model) {
  RunConfig c;
  c.model = model;
  c.dataset = "fashion-mnist";
  c.batch_size = 32;
  c.workers = 0;
  c.threads = 1;
  c.seed = 1;
  c.epochs = 3;
  c.max_minibatches = 40;
  return c;
}

std::vector<double> train_losses(const RunConfig& c, const std::string& model_file) {
  auto data = open_training_set("fashion-mnist", default_data_path("fashion-mnist"));
  REQUIRE_MESSAGE(data.is_ok(), data.status().to_string());
  LossRecorder rec;
  std::atomic<bool> cancel{false};
  Status s = train(c, *data.value(), rec, cancel, model_file);
  REQUIRE_MESSAGE(s.is_ok(), s.to_string());
  CHECK(rec.minibatches == c.epochs * c.max_minibatches);
  return rec.losses;
}

Status load_error(const std::string& file) {
  auto w = models::make_workload(std::string(kTorchScriptPrefix) + std::string(64, 'a'), file, kFashion);
  REQUIRE_FALSE(w.is_ok());
  return w.status();
}

bool contains(const Status& s, const std::string& part) { return s.message().find(part) != std::string::npos; }

}  // namespace

TEST_CASE("TorchScript models exported from Python: Python's parameter counts, the built-in LeNet-5's FLOPs") {
  TempDir dir;
  for (const std::string model : {"lenet5", "lenet5-own-loss", "resnet18", "mobilenet_v3_small"}) {
    CAPTURE(model);
    const auto exported = export_model(dir, model);
    CHECK(str(exported, "sha256") == sha256_file(str(exported, "file")).value());
    auto w = models::make_workload("torchscript:" + str(exported, "sha256"), str(exported, "file"), kFashion);
    REQUIRE_MESSAGE(w.is_ok(), w.status().to_string());
    auto figures = models::measure_workload(*w.value(), kFashion);
    REQUIRE(figures.is_ok());
    CHECK(figures->parameters == exported.at("parameters").as_int64());
    CHECK(figures->forward_macs > 0);
    if (model.rfind("lenet5", 0) == 0) {
      // The same architecture as agent/models/lenet.cpp: the same parameters and multiply-accumulates, observed
      // through the TorchScript interpreter as through the C++ module.
      auto builtin = models::measure_model("lenet5", kFashion);
      REQUIRE(builtin.is_ok());
      CHECK(figures->parameters == 61706);
      CHECK(figures->forward_macs == builtin->forward_macs);
    }
  }
}

TEST_CASE("a TorchScript LeNet-5 trains on Fashion-MNIST exactly as the built-in one from the same seed; its own loss falls too") {
  TempDir dir;
  const auto lenet = export_model(dir, "lenet5", 1);
  const std::string name = "torchscript:" + str(lenet, "sha256");
  const auto scripted = train_losses(fashion_run(name), str(lenet, "file"));
  const auto builtin = train_losses(fashion_run("lenet5"), "");
  REQUIRE(scripted.size() == 3);
  REQUIRE(builtin.size() == 3);
  // Python's and LibTorch's initialisers draw the same numbers from the same seed: the same run, to rounding.
  for (size_t e = 0; e < 3; ++e) CHECK(scripted[e] == doctest::Approx(builtin[e]).epsilon(1e-6));
  CHECK(scripted[2] < scripted[0] * 0.8);

  const auto own = export_model(dir, "lenet5-own-loss", 2);
  const auto own_losses = train_losses(fashion_run("torchscript:" + str(own, "sha256")), str(own, "file"));
  REQUIRE(own_losses.size() == 3);
  for (double l : own_losses) CHECK(std::isfinite(l));
  CHECK(own_losses[2] < own_losses[0] * 0.8);
}

TEST_CASE("each error a user will hit with an own model is a clear message") {
  TempDir dir;
  const auto good = export_model(dir, "lenet5");
  run("/usr/bin/python3 " + kSource + "/tests/workloads/torchscript_fixtures.py " + dir.str() + " " + str(good, "file"));
  auto at = [&](const char* f) { return (dir / f).string(); };

  Status s = load_error(at("not_a_model.pt"));
  CHECK(contains(s, "is not a TorchScript file"));
  CHECK(contains(s, "torch.jit.save"));
  s = load_error(at("state_dict.pt"));
  CHECK(contains(s, "is not a TorchScript file"));
  CHECK(contains(s, "state_dict is not enough"));
  s = load_error(at("newer_pytorch.pt"));
  CHECK(contains(s, "saved by a newer PyTorch than this agent's LibTorch " + torch_version()));
  CHECK(contains(s, "its file format version is 99"));
  CHECK(contains(s, "reads up to version 10"));
  s = load_error(at("cifar_only.pt"));
  CHECK(contains(s, "forward fails on the dataset's samples [2, 1, 28, 28]"));
  CHECK(contains(s, "mat1 and mat2 shapes cannot be multiplied"));
  s = load_error(at("five_classes.pt"));
  CHECK(contains(s, "forward returns [2, 5]"));
  CHECK(contains(s, "cross-entropy needs logits [2, 10]"));
  s = load_error(at("vector_loss.pt"));
  CHECK(contains(s, "training_loss returns a tensor of shape [2]"));
  CHECK(contains(s, "not a scalar loss"));
  CHECK(s.code() == Code::kInvalidArgument);
  // What the model's own code raises (torch::jit::JITException, not a c10::Error) comes back as a Status too.
  auto raising = models::make_workload("torchscript:" + std::string(64, 'a'), at("raises_on_one.pt"), kFashion);
  REQUIRE(raising.is_ok());
  auto measured = models::measure_workload(*raising.value(), kFashion);
  REQUIRE_FALSE(measured.is_ok());
  CHECK(contains(measured.status(), "this model refuses single samples"));

  // A loss that turns NaN fails the run, naming the epoch and the first such minibatch.
  auto data = open_training_set("fashion-mnist", default_data_path("fashion-mnist"));
  REQUIRE(data.is_ok());
  LossRecorder rec;
  std::atomic<bool> cancel{false};
  RunConfig c = fashion_run("torchscript:" + sha256_file(at("nan_loss.pt")).value());
  s = train(c, *data.value(), rec, cancel, at("nan_loss.pt"));
  CHECK(contains(s, "the training loss is not finite (NaN or infinite) from epoch 0 minibatch 3 on"));
  CHECK(rec.losses.size() == 1);   // the epoch is still reported (its loss NaN) before the run stops
}

TEST_CASE("the model cache keeps each file once under its SHA-256, refuses a tampered entry, and stays within its bound") {
  TempDir dir, cache_dir;
  const auto lenet = export_model(dir, "lenet5");
  const std::string sha = str(lenet, "sha256");
  ModelCache cache(cache_dir.str());
  REQUIRE(cache.add(str(lenet, "file")).value() == sha);
  REQUIRE(cache.add(str(lenet, "file")).value() == sha);   // the same bytes twice: stored once
  CHECK(std::distance(std::filesystem::directory_iterator(cache_dir.path()), {}) == 1);
  CHECK(cache.find(sha).value() == cache.path_for(sha));
  CHECK(cache.find(std::string(64, 'b')).status().code() == Code::kNotFound);

  {   // tampered with: flagged, deleted, and reported missing so that it is fetched again
    std::fstream f(cache.path_for(sha), std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(100);
    f.put('\x5a');
  }
  auto tampered = cache.find(sha);
  REQUIRE_FALSE(tampered.is_ok());
  CHECK(tampered.status().code() == Code::kNotFound);
  CHECK(contains(tampered.status(), "was damaged"));
  CHECK_FALSE(std::filesystem::exists(cache.path_for(sha)));

  // A bound of one file: adding a second evicts the least recently used first one.
  const auto own = export_model(dir, "lenet5-own-loss");
  const int64_t one_file = static_cast<int64_t>(std::filesystem::file_size(str(lenet, "file")));
  ModelCache small(cache_dir.str(), one_file + one_file / 2);
  REQUIRE(small.add(str(lenet, "file")).is_ok());
  REQUIRE(small.add(str(own, "file")).is_ok());
  CHECK_FALSE(std::filesystem::exists(small.path_for(sha)));
  CHECK(small.find(str(own, "sha256")).is_ok());
}

TEST_CASE("a TorchScript run through the executor: trained from the agent's cache, or failed naming how to add it") {
  TempDir dir, cache_dir;
  const auto lenet = export_model(dir, "lenet5");
  const std::string name = "torchscript:" + str(lenet, "sha256");
  ExecutorOptions eo;
  eo.model_dir = cache_dir.str();
  auto ex = RunExecutor::open(eo);
  REQUIRE(ex.is_ok());
  RunConfig c = fashion_run(name);
  c.epochs = 2;
  c.max_minibatches = 5;
  std::atomic<bool> cancel{false};
  {
    CollectingSink sink;
    auto fin = (*ex)->execute(1, c, sink, cancel);
    CHECK(fin.status == "failed");
    CHECK(fin.error.find("is not in the model cache '" + cache_dir.str() + "'") != std::string::npos);
    CHECK(fin.error.find("jetsweep-agent models --add FILE") != std::string::npos);
  }
  REQUIRE(ModelCache(cache_dir.str()).add(str(lenet, "file")).is_ok());
  CollectingSink sink;
  auto fin = (*ex)->execute(2, c, sink, cancel);
  REQUIRE_MESSAGE(fin.status == "done", fin.error);
  REQUIRE(sink.epochs().size() == 2);
  for (const auto& e : sink.epochs()) {
    CHECK(e.minibatches == 5);
    CHECK(e.loss.has_value());
  }
}
