// Chunked minibatches and samples: COPY text, coverage, stored-chunk parsing (see pg_chunks.hpp).
#include "controller/pg_chunks.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <limits>
#include <stdexcept>

namespace jetsweep::controller::chunks {

// ---- CopyText

std::string CopyText::number(double v) {
  char buf[32];
  auto r = std::to_chars(buf, buf + sizeof buf, v);
  return std::string(buf, r.ptr);
}

void CopyText::sep() {
  if (!first_) text_ += '\t';
  first_ = false;
}

void CopyText::null() {
  sep();
  text_ += "\\N";
}

void CopyText::end_row() {
  text_ += '\n';
  first_ = true;
}

void CopyText::field(int64_t v) {
  sep();
  char buf[24];
  auto r = std::to_chars(buf, buf + sizeof buf, v);
  text_.append(buf, r.ptr);
}

void CopyText::field(double v) {
  if (!std::isfinite(v)) return null();
  sep();
  text_ += number(v);
}

void CopyText::field(const std::optional<double>& v) {
  if (v) return field(*v);
  null();
}

void CopyText::real(double v) {
  if (!std::isfinite(v)) {
    text_ += "NULL";
    return;
  }
  if (std::fabs(v) > static_cast<double>(std::numeric_limits<float>::max()))
    throw std::out_of_range("value " + number(v) + " is out of range for storage as real (float4)");
  char buf[24];
  auto r = std::to_chars(buf, buf + sizeof buf, static_cast<float>(v));
  text_.append(buf, r.ptr);
}

void CopyText::real_array(const std::vector<double>& v) {
  sep();
  text_ += '{';
  for (size_t i = 0; i < v.size(); ++i) {
    if (i) text_ += ',';
    real(v[i]);
  }
  text_ += '}';
}

void CopyText::real_array(const std::vector<std::optional<double>>& v) {
  sep();
  text_ += '{';
  for (size_t i = 0; i < v.size(); ++i) {
    if (i) text_ += ',';
    if (v[i]) real(*v[i]);
    else text_ += "NULL";
  }
  text_ += '}';
}

void CopyText::double_array(const std::vector<double>& v) {
  sep();
  text_ += '{';
  for (size_t i = 0; i < v.size(); ++i) {
    if (i) text_ += ',';
    if (std::isfinite(v[i])) text_ += number(v[i]);
    else text_ += "NULL";
  }
  text_ += '}';
}

void CopyText::integer_array(const std::vector<int64_t>& v) {
  sep();
  text_ += '{';
  char buf[24];
  for (size_t i = 0; i < v.size(); ++i) {
    if (i) text_ += ',';
    auto r = std::to_chars(buf, buf + sizeof buf, v[i]);
    text_.append(buf, r.ptr);
  }
  text_ += '}';
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

void append_minibatch_rows(CopyText& out, int64_t campaign_id, const proto::MinibatchChunk& m,
                           const std::vector<IndexRange>& parts) {
  for (const auto& p : parts) {
    const auto from = static_cast<size_t>(p.first - m.first_index);
    const auto to = static_cast<size_t>(p.last - m.first_index) + 1;
    auto slice = [&](const std::vector<double>& v) { return std::vector<double>(v.begin() + from, v.begin() + to); };
    out.field(campaign_id);
    out.field(m.run_id);
    out.field(m.epoch);
    out.field(p.first);
    out.real_array(slice(m.stall_s));
    out.real_array(slice(m.compute_s));
    if (m.copy_s.empty()) out.null();
    else out.real_array(slice(m.copy_s));
    out.end_row();
  }
}

// ---- samples

std::vector<proto::Sample> sorted_unique(std::vector<proto::Sample> samples) {
  std::stable_sort(samples.begin(), samples.end(),
                   [](const proto::Sample& a, const proto::Sample& b) { return a.t_s < b.t_s; });
  samples.erase(std::unique(samples.begin(), samples.end(),
                            [](const proto::Sample& a, const proto::Sample& b) { return a.t_s == b.t_s; }),
                samples.end());
  return samples;
}

void append_sample_row(CopyText& out, int64_t campaign_id, int64_t run_id, const std::vector<proto::Sample>& samples) {
  std::vector<double> t, util;
  std::vector<std::optional<double>> freq, power, temp;
  std::vector<int64_t> mem, disk, core_n;
  std::vector<double> cores;
  for (const auto& s : samples) {
    if (s.core_util_pct.size() > static_cast<size_t>(std::numeric_limits<int16_t>::max()))
      throw std::out_of_range("a sample has " + std::to_string(s.core_util_pct.size()) + " per-core values (at most " +
                              std::to_string(std::numeric_limits<int16_t>::max()) + " are stored)");
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
  out.field(campaign_id);
  out.field(run_id);
  out.field(t.front());
  out.field(t.back());
  out.double_array(t);
  out.real_array(util);
  out.real_array(freq);
  out.integer_array(mem);
  out.integer_array(disk);
  out.real_array(power);
  out.real_array(temp);
  out.integer_array(core_n);
  out.real_array(cores);
  out.end_row();
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
