// proto::encode writes a frame as text straight from the message's description (json::append_described), without
// building a boost::json tree. Its bytes must be the tree's as boost::json::serialize writes it (the wire is
// unchanged: tests/unit/test_wire_frames.cpp pins every message type): numbers by Boost's own formatting, strings
// escaped as Boost escapes them, a number that is not finite as null. Held here value by value and message by message
// against the tree written the way encode wrote it before. The tree is filled by the same walk over the description
// (for_each_wire_member), so key order, keys left out and bases are held by the pinned frames, not here.
#include <doctest/doctest.h>

#include <boost/json.hpp>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <string>

#include "common/described_json.hpp"
#include "common/json_fields.hpp"
#include "common/protocol.hpp"
#include "common/text.hpp"

using namespace jetsweep;
namespace bj = boost::json;

namespace {

std::string tree_text(bj::value v) {
  json::null_non_finite(v);
  return bj::serialize(v);
}

template <class T>
std::string number_text(T v) {
  std::string out;
  json::append_number(out, v);
  return out;
}

std::string string_text(std::string_view s) {
  std::string out;
  json::append_string(out, s);
  return out;
}

// The frame as encode built it before: the envelope's keys, the message's members put into one tree, serialised.
std::string frame_through_tree(const proto::Envelope& e) {
  bj::object o;
  o["type"] = proto::type_name(e.body);
  o["version"] = proto::kVersion;
  o["id"] = e.id;
  std::visit([&](const auto& m) { json::put_described(o, m); }, e.body);
  return tree_text(std::move(o));
}

}  // namespace

TEST_CASE("wire text: doubles are written as boost::json::serialize writes them, non-finite ones as null") {
  const double special[] = {0.0,
                            -0.0,
                            1.0,
                            -1.0,
                            0.1,
                            1e22,
                            1e23,
                            123456789012345678.0,
                            0.49712764980921675,
                            std::numeric_limits<double>::min(),
                            std::numeric_limits<double>::denorm_min(),
                            std::numeric_limits<double>::max(),
                            std::numeric_limits<double>::lowest(),
                            std::numeric_limits<double>::epsilon()};
  for (double d : special) {
    CAPTURE(d);
    CHECK(number_text(d) == tree_text(bj::value(d)));
  }
  CHECK(number_text(std::numeric_limits<double>::quiet_NaN()) == "null");
  CHECK(number_text(std::numeric_limits<double>::infinity()) == "null");
  CHECK(number_text(-std::numeric_limits<double>::infinity()) == "null");
  // Every kind of double: random bit patterns (any exponent, subnormals, NaNs) and measured-looking values.
  std::mt19937_64 rng(29);
  std::uniform_real_distribution<double> u(0, 1);
  for (int i = 0; i < 200000; ++i) {
    uint64_t bits = rng();
    double d;
    std::memcpy(&d, &bits, sizeof d);
    if (i % 2) d = 1000 * u(rng);
    CAPTURE(bits);
    REQUIRE(number_text(d) == tree_text(bj::value(d)));
  }
}

TEST_CASE("wire text: integers at their limits are written as boost::json::serialize writes them") {
  for (int64_t v : {int64_t{0}, int64_t{-1}, int64_t{7}, std::numeric_limits<int64_t>::min(),
                    std::numeric_limits<int64_t>::max()})
    CHECK(number_text(v) == tree_text(bj::value(v)));
  for (uint64_t v : {uint64_t{0}, uint64_t{1}, std::numeric_limits<uint64_t>::max()})
    CHECK(number_text(v) == tree_text(bj::value(v)));
}

TEST_CASE("wire text: strings are escaped as boost::json::serialize escapes them, every byte value") {
  for (int c = 0; c < 256; ++c) {
    const std::string s = "a" + std::string(1, char(c)) + "b" + std::string(1, char(c));
    CAPTURE(c);
    CHECK(string_text(s) == tree_text(bj::value(s)));
  }
  CHECK(string_text("") == "\"\"");
  std::mt19937_64 rng(33);
  for (int i = 0; i < 2000; ++i) {
    std::string s(rng() % 40, '\0');
    for (char& c : s) c = char(rng() % 3 == 0 ? rng() % 0x28 : rng() % 256);
    REQUIRE(string_text(s) == tree_text(bj::value(s)));
  }
}

TEST_CASE("wire text: a frame is the bytes its tree serialised to (non-finite numbers, nested records, own codecs)") {
  proto::SampleChunk samples{11, 1.7e9, {}};
  std::mt19937_64 rng(5);
  std::uniform_real_distribution<double> u(0, 1);
  for (int i = 0; i < 64; ++i) {
    proto::Sample s{i * 0.05, 100 * u(rng), {}, 1000 + 1000 * u(rng), 2000000, 4096, 5 + 20 * u(rng), std::nullopt};
    for (int c = 0; c < 8; ++c) s.core_util_pct.push_back(100 * u(rng));
    if (i == 3) s.power_w = std::numeric_limits<double>::quiet_NaN();
    if (i == 4) s.cpu_util_pct = std::numeric_limits<double>::infinity();
    if (i == 5) s.core_util_pct[2] = -std::numeric_limits<double>::infinity();
    if (i == 6) s.temp_max_c = -0.0;
    samples.samples.push_back(std::move(s));
  }
  proto::RunStarted started;
  started.run_id = 4;
  started.applied = proto::BoardState{"MAXN", 0, 12, 2201600, 1300500000, 3199000000, true, "max", 240, std::nullopt};
  started.storage_medium = "ssd \"nvme\"\n\x01";
  started.compute_device = "cuda:0 (Orin)";
  started.t0_unix_s = 1.7e9 + 0.123456789;
  proto::Register reg;
  reg.name = "orin-1";
  reg.facts.tables = BoardTables{"board", 12, {115200, 2201600}, {306000000, 1300500000}, {204000000, 3199000000}};
  reg.facts.storage = {"ssd", "sd"};
  reg.journal_runs = {15, 17};
  proto::RunFinished finished{4, "failed", std::string("caf\xe9 \xff"), std::numeric_limits<double>::quiet_NaN()};
  for (const proto::Envelope& e : {proto::Envelope{1, samples}, proto::Envelope{2, started},
                                    proto::Envelope{std::numeric_limits<uint64_t>::max(), reg},
                                    proto::Envelope{3, finished}}) {
    CAPTURE(proto::type_name(e.body));
    std::string tree = frame_through_tree(e);
    // encode() turns bytes that are not UTF-8 into U+FFFD, after writing; the tree's text gets the same repair.
    if (invalid_utf8_at(tree)) tree = utf8_repaired(tree);
    CHECK(proto::encode(e) == tree);
  }
}
