// The run config's JSON (common/run_config.hpp), derived from its description since issue 32: byte for byte what the
// hand-written codec wrote (the pins below are that codec's output for these configs), keys absent or null keeping
// the defaults, and errors that name the field, the nested power mode's too.
#include <doctest/doctest.h>

#include <boost/describe.hpp>
#include <boost/json.hpp>
#include <boost/mp11.hpp>
#include <boost/pfr.hpp>
#include <string>

#include "common/json_parse.hpp"
#include "common/protocol.hpp"
#include "common/run_config.hpp"

using namespace jetsweep;

namespace {

RunConfig every_field_set() {
  RunConfig c;
  c.device = "agx-orin/orin-2", c.model = "resnet18", c.dataset = "cifar10", c.data = "/data/cifar";
  c.batch_size = 64, c.workers = 2, c.prefetch = 3, c.epochs = 5, c.threads = 4, c.seed = 7, c.repetition = 2;
  c.drop_caches = true, c.sample_hz = 12.5, c.max_minibatches = 100;
  c.power_mode.cores = 8, c.power_mode.cpu_khz = 1984000, c.power_mode.emc_hz = 3199000000;   // gpu_hz not given
  c.base_mode = "MAXN", c.pin_clocks = true, c.fan_max = true, c.accelerator = "cuda", c.timing = "pipelined";
  c.min_memory_mb = 4096;
  return c;
}

std::string text_of(const RunConfig& c) { return boost::json::serialize(to_json(c)); }

Result<RunConfig> read(const std::string& text) {
  return run_config_from_json(json::parse_exact(text).as_object(), "message 'assign_run' field 'config',");
}

std::string error_of(const std::string& text) {
  auto r = read(text);
  REQUIRE_FALSE(r.is_ok());
  return r.status().message();
}

}  // namespace

TEST_CASE("a run config's JSON is what the hand-written codec wrote, and reads back equal") {
  RunConfig named;
  named.power_mode.name = "15W";
  const std::pair<RunConfig, std::string> pinned[] = {
      {every_field_set(),
       R"({"device":"agx-orin/orin-2","model":"resnet18","dataset":"cifar10","data":"/data/cifar","batch_size":64,)"
       R"("workers":2,"prefetch":3,"epochs":5,"threads":4,"seed":7,"repetition":2,"drop_caches":true,"sample_hz":1.25E1,)"
       R"("max_minibatches":100,"power_mode":{"cores":8,"cpu_khz":1984000,"emc_hz":3199000000},"base_mode":"MAXN",)"
       R"("pin_clocks":true,"fan_max":true,"accelerator":"cuda","timing":"pipelined","min_memory_mb":4096})"},
      {named,
       R"({"device":"any","model":"lenet5","dataset":"fashion-mnist","data":"","batch_size":16,"workers":4,"prefetch":2,)"
       R"("epochs":6,"threads":1,"seed":1,"repetition":0,"drop_caches":false,"sample_hz":1E2,"max_minibatches":0,)"
       R"("power_mode":{"name":"15W"},"pin_clocks":false})"},
      {RunConfig{},
       R"({"device":"any","model":"lenet5","dataset":"fashion-mnist","data":"","batch_size":16,"workers":4,"prefetch":2,)"
       R"("epochs":6,"threads":1,"seed":1,"repetition":0,"drop_caches":false,"sample_hz":1E2,"max_minibatches":0,)"
       R"("pin_clocks":false})"},
  };
  for (const auto& [config, text] : pinned) {
    CHECK(text_of(config) == text);
    auto back = read(text);
    REQUIRE_MESSAGE(back.is_ok(), back.status().to_string());
    CHECK(*back == config);
    // In a frame, written by proto::encode's text writer (no tree) and read by decode.
    const proto::Envelope assign{4, proto::AssignRun{21, config}};
    const std::string frame = proto::encode(assign);
    CHECK(frame == R"({"type":"assign_run","version":1,"id":4,"run_id":21,"config":)" + text + "}");
    auto decoded = proto::decode(frame);
    REQUIRE_MESSAGE(decoded.is_ok(), decoded.status().to_string());
    CHECK(*decoded == assign);
  }
}

TEST_CASE("every member of the run config and of its power mode is described: none left off the wire") {
  CHECK(boost::pfr::tuple_size_v<RunConfig> ==
        boost::mp11::mp_size<boost::describe::describe_members<RunConfig, boost::describe::mod_public>>::value);
  CHECK(boost::pfr::tuple_size_v<PowerModeRequest> ==
        boost::mp11::mp_size<boost::describe::describe_members<PowerModeRequest, boost::describe::mod_public>>::value);
}

TEST_CASE("a run config's keys absent or null keep their defaults, not zero") {
  const std::string required = R"("model":"lenet5","dataset":"fashion-mnist","batch_size":16,"workers":4,"prefetch":2,"epochs":6)";
  for (const std::string& text :
       {"{" + required + "}",
        "{" + required + R"(,"device":null,"threads":null,"seed":null,"sample_hz":null,"power_mode":null,"data":null})"}) {
    CAPTURE(text);
    auto c = read(text);
    REQUIRE_MESSAGE(c.is_ok(), c.status().to_string());
    CHECK(c->device == "any");
    CHECK(c->threads == 1);
    CHECK(c->seed == 1);
    CHECK(c->sample_hz == kDefaultSampleHz);
    CHECK(c->power_mode == PowerModeRequest{});
    CHECK(*c == RunConfig{});
  }
  // A power mode's settings not given read 0: the class's reference state.
  auto explicit_settings = read("{" + required + R"(,"power_mode":{"cores":4}})");
  REQUIRE(explicit_settings.is_ok());
  CHECK(explicit_settings->power_mode == PowerModeRequest{"", 4, 0, 0, 0});
  CHECK(explicit_settings->has_power_mode());
}

TEST_CASE("a run config's errors name the field, the power mode's nested ones and its bounds too") {
  const std::string head = R"({"model":"lenet5","dataset":"fashion-mnist","batch_size":16,"workers":4,"prefetch":2)";
  CHECK(error_of(head + "}") == "message 'assign_run' field 'config', field 'epochs': missing");
  CHECK(error_of(head + R"(,"epochs":"6"})") ==
        "message 'assign_run' field 'config', field 'epochs': expected an integer, got string");
  CHECK(error_of(head + R"(,"epochs":6,"threads":0})") ==
        "message 'assign_run' field 'config', field 'threads': must be between 1 and 256");
  CHECK(error_of(head + R"(,"epochs":6,"power_mode":"MAXN"})") ==
        "message 'assign_run' field 'config', field 'power_mode': expected an object, got string");
  CHECK(error_of(head + R"(,"epochs":6,"power_mode":{"cores":"8"}})") ==
        "message 'assign_run' field 'config', field 'power_mode', field 'cores': expected an integer, got string");
  CHECK(error_of(head + R"(,"epochs":6,"power_mode":{"name":"MAXN","cores":8}})") ==
        "message 'assign_run' field 'config', field 'power_mode': give either a named mode or explicit settings, not both");
  std::string unknown_model = head + R"(,"epochs":6})";
  unknown_model.replace(unknown_model.find("lenet5"), 6, "nope");
  CHECK(error_of(unknown_model).find("field 'model': unknown model 'nope'") != std::string::npos);
  // Through decode, the message and its field named.
  auto frame = proto::decode(R"({"type":"assign_run","version":1,"id":1,"run_id":2,"config":)" + head +
                             R"(,"epochs":6,"power_mode":{"gpu_hz":-1}}})");
  REQUIRE_FALSE(frame.is_ok());
  CHECK(frame.status().message() == "message 'assign_run' field 'config', field 'power_mode': frequencies must be positive");
}
