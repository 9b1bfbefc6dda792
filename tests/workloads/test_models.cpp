// Models: parameter counts against the papers' Table 2 (with the configuration that reproduces each),
// forward multiply-accumulates, input checks, and the registry's names matching RunConfig's.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>

#include "agent/models/factory.hpp"
#include "agent/models/registry.hpp"
#include "common/run_config.hpp"

using namespace jetsweep;
using namespace jetsweep::agent::models;

namespace {
int64_t params(const std::string& model, const InputSpec& spec) {
  auto p = parameter_count(model, spec);
  REQUIRE_MESSAGE(p.is_ok(), p.status().to_string());
  return p.value();
}
double rel(double a, double b) { return std::abs(a - b) / b; }
}  // namespace

TEST_CASE("parameter counts reproduce the papers' Table 2 in torchvision's configurations") {
  // SIGMETRICS'23 Table 2: LeNet-5 60k (MNIST 1x28x28, 10 classes).
  CHECK(params("lenet5", InputSpec::image(1, 28, 28, 10)) == 61706);
  // MobileNet v3 5.48M: torchvision mobilenet_v3_large with its default 1000 classes.
  CHECK(params("mobilenet_v3_large", InputSpec::image(3, 224, 224, 1000)) == 5483032);
  CHECK(params("mobilenet_v3", InputSpec::image(3, 224, 224, 1000)) == 5483032);  // alias
  // ... and as trained on GLD-23k (203 classes): the classifier shrinks by 797 x 1281.
  CHECK(params("mobilenet_v3_large", InputSpec::image(3, 224, 224, 203)) == 5483032 - 797 * 1281);
  CHECK(params("mobilenet_v3_small", InputSpec::image(3, 224, 224, 1000)) == 2542856);
  // ResNet-18 11.68M: torchvision resnet18 (ImageNet stem), 1000 classes.
  CHECK(params("resnet18_imagenet", InputSpec::image(3, 224, 224, 1000)) == 11689512);
  // The CIFAR stem (3x3 conv, no max-pool) with 10 classes.
  CHECK(params("resnet18", InputSpec::image(3, 32, 32, 10)) == 11173962);
  // VGG-11 132.86M: torchvision vgg11, 1000 classes; the count does not depend on the input size.
  CHECK(params("vgg11", InputSpec::image(3, 224, 224, 1000)) == 132863336);
  CHECK(params("vgg11", InputSpec::image(3, 32, 32, 1000)) == 132863336);
  // LSTM: 257 V + 1,052,672; PowerTrain's 8.6M for a vocabulary of ~29.4k words.
  CHECK(params("lstm", InputSpec::tokens(35, 33278)) == 257 * 33278 + 1052672);
  CHECK(rel(static_cast<double>(params("lstm", InputSpec::tokens(35, 29366))), 8.6e6) < 0.001);
  for (const auto& m : model_catalog()) {
    if (m.paper_parameters <= 0 || m.name == "lstm") continue;
    CHECK_MESSAGE(rel(static_cast<double>(params(m.name, m.reference)), m.paper_parameters) < 0.035, m.name);
  }
}

TEST_CASE("forward multiply-accumulates per sample match the papers' FLOPs column") {
  auto macs = [](const std::string& m, const InputSpec& s) {
    auto f = measure_model(m, s);
    REQUIRE_MESSAGE(f.is_ok(), f.status().to_string());
    return static_cast<double>(f->forward_macs);
  };
  // LeNet-5 on 28x28: conv1 6*28*28*25 + conv2 16*10*10*150 + fc 400*120 + 120*84 + 84*10.
  CHECK(macs("lenet5", InputSpec::image(1, 28, 28, 10)) == 117600 + 240000 + 48000 + 10080 + 840);
  CHECK(rel(macs("resnet18_imagenet", InputSpec::image(3, 224, 224, 1000)), 1.82e9) < 0.01);
  CHECK(rel(macs("mobilenet_v3_large", InputSpec::image(3, 224, 224, 1000)), 225.4e6) < 0.05);
  // LSTM, 35 tokens: 2 layers x 4 gates x 256 x (256 + 256) per token, plus the tied decoder.
  CHECK(macs("lstm", InputSpec::tokens(35, 1000)) == 35.0 * (2 * 4 * 256 * 512 + 256 * 1000));
}

TEST_CASE("every model in known_models() is built by the registry, and vice versa") {
  for (const auto& name : known_models()) CHECK_MESSAGE(find_model(name).is_ok(), name);
  for (const auto& m : model_catalog()) CHECK(std::count(known_models().begin(), known_models().end(), m.name) == 1);
  CHECK(find_model("alexnet").status().message().find("known: lenet5") != std::string::npos);
}

TEST_CASE("inputs a model cannot take are rejected with the reason") {
  auto mk = [](const std::string& m, const InputSpec& s) { return make_model(m, s).status().message(); };
  CHECK(mk("lstm", InputSpec::image(3, 32, 32, 10)).find("takes token sequences") != std::string::npos);
  CHECK(mk("resnet18", InputSpec::tokens(35, 100)).find("takes images") != std::string::npos);
  CHECK(mk("mobilenet_v3_large", InputSpec::image(3, 16, 16, 10)).find("at least 32x32") != std::string::npos);
  CHECK(mk("lenet5", InputSpec::image(1, 28, 32, 10)).find("square") != std::string::npos);
}
