// Private to the PgStore sources: the chunked form of minibatches and samples (sql/016_compact_measurements.sql)
// as COPY text, the coverage arithmetic that keeps ingest exactly-once per minibatch and per sample, and the
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

// Rows in PostgreSQL's COPY text format, built in one buffer. Numbers are written as shortest round-trip
// decimals: doubles for float8 columns, floats for real[] arrays (what PostgreSQL stores, so the text is
// short and the stored value the same as the server's own rounding would give).
class CopyText {
 public:
  void field(int64_t v);
  void field(double v);                        // non-finite: \N (NOT NULL columns reject it loudly)
  void field(const std::optional<double>& v);
  void real_array(const std::vector<double>& v);                 // real[]; throws std::out_of_range past float
  void real_array(const std::vector<std::optional<double>>& v);  // nullopt elements as NULL
  void double_array(const std::vector<double>& v);
  void integer_array(const std::vector<int64_t>& v);
  void null();
  void end_row();
  const std::string& text() const { return text_; }
  bool empty() const { return text_.empty(); }
  static std::string number(double v);   // shortest round-trip decimal of a double

 private:
  void sep();
  void real(double v);
  std::string text_;
  bool first_ = true;
};

// An inclusive range of minibatch indices.
struct IndexRange {
  int64_t first = 0;
  int64_t last = 0;
  bool operator==(const IndexRange& o) const { return first == o.first && last == o.last; }
};

// The parts of [first, last] that none of `stored` covers, in order (stored ranges in any order, may reach
// beyond [first, last]). Each part lies in a gap between stored chunks, so chunks never overlap.
std::vector<IndexRange> uncovered(int64_t first, int64_t last, std::vector<IndexRange> stored);

// minibatch_chunks rows (campaign_id, run_id, epoch, first_idx, stall_s, compute_s, copy_s) for the parts
// `parts` of the message (indices as in m.first_index + i).
void append_minibatch_rows(CopyText& out, int64_t campaign_id, const proto::MinibatchChunk& m,
                           const std::vector<IndexRange>& parts);

// The samples ordered by t_s, each t_s once (the first of equal ones kept).
std::vector<proto::Sample> sorted_unique(std::vector<proto::Sample> samples);

// One sample_chunks row of `samples` (sorted_unique, non-empty). Throws std::out_of_range for a sample with
// more than 32,767 per-core values (core_n is smallint).
void append_sample_row(CopyText& out, int64_t campaign_id, int64_t run_id, const std::vector<proto::Sample>& samples);

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
