// The chunk arithmetic and array forms of PgStore's measurement layout (controller/pg_chunks.hpp), without a
// server: coverage of resends, binary arrays as array_recv reads them, stored chunks parsed back.
#include <doctest/doctest.h>

#include <cmath>
#include <cstring>

#include "controller/pg_chunks.hpp"

using namespace jetsweep;
using namespace jetsweep::controller::chunks;

TEST_CASE("uncovered: the parts of a range no stored chunk holds, each inside a gap") {
  using V = std::vector<IndexRange>;
  CHECK(uncovered(0, 9, {}) == V{{0, 9}});
  CHECK(uncovered(0, 9, {{0, 9}}).empty());
  CHECK(uncovered(0, 9, {{0, 99}}).empty());
  CHECK(uncovered(4, 9, {{0, 5}}) == V{{6, 9}});
  CHECK(uncovered(0, 9, {{7, 8}, {2, 3}}) == V{{0, 1}, {4, 6}, {9, 9}});
  CHECK(uncovered(0, 3, {{10, 20}}) == V{{0, 3}});
  CHECK(uncovered(5, 5, {{0, 4}, {6, 9}}) == V{{5, 5}});
}

namespace {

// A binary array (pg_chunks.hpp) read back as array_recv would: its element type's oid and its elements' bytes
// (nullopt for NULL), checking the header on the way.
struct ReadArray {
  uint32_t oid = 0;
  bool has_null = false;
  std::vector<std::optional<std::string>> elements;
};
uint32_t be32(const std::string& b, size_t at) {
  uint32_t v = 0;
  for (size_t i = 0; i < 4; ++i) v = (v << 8) | static_cast<uint8_t>(b.at(at + i));
  return v;
}
ReadArray read_array(const std::string& b) {
  ReadArray a;
  CHECK(be32(b, 0) == 1);   // one dimension
  a.has_null = be32(b, 4) == 1;
  a.oid = be32(b, 8);
  const uint32_t n = be32(b, 12);
  CHECK(be32(b, 16) == 1);   // lower bound
  size_t at = 20;
  for (uint32_t i = 0; i < n; ++i) {
    const auto length = static_cast<int32_t>(be32(b, at));
    at += 4;
    if (length < 0) {
      a.elements.emplace_back();
    } else {
      a.elements.emplace_back(b.substr(at, static_cast<size_t>(length)));
      at += static_cast<size_t>(length);
    }
  }
  CHECK(at == b.size());
  return a;
}
std::vector<std::optional<double>> reals(const std::string& b) {
  const ReadArray a = read_array(b);
  CHECK(a.oid == 700);
  std::vector<std::optional<double>> out;
  for (const auto& e : a.elements) {
    if (!e) {
      out.emplace_back();
      continue;
    }
    REQUIRE(e->size() == 4);
    const uint32_t bits = be32(*e, 0);
    float f;
    std::memcpy(&f, &bits, 4);
    out.emplace_back(f);
  }
  return out;
}
using Reals = std::vector<std::optional<double>>;

}  // namespace

TEST_CASE("binary arrays: the bytes array_recv reads, big-endian, NULL for what is not finite") {
  // Written out by hand: one dimension, no NULL, float4 (oid 700), 2 elements from 1; 4 bytes each.
  const std::string one_two = real_array(std::vector<double>{1.0, -2.5});
  CHECK(one_two == std::string("\0\0\0\1" "\0\0\0\0" "\0\0\x02\xbc" "\0\0\0\2" "\0\0\0\1"
                               "\0\0\0\4" "\x3f\x80\0\0" "\0\0\0\4" "\xc0\x20\0\0", 36));
  CHECK(reals(real_array(std::vector<double>{0.1, std::nan(""), INFINITY})) ==
        Reals{static_cast<double>(0.1f), std::nullopt, std::nullopt});
  CHECK(read_array(real_array(std::vector<double>{0.1, std::nan("")})).has_null);
  CHECK_FALSE(read_array(real_array(std::vector<double>{0.1})).has_null);
  CHECK(reals(real_array(std::vector<std::optional<double>>{std::nullopt, 5.125})) == Reals{std::nullopt, 5.125});
  CHECK(reals(real_array(std::vector<double>{})).empty());
  const ReadArray d = read_array(double_array({0.1, std::nan("")}));
  CHECK(d.oid == 701);
  CHECK(d.elements[0] == std::string("\x3f\xb9\x99\x99\x99\x99\x99\x9a", 8));   // 0.1 as a double, exactly
  CHECK_FALSE(d.elements[1]);
  const ReadArray big = read_array(bigint_array({int64_t{1} << 40, -1}));
  CHECK(big.oid == 20);
  CHECK(big.elements[0] == std::string("\0\0\x01\0\0\0\0\0", 8));
  CHECK(big.elements[1] == std::string(8, '\xff'));
  const ReadArray small = read_array(smallint_array({2, -2}));
  CHECK(small.oid == 21);
  CHECK(small.elements[1] == std::string("\xff\xfe", 2));
  CHECK_THROWS_AS(smallint_array({40000}), std::out_of_range);
}

TEST_CASE("minibatch rows: a part of the message as one chunk row of float4 arrays") {
  proto::MinibatchChunk m{7, 2, 10, {0.1, 0.2, 0.3}, {1.5, 2.5, 3.5}, {}};
  auto rows = minibatch_rows(m, {{11, 12}});
  REQUIRE(rows.size() == 1);
  CHECK(rows[0].first_idx == 11);
  CHECK(reals(rows[0].stall_s) == Reals{static_cast<double>(0.2f), static_cast<double>(0.3f)});
  CHECK(reals(rows[0].compute_s) == Reals{2.5, 3.5});
  CHECK_FALSE(rows[0].copy_s);
  m.copy_s = {0.01, 0.02, 0.03};
  rows = minibatch_rows(m, {{10, 10}, {12, 12}});
  REQUIRE(rows.size() == 2);
  CHECK(rows[1].first_idx == 12);
  REQUIRE(rows[1].copy_s);
  CHECK(reals(*rows[1].copy_s) == Reals{static_cast<double>(0.03f)});
}

TEST_CASE("a value beyond float4 is refused rather than stored as infinity") {
  CHECK_THROWS_AS(real_array(std::vector<double>{1e39}), std::out_of_range);
}

TEST_CASE("samples: sorted, each t_s once, and a stored chunk parses back to what was written") {
  std::vector<proto::Sample> in(4);
  in[0].t_s = 2;
  in[1].t_s = 1;
  in[2].t_s = 2;     // a duplicate: the first of the two (index 0) stays
  in[2].cpu_util_pct = 99;
  in[3].t_s = 0.5;
  in[3].core_util_pct = {10, 20.25};
  in[3].power_w = 5.125;
  in[3].cpu_freq_mhz = 1420.5;
  in[3].mem_used_kb = int64_t{1} << 40;
  in[3].disk_read_bytes = 123456789012;
  in[1].core_util_pct = {1};
  in[1].temp_max_c = 40.5;
  auto sorted = sorted_unique(in);
  REQUIRE(sorted.size() == 3);
  CHECK(sorted[0].t_s == 0.5);
  CHECK(sorted[2].cpu_util_pct == 0);
  CHECK(sorted_unique(sorted) == sorted);   // already in order (as agents send): as it is
  std::vector<proto::Sample> tied = sorted;
  tied[2].t_s = tied[1].t_s;                // in order but with a tie: the first of the two stays
  tied[2].cpu_util_pct = 7;
  const auto untied = sorted_unique(tied);
  REQUIRE(untied.size() == 2);
  CHECK(untied[1] == sorted[1]);
  const SampleRow row = sample_row(sorted);
  CHECK(row.t_first == 0.5);
  CHECK(row.t_last == 2);
  CHECK(read_array(row.t_s).oid == 701);
  CHECK(reals(row.cpu_util_pct) == Reals{0, 0, 0});
  CHECK(reals(row.cpu_freq_mhz) == Reals{1420.5, std::nullopt, std::nullopt});
  CHECK(read_array(row.mem_used_kb).elements[0] == std::string("\0\0\x01\0\0\0\0\0", 8));
  CHECK(reals(row.power_w) == Reals{5.125, std::nullopt, std::nullopt});
  CHECK(reals(row.temp_max_c) == Reals{std::nullopt, 40.5, std::nullopt});
  CHECK(read_array(row.core_n).elements == std::vector<std::optional<std::string>>{
                                               std::string("\0\2", 2), std::string("\0\1", 2), std::string("\0\0", 2)});
  CHECK(reals(row.core_util_pct) == Reals{10, 20.25, 1});
  // The same arrays as PostgreSQL prints them, parsed back.
  auto parsed = parse_sample_chunk({"{0.5,1,2}", "{0,0,0}", "{1420.5,NULL,NULL}", "{1099511627776,0,0}",
                                    "{123456789012,0,0}", "{5.125,NULL,NULL}", "{NULL,40.5,NULL}", "{2,1,0}",
                                    "{10,20.25,1}"});
  REQUIRE(parsed.is_ok());
  CHECK(parsed.value() == sorted);
}

TEST_CASE("a stored chunk that is not what the layout promises is a clear error, not a crash") {
  StoredSampleChunk ok{"{1}", "{0}", "{NULL}", "{1}", "{1}", "{NULL}", "{NULL}", "{1}", "{5}"};
  CHECK(parse_sample_chunk(ok).is_ok());
  auto bad = ok;
  bad.core_n = "{2}";   // more per-core values claimed than stored
  CHECK(parse_sample_chunk(bad).status().message().find("core_n") != std::string::npos);
  bad = ok;
  bad.mem_used_kb = "{1.5}";
  CHECK(parse_sample_chunk(bad).status().message().find("mem_used_kb") != std::string::npos);
  bad = ok;
  bad.cpu_util_pct = "{0,1}";
  CHECK_FALSE(parse_sample_chunk(bad).is_ok());
  bad = ok;
  bad.t_s = "1";
  CHECK(parse_sample_chunk(bad).status().message().find("t_s") != std::string::npos);
}
