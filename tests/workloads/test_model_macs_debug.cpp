// agent/models/registry.cpp compiled without NDEBUG and without optimisation (this target's flags), linked with the
// release LibTorch: the model FLOPs it measures must be the release build's (issue 30: a build without NDEBUG saw
// another RecordFunction layout than LibTorch's and counted wrong MACs; registry.cpp now fixes its layout itself).
#include <doctest/doctest.h>

#include "agent/models/registry.hpp"

using jetsweep::agent::models::InputSpec;
using jetsweep::agent::models::measure_model;

TEST_CASE("model MACs measured by a registry.cpp compiled without NDEBUG equal the release build's") {
  auto macs = [](const std::string& m, const InputSpec& s) {
    auto f = measure_model(m, s);
    REQUIRE_MESSAGE(f.is_ok(), f.status().to_string());
    return f->forward_macs;
  };
  for (int repeat = 0; repeat < 3; ++repeat) {   // the wrong counts varied from call to call
    CHECK(macs("lenet5", InputSpec::image(1, 28, 28, 10)) == 117600 + 240000 + 48000 + 10080 + 840);
    CHECK(macs("resnet18", InputSpec::image(3, 32, 32, 10)) == 555422720);
    CHECK(macs("vgg11", InputSpec::image(3, 224, 224, 1000)) == 7609090048);
  }
}
