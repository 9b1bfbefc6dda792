#include "common/text.hpp"

#include <locale.h>
#include <stdlib.h>

#include <cctype>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstring>
#include <system_error>

namespace jetsweep {

namespace {

bool is_space_or_nul(char c) {
  return c == ' ' || c == '\n' || c == '\t' || c == '\r' || c == '\0' || c == '\v' || c == '\f';
}

}  // namespace

std::vector<std::string> split(std::string_view text, char sep) {
  std::vector<std::string> out;
  size_t start = 0;
  while (true) {
    const size_t at = text.find(sep, start);
    out.emplace_back(text.substr(start, at == std::string_view::npos ? std::string_view::npos : at - start));
    if (at == std::string_view::npos) return out;
    start = at + 1;
  }
}

std::string trim(std::string_view text) {
  size_t b = 0, e = text.size();
  while (b < e && is_space_or_nul(text[b])) ++b;
  while (e > b && is_space_or_nul(text[e - 1])) --e;
  return std::string(text.substr(b, e - b));
}

std::optional<int64_t> parse_int(std::string_view text) {
  std::string t = trim(text);
  if (t.empty()) return std::nullopt;
  const char* first = t.data();
  const char* last = t.data() + t.size();
  if (*first == '+') ++first;
  int64_t v = 0;
  auto [ptr, ec] = std::from_chars(first, last, v);
  if (ec != std::errc() || ptr != last) return std::nullopt;
  return v;
}

std::optional<double> parse_double(std::string_view text) {
  std::string t = trim(text);
  if (t.empty()) return std::nullopt;
  double v = 0;
  const char* end = from_chars_double(t.data(), t.data() + t.size(), v);
  if (!end || end != t.data() + t.size()) return std::nullopt;
  return v;
}

const char* from_chars_double(const char* first, const char* last, double& value) {
  const char* p = first;
  if (p != last && *p == '-') ++p;
  if (p == last) return nullptr;
  // What std::from_chars (chars_format::general) refuses and strtod would take: blanks, '+', hexadecimal.
  const char c = *p;
  if (!std::isdigit(static_cast<unsigned char>(c)) && c != '.' && c != 'i' && c != 'I' && c != 'n' && c != 'N')
    return nullptr;
  if (c == '0' && p + 1 != last && (p[1] == 'x' || p[1] == 'X')) {   // "0x1p3": from_chars reads the "0"
    value = p != first ? -0.0 : 0.0;
    return p + 1;
  }
  char small[64];   // strtod needs a NUL-terminated copy
  std::string large;
  const size_t n = static_cast<size_t>(last - first);
  const char* text = small;
  if (n < sizeof small) {
    std::memcpy(small, first, n);
    small[n] = '\0';
  } else {
    large.assign(first, last);
    text = large.c_str();
  }
  // The C locale: '.' is the decimal point whatever LC_NUMERIC the process runs with.
  static const locale_t c_locale = newlocale(LC_ALL_MASK, "C", static_cast<locale_t>(0));
  char* end = nullptr;
  errno = 0;
  const double v = c_locale ? strtod_l(text, &end, c_locale) : std::strtod(text, &end);
  if (end == text) return nullptr;
  if (errno == ERANGE && (v == 0 || std::isinf(v))) return nullptr;   // overflow, or underflow to zero
  value = v;
  return first + (end - text);
}

std::vector<std::string> split_ws(std::string_view text) {
  std::vector<std::string> out;
  size_t i = 0;
  while (i < text.size()) {
    while (i < text.size() && is_space_or_nul(text[i])) ++i;
    size_t j = i;
    while (j < text.size() && !is_space_or_nul(text[j])) ++j;
    if (j > i) out.emplace_back(text.substr(i, j - i));
    i = j;
  }
  return out;
}

namespace {

// The length of the well-formed UTF-8 sequence at p[i] (1-4), or 0 when it is ill-formed; then `bad` is the length
// of its maximal subpart (the bytes that began a well-formed sequence before one broke it; at least 1), which
// Unicode's recommended practice replaces by one U+FFFD.
size_t utf8_sequence_at(const unsigned char* p, size_t i, size_t n, size_t& bad) {
  const unsigned c = p[i];
  if (c < 0x80) return 1;
  size_t len = 0;
  unsigned lo = 0x80, hi = 0xBF;   // the allowed range of the second byte (Unicode 15, table 3-7)
  if (c >= 0xC2 && c <= 0xDF) len = 2;
  else if (c >= 0xE0 && c <= 0xEF) {
    len = 3;
    if (c == 0xE0) lo = 0xA0;
    if (c == 0xED) hi = 0x9F;
  } else if (c >= 0xF0 && c <= 0xF4) {
    len = 4;
    if (c == 0xF0) lo = 0x90;
    if (c == 0xF4) hi = 0x8F;
  } else {
    bad = 1;
    return 0;
  }
  size_t k = 1;
  if (i + k < n && p[i + k] >= lo && p[i + k] <= hi) {
    ++k;
    while (k < len && i + k < n && p[i + k] >= 0x80 && p[i + k] <= 0xBF) ++k;
  }
  if (k == len) return len;
  bad = k;
  return 0;
}

}  // namespace

std::optional<size_t> invalid_utf8_at(std::string_view text) {
  const auto* p = reinterpret_cast<const unsigned char*>(text.data());
  const size_t n = text.size();
  size_t i = 0, bad = 0;
  while (i < n) {
    // ASCII eight bytes at a time (every frame encode() writes is checked; most are all ASCII).
    uint64_t word = 0;
    while (i + 8 <= n && (std::memcpy(&word, p + i, 8), (word & 0x8080808080808080ull) == 0)) i += 8;
    if (i == n) break;
    if (p[i] < 0x80) {
      ++i;
      continue;
    }
    const size_t len = utf8_sequence_at(p, i, n, bad);
    if (len == 0) return i;
    i += len;
  }
  return std::nullopt;
}

std::string nul_replaced(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (size_t at = 0;;) {
    const size_t nul = text.find('\0', at);
    out.append(text.substr(at, nul == std::string_view::npos ? std::string_view::npos : nul - at));
    if (nul == std::string_view::npos) return out;
    out += "\xEF\xBF\xBD";   // U+FFFD REPLACEMENT CHARACTER
    at = nul + 1;
  }
}

std::string utf8_repaired(std::string_view text) {
  const auto* p = reinterpret_cast<const unsigned char*>(text.data());
  const size_t n = text.size();
  std::string out;
  out.reserve(n + 8);
  size_t i = 0, bad = 0;
  while (i < n) {
    const size_t len = utf8_sequence_at(p, i, n, bad);
    if (len == 0) {
      out += "\xEF\xBF\xBD";   // U+FFFD REPLACEMENT CHARACTER
      i += bad;
    } else {
      out.append(text.data() + i, len);
      i += len;
    }
  }
  return out;
}

std::optional<size_t> control_char_at(std::string_view text, bool allow_line_breaks) {
  const auto* p = reinterpret_cast<const unsigned char*>(text.data());
  for (size_t i = 0; i < text.size(); ++i) {
    const unsigned c = p[i];
    if (c < 0x20) {
      if (allow_line_breaks && (c == '\t' || c == '\n' || c == '\r')) continue;
      return i;
    }
    if (c == 0x7F) return i;
    // U+0080..U+009F are C2 80..C2 9F in UTF-8; U+0085 (NEL) is a YAML line break.
    if (c == 0xC2 && i + 1 < text.size() && p[i + 1] >= 0x80 && p[i + 1] <= 0x9F &&
        (p[i + 1] != 0x85 || !allow_line_breaks))
      return i;
  }
  return std::nullopt;
}

}  // namespace jetsweep
