// Private to the PgStore sources: the chunked form of minibatches and samples (sql/016_compact_measurements.sql)
// as rows of binary arrays, the coverage arithmetic that keeps ingest exactly-once per minibatch and per sample, and the
// parser of stored chunks (PostgreSQL array text). Pure functions and values: any thread.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/protocol.hpp"
#include "common/status.hpp"

namespace jetsweep::controller::chunks {

// The shortest decimal that reads back as exactly `v` (t_s bounds compared with stored values travel as it).
std::string number(double v);

// One-dimensional arrays in PostgreSQL's binary format (what array_recv reads), sent as binary query parameters:
// the server takes each element as it is, without parsing text (array_in and strtof were the largest part of its
// ingest work). Non-finite values and nullopt are NULL elements, as the text form wrote them.
std::string real_array(const std::vector<double>& v);                  // real[]; throws std::out_of_range past float
std::string real_array(const std::vector<std::optional<double>>& v);   // real[]; as above
std::string double_array(const std::vector<double>& v);                // double precision[]
std::string bigint_array(const std::vector<int64_t>& v);               // bigint[]
std::string smallint_array(const std::vector<int64_t>& v);             // smallint[]; throws std::out_of_range past int16

// An inclusive range of minibatch indices.
struct IndexRange {
  int64_t first = 0;
  int64_t last = 0;
  bool operator==(const IndexRange& o) const { return first == o.first && last == o.last; }
};

// The parts of [first, last] that none of `stored` covers, in order (stored ranges in any order, may reach
// beyond [first, last]). Each part lies in a gap between stored chunks, so chunks never overlap.
std::vector<IndexRange> uncovered(int64_t first, int64_t last, std::vector<IndexRange> stored);

// A minibatch_chunks row for a part of a message (campaign, run and epoch are the message's): its first index
// and its arrays (binary, above; copy_s absent when the message has none).
struct MinibatchRow {
  int64_t first_idx = 0;
  std::string stall_s, compute_s;
  std::optional<std::string> copy_s;
};
// The rows of the parts `parts` of the message (indices as in m.first_index + i).
std::vector<MinibatchRow> minibatch_rows(const proto::MinibatchChunk& m, const std::vector<IndexRange>& parts);

// The samples ordered by t_s, each t_s once (the first of equal ones kept).
std::vector<proto::Sample> sorted_unique(std::vector<proto::Sample> samples);

// A sample_chunks row (campaign and run are the message's): its time bounds and its arrays (binary, above).
struct SampleRow {
  double t_first = 0, t_last = 0;
  std::string t_s, cpu_util_pct, cpu_freq_mhz, mem_used_kb, disk_read_bytes, power_w, temp_max_c, core_n, core_util_pct;
};
// The row of `samples` (sorted_unique, non-empty). Throws std::out_of_range for a sample with more than 32,767
// per-core values (core_n is smallint) or a value past float.
SampleRow sample_row(const std::vector<proto::Sample>& samples);

// The columns of a stored sample_chunks row, as PostgreSQL prints them (array text).
struct StoredSampleChunk {
  std::string t_s, cpu_util_pct, cpu_freq_mhz, mem_used_kb, disk_read_bytes, power_w, temp_max_c, core_n,
      core_util_pct;
};
// Its samples; kDbError naming the column when the text is not the array the layout promises.
Result<std::vector<proto::Sample>> parse_sample_chunk(const StoredSampleChunk& c);

// Elements of a one-dimensional numeric array's text ("{1,2.5,NULL}"); nullopt for NULL elements.
Result<std::vector<std::optional<double>>> parse_number_array(std::string_view text, const char* column);

}  // namespace jetsweep::controller::chunks
