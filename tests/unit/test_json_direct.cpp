// decode's two paths held to each other: a frame the direct reader (common/json_direct.hpp) reads, it reads as the tree
// path (boost::json tree, then FieldReader) does, to the bit; whatever it refuses, decode reads through the tree.
// The frames: every message type's pinned frame, each mutated at every value (nulls, wrong kinds, integers written
// as fractions or beyond int64, overflowing numbers, a NUL, -0), every key dropped, repeated or renamed, and cut
// short; and chunks of random measured-looking numbers.
#include <doctest/doctest.h>

#include <boost/json.hpp>
#include <cmath>
#include <cstring>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include "common/json_direct.hpp"
#include "common/json_parse.hpp"
#include "common/protocol.hpp"
#include "common/status.hpp"

using namespace jetsweep;
using namespace jetsweep::proto;

namespace {

const char* const kFrames[] = {
#include "wire_frames.inc"
};

struct Agreement {
  int direct = 0;     // frames the direct reader read (and the tree path read the same)
  int refused = 0;    // frames it refused
};

// The two paths agree on `frame`: what the direct reader reads, the tree path reads equal and encodes the same
// (-0.0 and 0.0 compare equal; their text does not); and decode is the direct reading, or the tree path's.
void check_agree(const std::string& frame, Agreement& tally) {
  const auto tree = decode_through_tree(frame);
  const auto direct = decode_direct(frame);
  const auto decoded = decode(frame);
  if (direct) {
    ++tally.direct;
    REQUIRE_MESSAGE(tree.is_ok(), "the direct reader read a frame the tree path refuses (" << tree.status().to_string()
                                                                                            << "): " << frame);
    REQUIRE_MESSAGE(*direct == tree.value(), "the two paths read different messages: " << frame);
    REQUIRE_MESSAGE(encode(*direct) == encode(tree.value()), "the two paths read different numbers: " << frame);
    REQUIRE(decoded.is_ok());
    REQUIRE(encode(decoded.value()) == encode(*direct));
  } else {
    ++tally.refused;
    REQUIRE(decoded.is_ok() == tree.is_ok());
    if (tree.is_ok()) REQUIRE(encode(decoded.value()) == encode(tree.value()));
    else REQUIRE(decoded.status().message() == tree.status().message());
  }
}

// Calls f(frame) for `frame` with the value at every place in it (every member and element, nested ones too)
// replaced by each of `tokens` (raw JSON text).
void each_value_replaced(const std::string& frame, const std::vector<std::string>& tokens,
                         const std::function<void(const std::string&)>& f) {
  boost::json::value doc = boost::json::parse(frame);
  const std::string kMark = "\x01mark\x01";
  const std::string kMarkText = boost::json::serialize(boost::json::value(kMark));
  std::function<void(boost::json::value&)> walk = [&](boost::json::value& v) {
    auto visit_slot = [&](boost::json::value& slot) {
      boost::json::value kept = slot;
      slot = kMark;
      const std::string text = boost::json::serialize(doc);
      const size_t at = text.find(kMarkText);
      for (const auto& token : tokens)
        f(text.substr(0, at) + token + text.substr(at + kMarkText.size()));
      slot = std::move(kept);
      walk(slot);
    };
    if (v.is_object()) {
      for (auto& kv : v.get_object()) visit_slot(kv.value());
    } else if (v.is_array()) {
      for (auto& e : v.get_array()) visit_slot(e);
    }
  };
  walk(doc);
}

// Calls f(frame) for `frame` with each key-value pair (of the top object and of nested objects) dropped, repeated,
// and renamed to an unknown key.
void each_member_changed(const std::string& frame, const std::function<void(const std::string&)>& f) {
  boost::json::value doc = boost::json::parse(frame);
  std::function<void(boost::json::value&)> walk = [&](boost::json::value& v) {
    if (v.is_array()) {
      for (auto& e : v.get_array()) walk(e);
      return;
    }
    if (!v.is_object()) return;
    auto& o = v.get_object();
    std::vector<std::string> keys;
    for (const auto& kv : o) keys.emplace_back(kv.key());
    const boost::json::object original = o;
    for (const auto& key : keys) {
      boost::json::value kept = o.at(key);
      o.erase(key);
      const std::string without = boost::json::serialize(doc);
      f(without);
      o[key] = kept;   // now last
      const std::string moved = boost::json::serialize(doc);
      f(moved);
      const std::string pair = boost::json::serialize(boost::json::value(key)) + ":";
      o.erase(key);
      o["zz_unknown"] = kept;
      f(boost::json::serialize(doc));
      o.erase("zz_unknown");
      o[key] = kept;
      const std::string text = boost::json::serialize(doc);   // the document with this object's key last
      const std::string kept_text = boost::json::serialize(kept);
      // Repeated: `,"key":value` (the same value, then another) inserted right after the key's own pair.
      const size_t at = text.find(pair + kept_text);
      if (at != std::string::npos) {
        const size_t end = at + pair.size() + kept_text.size();
        f(text.substr(0, end) + "," + pair + kept_text + text.substr(end));
        f(text.substr(0, end) + "," + pair + "1" + text.substr(end));
      }
      o = original;   // the keys in their order again, for the next key and for the members nested in this one
      walk(o.at(key));
    }
  };
  walk(doc);
}

}  // namespace

namespace direct_test {
// Records with the member kinds no message read directly has today (a boolean, integer arrays, a nested record that is
// not optional, optional booleans and strings, a count), each with a bound, to hold the reader's every path to the
// tree's. Members not required with defaults other than empty (x, name, count): absent or null, both paths keep them.
struct Inner {
  int64_t n = 0;
  double x = 0.25;
  std::optional<bool> flag;
};
BOOST_DESCRIBE_STRUCT(Inner, (), (n, x, flag))
JS_WIRE_RULES(Inner, (&Inner::n), ())
void validate(json::FieldReader& r, const Inner& v) {
  if (r.ok() && v.n > 100) r.fail("n", "must be <= 100");
}
struct Outer {
  bool on = false;
  std::vector<int64_t> ids;
  Inner inner;
  std::vector<Inner> more;
  std::string name = "anon";
  uint64_t count = 3;
  std::optional<std::string> note;
  std::optional<int64_t> maybe;
  std::optional<uint64_t> big;
};
BOOST_DESCRIBE_STRUCT(Outer, (), (on, ids, inner, more, name, count, note, maybe, big))
JS_WIRE_RULES(Outer, (&Outer::on, &Outer::inner), ())
void validate(json::FieldReader& r, const Outer& v) {
  if (r.ok() && v.ids.size() > 3) r.fail("ids", "at most 3");
}
}  // namespace direct_test

namespace {

// The direct reader and the tree path (parse_exact, then the description and validate) agree on `text`.
void check_agree_outer(const std::string& text, Agreement& tally) {
  using direct_test::Outer;
  static_assert(json::direct::kDirectReadable<Outer>);
  Outer direct;
  const bool read = json::read_direct(text, {{json::direct::record_table<Outer>(), &direct}});
  boost::system::error_code ec;
  const boost::json::value tree_value = json::parse_exact(text, ec);
  Outer tree;
  const Status tree_status = ec ? protocol_error("malformed") : json::described_from_json(tree_value, "outer", tree);
  if (!read) {
    ++tally.refused;
    return;
  }
  ++tally.direct;
  REQUIRE_MESSAGE(tree_status.is_ok(), "the direct reader read what the tree path refuses ("
                                           << tree_status.to_string() << "): " << text);
  REQUIRE_MESSAGE(boost::json::serialize(json::described_to_json(direct)) ==
                      boost::json::serialize(json::described_to_json(tree)),
                  "the two paths read different records: " << text);
}

}  // namespace

TEST_CASE("a required member given as null is refused as its kind by both paths, not read as false or \"\"") {
  using direct_test::Outer;
  const auto tree_refusal = [](const std::string& text) {
    Outer out;
    const Status s = json::described_from_json(boost::json::parse(text), "outer", out);
    return s.is_ok() ? std::string() : s.message();
  };
  const std::string inner = R"("inner":{"n":1})";
  CHECK(tree_refusal(R"({"on":null,)" + inner + "}") == "outer field 'on': expected a boolean, got null");
  CHECK(tree_refusal(R"({"on":true,"inner":{"n":null}})") == "outer field 'inner', field 'n': expected an integer, got null");
  CHECK(tree_refusal(R"({"on":false,)" + inner + "}").empty());
  Outer direct;
  CHECK_FALSE(json::read_direct(R"({"on":null,)" + inner + "}", {{json::direct::record_table<Outer>(), &direct}}));
}

TEST_CASE("a record of every member kind the reader takes: every value and key changed, escaped keys, long strings") {
  const std::string doc =
      R"({"on":true,"ids":[1,2],"inner":{"n":5,"x":1.5,"flag":false},"more":[{"n":1,"x":2},{"n":2,"x":-0.0,"flag":null}],)"
      R"("name":"a","count":7,"note":null,"maybe":3,"big":9})";
  const std::vector<std::string> tokens = {
      "null", "0", "-0", "1", "-1", "101", "1.5", "2.0", "1E0", "1e999", "9223372036854775807", "9223372036854775808",
      "18446744073709551615", "\"\"", "\"x\"", "\"a\\u0000b\"", "true", "false", "[]", "{}", "[1]", "[1,2,3,4]",
      "[1.5]", "[null]", "[{}]", "{\"n\":1}", "{\"n\":1,\"n\":2}", "[{\"n\":200}]", "[[1]]"};
  Agreement tally;
  check_agree_outer(doc, tally);
  REQUIRE(tally.direct == 1);
  each_value_replaced(doc, tokens, [&](const std::string& f) { check_agree_outer(f, tally); });
  each_member_changed(doc, [&](const std::string& f) { check_agree_outer(f, tally); });
  // Keys and strings with escapes, and strings longer than the parser's buffer (read in parts).
  std::string long_name;
  for (int i = 0; i < 3000; ++i) long_name += i % 7 ? "ab" : "\\n\\u00e9\\u0000";
  const int before = tally.direct;
  for (const std::string& f : std::vector<std::string>{R"({"o\u006e":true,"inner":{"\u006e":1}})",
                                                       R"({"on":true,"inner":{"n":1},"name":")" + long_name + "\"}",
                                                       R"({"on":true,"inner":{"n":1},"n\u0061me":")" + long_name + "\"}"})
    check_agree_outer(f, tally);
  CHECK(tally.direct == before + 3);   // read directly, each equal to the tree's reading
  for (const std::string& f : {R"({"on":true,"inner":{"n":1},"count":-1})", R"({"on":true,"inner":{"n":1},"big":-1})",
                               R"({"on":true})", R"({"inner":{"n":1}})"})
    check_agree_outer(f, tally);
  CHECK(tally.direct == before + 3);   // refused: a negative count, a required member absent
  // Members not required, absent (or null, which the direct reader leaves to the tree): their defaults, not 0 or "".
  {
    using direct_test::Outer;
    Outer direct;
    REQUIRE(json::read_direct(R"({"on":true,"inner":{"n":1}})", {{json::direct::record_table<Outer>(), &direct}}));
    CHECK(direct.name == "anon");
    CHECK(direct.count == 3);
    CHECK(direct.inner.x == 0.25);
    Outer tree;
    REQUIRE(json::described_from_json(boost::json::parse(R"({"on":true,"inner":{"n":1,"x":null},"name":null,"count":null})"),
                                      "outer", tree)
                .is_ok());
    CHECK(tree.name == "anon");
    CHECK(tree.count == 3);
    CHECK(tree.inner.x == 0.25);
  }
  MESSAGE(tally.direct << " read directly, " << tally.refused << " through the tree");
  CHECK(tally.direct > 100);
  CHECK(tally.refused > 300);
}

TEST_CASE("the direct reader reads every pinned frame of the result messages, and each as the tree path does") {
  Agreement tally;
  for (const char* frame : kFrames) check_agree(frame, tally);
  // The result messages, which carry nearly every byte a controller reads, are read directly.
  for (const char* frame : kFrames) {
    const std::string_view f(frame);
    CAPTURE(f);
    if (f.find("\"type\":\"samples\"") != std::string_view::npos ||
        f.find("\"type\":\"minibatches\"") != std::string_view::npos ||
        f.find("\"type\":\"heartbeat\"") != std::string_view::npos ||
        f.find("\"type\":\"ack\"") != std::string_view::npos)
      CHECK(decode_direct(f).has_value());
  }
  CHECK(json::direct::kDirectReadable<SampleChunk>);
  CHECK(json::direct::kDirectReadable<MinibatchChunk>);
  CHECK(tally.direct >= 8);
  MESSAGE(tally.direct << " pinned frames read directly, " << tally.refused << " through the tree");
}

TEST_CASE("every value of every pinned frame changed: the direct reader reads the frame as the tree path or leaves it") {
  const std::vector<std::string> tokens = {
      "null", "0", "-0", "1", "-1", "2", "1.5", "-0.0", "1E0", "2.0", "1e999", "-1e999", "4.9e-324",
      "9223372036854775807", "9223372036854775808", "18446744073709551615", "-9223372036854775808",
      "0.49712764980921675", "1e308", "\"\"", "\"x\"", "\"a\\u0000b\"", "\"done\"", "true", "false", "[]", "{}",
      "[1]", "[1.5,2]", "[null]", "[\"x\"]", "[1e999]", "[{}]", "{\"t_s\":1}", "[[1]]"};
  Agreement tally;
  for (const char* frame : kFrames) each_value_replaced(frame, tokens, [&](const std::string& f) { check_agree(f, tally); });
  MESSAGE(tally.direct << " mutated frames read directly, " << tally.refused << " through the tree");
  // Some of each: a reader that refused everything, or read everything, would not be tested here.
  CHECK(tally.direct > 500);
  CHECK(tally.refused > 1000);
}

TEST_CASE("every key of every pinned frame dropped, moved, repeated or unknown: read as the tree path or left") {
  Agreement tally;
  for (const char* frame : kFrames) each_member_changed(frame, [&](const std::string& f) { check_agree(f, tally); });
  MESSAGE(tally.direct << " changed frames read directly, " << tally.refused << " through the tree");
  CHECK(tally.direct > 50);
  CHECK(tally.refused > 50);
}

TEST_CASE("frames cut short, with bytes after them, with text that is not UTF-8, or spaced: the paths agree") {
  Agreement tally;
  for (const char* frame : kFrames) {
    const std::string f(frame);
    for (size_t n = 0; n < f.size(); n += 1 + f.size() / 40) check_agree(f.substr(0, n), tally);
    check_agree(f + " ", tally);
    check_agree(f + "x", tally);
    check_agree(f + "{}", tally);
    check_agree(" " + f, tally);
    std::string spaced;
    for (char c : f) spaced += c == ',' ? std::string(", ") : std::string(1, c);
    check_agree(spaced, tally);
    const size_t quote = f.rfind("\":\"");
    if (quote != std::string::npos) {
      std::string latin1 = f;
      latin1.insert(quote + 3, "\xe9");   // a Latin-1 byte in a string: the tree path reads it as U+FFFD
      check_agree(latin1, tally);
    }
  }
  CHECK(tally.direct > 0);
  CHECK(tally.refused > 0);
}

TEST_CASE("chunks of random numbers: the direct reader reads every double to the bit") {
  std::mt19937_64 rng(7);
  std::uniform_real_distribution<double> seconds(0, 2);
  std::uniform_int_distribution<int> exponent(-30, 3);
  Agreement tally;
  for (int round = 0; round < 20; ++round) {
    MinibatchChunk m{5, round, 4096 * round, {}, {}, {}};
    SampleChunk s{5, 1764600000.0 + seconds(rng), {}};
    for (int i = 0; i < 4096; ++i) {
      // Measured-looking durations, and random mantissas at many scales (16-17 significant digits).
      m.stall_s.push_back(i % 2 ? seconds(rng) : std::ldexp(static_cast<double>(rng() >> 11), exponent(rng) - 53));
      m.compute_s.push_back(seconds(rng) * 1e-3);
    }
    for (int i = 0; i < 512; ++i) {
      Sample x;
      x.t_s = i * 0.01 + seconds(rng) * 1e-3;
      x.cpu_util_pct = seconds(rng) * 50;
      for (int c = 0; c < 8; ++c) x.core_util_pct.push_back(seconds(rng) * 50);
      if (i % 3) x.cpu_freq_mhz = 1190.4 + seconds(rng);
      x.mem_used_kb = static_cast<int64_t>(rng() >> 40);
      x.disk_read_bytes = static_cast<int64_t>(rng() >> 30);
      if (i % 5) x.power_w = seconds(rng) * 10;
      if (i % 7) x.temp_max_c = 40 + seconds(rng);
      s.samples.push_back(x);
    }
    for (const Envelope& e : {Envelope{1, m}, Envelope{2, s}}) {
      const std::string frame = encode(e);
      const auto direct = decode_direct(frame);
      REQUIRE(direct.has_value());
      CHECK(*direct == e);
      CHECK(encode(*direct) == frame);
      check_agree(frame, tally);
    }
  }
  CHECK(tally.direct == 40);
}

TEST_CASE("an error in a chunk read directly is named as before: the place, the field and the element") {
  SampleChunk s{5, std::nullopt, {}};
  for (int i = 0; i < 3; ++i) s.samples.push_back(Sample{0.5 * i, 10, {1, 2}, std::nullopt, 0, 0, std::nullopt, std::nullopt});
  std::string frame = encode(Envelope{3, s});
  const std::string bad = "\"t_s\":1E0";   // sample 2's time
  const size_t at = frame.find(bad);
  REQUIRE(at != std::string::npos);
  frame.replace(at, bad.size(), "\"t_s\":\"soon\"");
  CHECK_FALSE(decode_direct(frame).has_value());
  const auto decoded = decode(frame);
  REQUIRE_FALSE(decoded.is_ok());
  CHECK(decoded.status().message() == decode_through_tree(frame).status().message());
  CHECK(decoded.status().message().find("samples[2]") != std::string::npos);
  CHECK(decoded.status().message().find("'t_s'") != std::string::npos);
}
