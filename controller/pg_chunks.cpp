// Chunked minibatches and samples: binary arrays, coverage, stored-chunk parsing (see pg_chunks.hpp).
#include "controller/pg_chunks.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstring>
#include <limits>
#include <stdexcept>

namespace jetsweep::controller::chunks {

std::string number(double v) {
  char buf[32];
  auto r = std::to_chars(buf, buf + sizeof buf, v);
  return std::string(buf, r.ptr);
}

// ---- binary arrays
// array_recv's input: int32 dimensions (1), int32 whether any element is NULL, uint32 the element type's oid, then
// per dimension int32 length and int32 lower bound (1), then per element int32 byte length (-1: NULL) and its bytes
// (the type's send format: big-endian integers, IEEE 754 floats as big-endian integers).
namespace {

constexpr uint32_t kInt2Oid = 21, kInt8Oid = 20, kFloat4Oid = 700, kFloat8Oid = 701;

template <class U>
void put_big_endian(std::string& out, U v) {
  char bytes[sizeof(U)];
  for (size_t i = 0; i < sizeof(U); ++i) bytes[i] = static_cast<char>((v >> (8 * (sizeof(U) - 1 - i))) & 0xFF);
  out.append(bytes, sizeof(U));
}

// An array of `n` elements of type `oid` whose element i is written by put(out, i), or is NULL when it returns false
// before writing anything; each element `size` bytes.
template <class Put>
std::string binary_array(uint32_t oid, size_t n, size_t size, Put put) {
  std::string out;
  out.reserve(20 + n * (4 + size));
  put_big_endian<uint32_t>(out, 1);   // dimensions
  const size_t has_null_at = out.size();
  put_big_endian<uint32_t>(out, 0);   // any NULL: set below
  put_big_endian<uint32_t>(out, oid);
  put_big_endian<uint32_t>(out, static_cast<uint32_t>(n));
  put_big_endian<uint32_t>(out, 1);   // lower bound
  bool has_null = false;
  for (size_t i = 0; i < n; ++i) {
    const size_t length_at = out.size();
    put_big_endian<uint32_t>(out, static_cast<uint32_t>(size));
    if (!put(out, i)) {
      out.resize(length_at);
      put_big_endian<int32_t>(out, -1);
      has_null = true;
    }
  }
  if (has_null) out[has_null_at + 3] = 1;
  return out;
}

// A real (float4) element, or false for NULL (not finite).
bool put_real(std::string& out, double v) {
  if (!std::isfinite(v)) return false;
  if (std::fabs(v) > static_cast<double>(std::numeric_limits<float>::max()))
    throw std::out_of_range("value " + number(v) + " is out of range for storage as real (float4)");
  uint32_t bits;
  const float f = static_cast<float>(v);
  std::memcpy(&bits, &f, sizeof bits);
  put_big_endian(out, bits);
  return true;
}

}  // namespace

std::string real_array(const std::vector<double>& v) {
  return binary_array(kFloat4Oid, v.size(), 4, [&](std::string& out, size_t i) { return put_real(out, v[i]); });
}

std::string real_array(const std::vector<std::optional<double>>& v) {
  return binary_array(kFloat4Oid, v.size(), 4, [&](std::string& out, size_t i) { return v[i] && put_real(out, *v[i]); });
}

std::string double_array(const std::vector<double>& v) {
  return binary_array(kFloat8Oid, v.size(), 8, [&](std::string& out, size_t i) {
    if (!std::isfinite(v[i])) return false;
    uint64_t bits;
    std::memcpy(&bits, &v[i], sizeof bits);
    put_big_endian(out, bits);
    return true;
  });
}

std::string bigint_array(const std::vector<int64_t>& v) {
  return binary_array(kInt8Oid, v.size(), 8, [&](std::string& out, size_t i) {
    put_big_endian(out, static_cast<uint64_t>(v[i]));
    return true;
  });
}

std::string smallint_array(const std::vector<int64_t>& v) {
  return binary_array(kInt2Oid, v.size(), 2, [&](std::string& out, size_t i) {
    if (v[i] < std::numeric_limits<int16_t>::min() || v[i] > std::numeric_limits<int16_t>::max())
      throw std::out_of_range("value " + std::to_string(v[i]) + " is out of range for storage as smallint");
    put_big_endian(out, static_cast<uint16_t>(static_cast<int16_t>(v[i])));
    return true;
  });
}

// ---- coverage

std::vector<IndexRange> uncovered(int64_t first, int64_t last, std::vector<IndexRange> stored) {
  std::sort(stored.begin(), stored.end(), [](const IndexRange& a, const IndexRange& b) { return a.first < b.first; });
  std::vector<IndexRange> out;
  int64_t next = first;   // the lowest index not yet known to be covered
  for (const auto& s : stored) {
    if (next > last) break;
    if (s.last < next) continue;
    if (s.first > next) out.push_back({next, std::min(last, s.first - 1)});
    next = std::max(next, s.last + 1);
  }
  if (next <= last) out.push_back({next, last});
  return out;
}

std::vector<MinibatchRow> minibatch_rows(const proto::MinibatchChunk& m, const std::vector<IndexRange>& parts) {
  std::vector<MinibatchRow> rows;
  for (const auto& p : parts) {
    const auto from = static_cast<size_t>(p.first - m.first_index);
    const auto to = static_cast<size_t>(p.last - m.first_index) + 1;
    auto slice = [&](const std::vector<double>& v) { return std::vector<double>(v.begin() + from, v.begin() + to); };
    MinibatchRow& row = rows.emplace_back();
    row.first_idx = p.first;
    row.stall_s = real_array(slice(m.stall_s));
    row.compute_s = real_array(slice(m.compute_s));
    if (!m.copy_s.empty()) row.copy_s = real_array(slice(m.copy_s));
  }
  return rows;
}

// ---- samples

std::vector<proto::Sample> sorted_unique(std::vector<proto::Sample> samples) {
  // As agents send them: strictly increasing already (nothing to sort or drop; sorting was ~3% of the controller's
  // CPU in a burst). A NaN time is never "less", so it takes the sorting path as before.
  if (std::adjacent_find(samples.begin(), samples.end(), [](const proto::Sample& a, const proto::Sample& b) {
        return !(a.t_s < b.t_s);
      }) == samples.end())
    return samples;
  std::stable_sort(samples.begin(), samples.end(),
                   [](const proto::Sample& a, const proto::Sample& b) { return a.t_s < b.t_s; });
  samples.erase(std::unique(samples.begin(), samples.end(),
                            [](const proto::Sample& a, const proto::Sample& b) { return a.t_s == b.t_s; }),
                samples.end());
  return samples;
}

SampleRow sample_row(const std::vector<proto::Sample>& samples) {
  std::vector<double> t, util;
  std::vector<std::optional<double>> freq, power, temp;
  std::vector<int64_t> mem, disk, core_n;
  std::vector<double> cores;
  for (const auto& s : samples) {
    if (s.core_util_pct.size() > static_cast<size_t>(std::numeric_limits<int16_t>::max()))
      throw std::out_of_range("a sample has " + std::to_string(s.core_util_pct.size()) + " per-core values (at most " +
                              std::to_string(std::numeric_limits<int16_t>::max()) + " are stored)");
    if (!std::isfinite(s.t_s)) throw std::out_of_range("a sample's t_s is not a finite number");
    t.push_back(s.t_s);
    util.push_back(s.cpu_util_pct);
    freq.push_back(s.cpu_freq_mhz);
    power.push_back(s.power_w);
    temp.push_back(s.temp_max_c);
    mem.push_back(s.mem_used_kb);
    disk.push_back(s.disk_read_bytes);
    core_n.push_back(static_cast<int64_t>(s.core_util_pct.size()));
    cores.insert(cores.end(), s.core_util_pct.begin(), s.core_util_pct.end());
  }
  SampleRow row;
  row.t_first = t.front();
  row.t_last = t.back();
  row.t_s = double_array(t);
  row.cpu_util_pct = real_array(util);
  row.cpu_freq_mhz = real_array(freq);
  row.mem_used_kb = bigint_array(mem);
  row.disk_read_bytes = bigint_array(disk);
  row.power_w = real_array(power);
  row.temp_max_c = real_array(temp);
  row.core_n = smallint_array(core_n);
  row.core_util_pct = real_array(cores);
  return row;
}

namespace {

// Splits "{a,b,NULL}" into its element texts ("" for NULL); kDbError when it is not a flat array.
Result<std::vector<std::string_view>> elements(std::string_view text, const char* column) {
  if (text.size() < 2 || text.front() != '{' || text.back() != '}')
    return Status(Code::kDbError, std::string("stored ") + column + " is not a one-dimensional array: " +
                                      std::string(text.substr(0, 40)));
  std::vector<std::string_view> out;
  std::string_view body = text.substr(1, text.size() - 2);
  if (body.empty()) return out;
  size_t start = 0;
  while (true) {
    const size_t comma = body.find(',', start);
    std::string_view e = body.substr(start, comma == std::string_view::npos ? std::string_view::npos : comma - start);
    out.push_back(e == "NULL" ? std::string_view() : e);
    if (comma == std::string_view::npos) break;
    start = comma + 1;
  }
  return out;
}

Status bad_element(const char* column, std::string_view e) {
  return Status(Code::kDbError, std::string("stored ") + column + " has an element that is not a number: '" +
                                    std::string(e.substr(0, 40)) + "'");
}

Result<std::vector<int64_t>> parse_integer_array(std::string_view text, const char* column) {
  JS_ASSIGN_OR_RETURN(const auto parts, elements(text, column));
  std::vector<int64_t> out;
  out.reserve(parts.size());
  for (auto e : parts) {
    int64_t v = 0;
    auto r = std::from_chars(e.data(), e.data() + e.size(), v);
    if (e.empty() || r.ec != std::errc() || r.ptr != e.data() + e.size()) return bad_element(column, e);
    out.push_back(v);
  }
  return out;
}

}  // namespace

Result<std::vector<std::optional<double>>> parse_number_array(std::string_view text, const char* column) {
  JS_ASSIGN_OR_RETURN(const auto parts, elements(text, column));
  std::vector<std::optional<double>> out;
  out.reserve(parts.size());
  for (auto e : parts) {
    if (e.empty()) {
      out.emplace_back();
      continue;
    }
    double v = 0;
    auto r = std::from_chars(e.data(), e.data() + e.size(), v);
    if (r.ec != std::errc() || r.ptr != e.data() + e.size()) return bad_element(column, e);
    out.emplace_back(v);
  }
  return out;
}

Result<std::vector<proto::Sample>> parse_sample_chunk(const StoredSampleChunk& c) {
  JS_ASSIGN_OR_RETURN(const auto t, parse_number_array(c.t_s, "t_s"));
  JS_ASSIGN_OR_RETURN(const auto util, parse_number_array(c.cpu_util_pct, "cpu_util_pct"));
  JS_ASSIGN_OR_RETURN(const auto freq, parse_number_array(c.cpu_freq_mhz, "cpu_freq_mhz"));
  JS_ASSIGN_OR_RETURN(const auto mem, parse_integer_array(c.mem_used_kb, "mem_used_kb"));
  JS_ASSIGN_OR_RETURN(const auto disk, parse_integer_array(c.disk_read_bytes, "disk_read_bytes"));
  JS_ASSIGN_OR_RETURN(const auto power, parse_number_array(c.power_w, "power_w"));
  JS_ASSIGN_OR_RETURN(const auto temp, parse_number_array(c.temp_max_c, "temp_max_c"));
  JS_ASSIGN_OR_RETURN(const auto core_n, parse_integer_array(c.core_n, "core_n"));
  JS_ASSIGN_OR_RETURN(const auto cores, parse_number_array(c.core_util_pct, "core_util_pct"));
  const size_t n = t.size();
  if (util.size() != n || freq.size() != n || mem.size() != n || disk.size() != n || power.size() != n ||
      temp.size() != n || core_n.size() != n)
    return Status(Code::kDbError, "a stored sample chunk's arrays differ in length");
  std::vector<proto::Sample> out(n);
  size_t at = 0;
  for (size_t i = 0; i < n; ++i) {
    auto& s = out[i];
    if (!t[i] || !util[i]) return Status(Code::kDbError, "a stored sample chunk has a NULL t_s or cpu_util_pct");
    s.t_s = *t[i];
    s.cpu_util_pct = *util[i];
    s.cpu_freq_mhz = freq[i];
    s.mem_used_kb = mem[i];
    s.disk_read_bytes = disk[i];
    s.power_w = power[i];
    s.temp_max_c = temp[i];
    if (core_n[i] < 0 || at + static_cast<size_t>(core_n[i]) > cores.size())
      return Status(Code::kDbError, "a stored sample chunk's core_n does not match its core_util_pct");
    for (int64_t k = 0; k < core_n[i]; ++k, ++at) {
      if (!cores[at]) return Status(Code::kDbError, "a stored sample chunk has a NULL per-core value");
      s.core_util_pct.push_back(*cores[at]);
    }
  }
  if (at != cores.size()) return Status(Code::kDbError, "a stored sample chunk's core_n does not match its core_util_pct");
  return out;
}

}  // namespace jetsweep::controller::chunks
