// Text helpers shared by every component: trimming, joining, strict number parsing (C locale, whole text).
// Free functions without shared state: any thread may call them.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace jetsweep {

// `text` without surrounding whitespace and NUL bytes (device-tree strings end in NUL).
std::string trim(std::string_view text);
// The whitespace-separated words of `text`.
std::vector<std::string> split_ws(std::string_view text);
// `text` split at every `sep` (empty fields kept; "" gives one empty field).
std::vector<std::string> split(std::string_view text, char sep);

// A decimal integer filling the trimmed text (optional leading '+' or '-'); nullopt otherwise or out of range.
std::optional<int64_t> parse_int(std::string_view text);
// A decimal double filling the trimmed text (inf and nan accepted); nullopt otherwise or out of range.
std::optional<double> parse_double(std::string_view text);
// std::from_chars for a double (decimal, inf, nan; no leading '+', blank or hexadecimal), which GCC < 11's library
// lacks: strtod in the C locale. Returns one past the number, or nullptr (value untouched) when none is there or it
// is out of range.
const char* from_chars_double(const char* first, const char* last, double& value);

// The byte offset of the first byte of `text` that does not belong to well-formed UTF-8 (overlong forms,
// surrogates and code points above U+10FFFF are not well formed), or nullopt when all of it is.
std::optional<size_t> invalid_utf8_at(std::string_view text);
// `text` with each ill-formed UTF-8 subsequence (its maximal subpart, as Unicode recommends) replaced by U+FFFD.
std::string utf8_repaired(std::string_view text);
// `text` with each NUL character replaced by U+FFFD: what a decoded message's text holds, since PostgreSQL's text
// cannot hold a NUL and libpq would silently cut a value there.
std::string nul_replaced(std::string_view text);
// The byte offset of the first control character of well-formed UTF-8 `text` that YAML 1.2 does not allow in a
// document: C0 controls other than tab, LF and CR, DEL, and C1 controls (U+0080..U+009F) other than NEL (U+0085);
// nullopt when there is none. With `allow_line_breaks` false, tab, LF and CR count as control characters too.
std::optional<size_t> control_char_at(std::string_view text, bool allow_line_breaks = true);

// The elements of `items` formatted by `format` (anything returning a string) with `sep` between them.
template <class Items, class Format>
std::string join(const Items& items, std::string_view sep, Format format) {
  std::string out;
  bool first = true;
  for (const auto& item : items) {
    if (!first) out += sep;
    first = false;
    out += format(item);
  }
  return out;
}
// The strings of `items` with `sep` between them.
template <class Items>
std::string join(const Items& items, std::string_view sep = ", ") {
  return join(items, sep, [](const auto& s) { return std::string(s); });
}

}  // namespace jetsweep
