// The epoch record (issue 32, one definition per record): its wire JSON (agent -> controller) is pinned here key by
// key, so a codec derived from the record's description must write what the hand-written codecs wrote (its report
// JSON, controller -> API: test_api_json.cpp); and every measure the description lists has a physical bound.
#include <doctest/doctest.h>

#include <boost/describe.hpp>
#include <boost/json.hpp>
#include <boost/mp11.hpp>
#include <cmath>
#include <limits>
#include <set>
#include <string>

#include "common/api.hpp"
#include "common/described_json.hpp"
#include "common/json_parse.hpp"
#include "common/protocol.hpp"

using namespace jetsweep;

namespace {
proto::EpochResult full_epoch() {
  proto::EpochResult e;
  e.run_id = 9, e.epoch = 2, e.e2e_s = 12.5, e.stall_s = 0.25, e.compute_s = 11.0, e.minibatches = 938;
  e.copy_s = 0.125;
  e.energy_j = 123.5, e.mean_power_w = 9.875, e.loss = 0.5, e.read_mb_s = 85.5, e.read_iops = 1200.0;
  e.cache_start_frac = 0.0, e.cache_end_frac = 1.0, e.t_start_s = 3.0, e.t_end_s = 15.5, e.power_coverage = 0.75;
  e.paused_before_s = 2.5;
  e.clocks_start = proto::ClockReading{6, 1510400.0, 624750000.0, 2133000000.0};
  e.clocks_end = proto::ClockReading{4, 1190400.0, std::nullopt, std::nullopt};
  e.throttled = true, e.throttle_reason = "cpu0 at 1190400 kHz";
  return e;
}

boost::json::object body_of(const proto::EpochResult& e) {
  auto o = json::parse_exact(proto::encode(proto::Envelope{7, e})).as_object();
  o.erase("version"), o.erase("id"), o.erase("type");
  return o;
}
}  // namespace

TEST_CASE("an epoch result's wire JSON, every key (unchanged by the derived codec)") {
  const auto expected = boost::json::parse(R"({
    "run_id": 9, "epoch": 2, "e2e_s": 12.5, "stall_s": 0.25, "compute_s": 11.0, "minibatches": 938, "copy_s": 0.125,
    "energy_j": 123.5, "mean_power_w": 9.875, "loss": 0.5, "read_mb_s": 85.5, "read_iops": 1200.0,
    "cache_start_frac": 0.0, "cache_end_frac": 1.0, "t_start_s": 3.0, "t_end_s": 15.5, "power_coverage": 0.75,
    "paused_before_s": 2.5,
    "clocks_start": {"cores_online": 6, "cpu_khz": 1510400.0, "gpu_hz": 624750000.0, "emc_hz": 2133000000.0},
    "clocks_end": {"cores_online": 4, "cpu_khz": 1190400.0, "gpu_hz": null, "emc_hz": null},
    "throttled": true, "throttle_reason": "cpu0 at 1190400 kHz"})");
  CHECK(boost::json::value(body_of(full_epoch())) == expected);

  // Empty: copy_s and throttle_reason are left out; every other measure is null, never absent.
  proto::EpochResult bare;
  bare.run_id = 9, bare.e2e_s = 1.0;
  bare.loss = std::numeric_limits<double>::quiet_NaN();   // a diverged model: null on the wire
  const auto bare_expected = boost::json::parse(R"({
    "run_id": 9, "epoch": 0, "e2e_s": 1.0, "stall_s": 0.0, "compute_s": 0.0, "minibatches": 0,
    "energy_j": null, "mean_power_w": null, "loss": null, "read_mb_s": null, "read_iops": null,
    "cache_start_frac": null, "cache_end_frac": null, "t_start_s": null, "t_end_s": null, "power_coverage": null, "paused_before_s": null,
    "clocks_start": null, "clocks_end": null, "throttled": false})");
  CHECK(boost::json::value(body_of(bare)) == bare_expected);

  auto back = proto::decode(proto::encode(proto::Envelope{7, full_epoch()}));
  REQUIRE(back.is_ok());
  CHECK(std::get<proto::EpochResult>(back.value().body) == full_epoch());
}

TEST_CASE("every epoch measure has exactly one bound, and the decoder enforces it") {
  std::set<std::string> described;
  const proto::EpochMeasures measures;
  json::for_each_described(measures, [&](const char* name, const auto&) { described.insert(name); });
  std::multiset<std::string> bounded;
  for (const auto& bound : proto::kEpochMeasureBounds) bounded.insert(json::described_name(bound.measure));
  CHECK(std::set<std::string>(bounded.begin(), bounded.end()) == described);
  CHECK(bounded.size() == described.size());

  // Each bounded measure just past its bound is refused, naming the field.
  for (const auto& bound : proto::kEpochMeasureBounds) {
    if (bound.hi == proto::kNoBound) continue;
    auto e = full_epoch();
    e.*bound.measure = bound.hi * 2 + 1;
    if (bound.measure == &proto::EpochMeasures::t_end_s) e.t_start_s = 0.0;
    auto back = proto::decode(proto::encode(proto::Envelope{7, e}));
    const std::string name = json::described_name(bound.measure);
    CAPTURE(name);
    REQUIRE_FALSE(back.is_ok());
    CHECK(back.status().to_string().find("field '" + name + "'") != std::string::npos);
  }
}

TEST_CASE("an epoch result's == compares its measures too (the described base)") {
  auto a = full_epoch(), b = full_epoch();
  CHECK(a == b);
  b.power_coverage = 0.5;
  CHECK_FALSE(a == b);
  b = full_epoch();
  b.throttle_reason = "";
  CHECK_FALSE(a == b);
}
