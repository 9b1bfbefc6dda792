// The chunk arithmetic and text forms of PgStore's measurement layout (controller/pg_chunks.hpp), without a
// server: coverage of resends, COPY text of float4 arrays, stored chunks parsed back.
#include <doctest/doctest.h>

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

TEST_CASE("minibatch rows: a part of the message as one chunk row, reals as shortest float text") {
  proto::MinibatchChunk m{7, 2, 10, {0.1, 0.2, 0.3}, {1.5, 2.5, 3.5}, {}};
  CopyText rows;
  append_minibatch_rows(rows, 3, m, {{11, 12}});
  CHECK(rows.text() == "3\t7\t2\t11\t{0.2,0.3}\t{2.5,3.5}\t\\N\n");
  m.copy_s = {0.01, 0.02, 0.03};
  CopyText with_copy;
  append_minibatch_rows(with_copy, 3, m, {{10, 10}});
  CHECK(with_copy.text() == "3\t7\t2\t10\t{0.1}\t{1.5}\t{0.01}\n");
}

TEST_CASE("a value beyond float4 is refused rather than stored as infinity") {
  CopyText rows;
  CHECK_THROWS_AS(rows.real_array(std::vector<double>{1e39}), std::out_of_range);
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
  CopyText row;
  append_sample_row(row, 1, 2, sorted);
  CHECK(row.text() == "1\t2\t0.5\t2\t{0.5,1,2}\t{0,0,0}\t{1420.5,NULL,NULL}\t{1099511627776,0,0}\t"
                      "{123456789012,0,0}\t{5.125,NULL,NULL}\t{NULL,40.5,NULL}\t{2,1,0}\t{10,20.25,1}\n");
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
