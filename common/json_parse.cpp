// json::parse_exact: Boost.JSON's basic_parser with a handler that builds the value as boost::json::parser's does,
// except that a double is converted again from its text with std::from_chars (correctly rounded).
#include "common/json_parse.hpp"

#include <boost/json/basic_parser_impl.hpp>

#include "common/text.hpp"

#include <charconv>
#include <string>

namespace jetsweep::json {
namespace bj = boost::json;

namespace {

// Whether Boost.JSON 1.81 converted the JSON number `text` correctly rounded: it computes mantissa * 10^e (or
// mantissa / 10^-e) in one IEEE operation, exact when the mantissa has at most 15 significant digits (below 2^53) and
// |e| <= 22 (10^|e| is a double). Short figures (5.125, 1E-3) take this path; the 16-17 digits of a computed value
// do not, and from_chars converts them (~20 ns each).
// False is always safe (from_chars then converts it): a text longer than 16 characters is not scanned.
bool boost_is_exact(const char* p, const char* end) {
  if (end - p > 16) return false;
  int digits = 0, fraction = 0;
  bool leading = true, after_point = false;
  if (p < end && *p == '-') ++p;
  for (; p < end && *p != 'e' && *p != 'E'; ++p) {
    if (*p == '.') {
      after_point = true;
      continue;
    }
    fraction += after_point ? 1 : 0;
    if (leading && *p == '0') continue;
    leading = false;
    if (++digits > 15) return false;
  }
  long exponent = 0;
  if (p < end) {   // 'e' or 'E', an optional sign, digits
    ++p;
    const bool negative = p < end && *p == '-';
    if (p < end && (*p == '-' || *p == '+')) ++p;
    for (; p < end; ++p) {
      exponent = exponent * 10 + (*p - '0');
      if (exponent > 1000) return false;
    }
    if (negative) exponent = -exponent;
  }
  const long e = exponent - fraction;
  return e >= -22 && e <= 22;
}

}  // namespace

double exact_double(double d, const char* begin, const char* end) {
  if (boost_is_exact(begin, end)) return d;
  double exact = 0;
  // The text is a valid JSON number (the parser checked it); either conversion fails only out of double's range,
  // where Boost's value (an infinity, or 0 for an underflow) stands. A leading '+' is not JSON, so none to skip.
#if defined(__cpp_lib_to_chars) && !defined(JETSWEEP_NO_FLOATING_POINT_CHARCONV)
  const auto [ptr, ec] = std::from_chars(begin, end, exact);
  if (ec == std::errc() && ptr == end) return exact;
#else   // GCC < 11 (JetPack 5): glibc's strtod in the C locale, also correctly rounded
  if (from_chars_double(begin, end, exact) == end) return exact;
#endif
  return d;
}

namespace {

class ExactHandler {
 public:
  static constexpr std::size_t max_object_size = bj::object::max_size();
  static constexpr std::size_t max_array_size = bj::array::max_size();
  static constexpr std::size_t max_key_size = bj::string::max_size();
  static constexpr std::size_t max_string_size = bj::string::max_size();

  ExactHandler(unsigned char* temp, std::size_t size) : st({}, temp, size) {}

  bj::value_stack st;

  bool on_document_begin(bj::error_code&) { return true; }
  bool on_document_end(bj::error_code&) { return true; }
  bool on_object_begin(bj::error_code&) { return true; }
  bool on_object_end(std::size_t n, bj::error_code&) {
    st.push_object(n);
    return true;
  }
  bool on_array_begin(bj::error_code&) { return true; }
  bool on_array_end(std::size_t n, bj::error_code&) {
    st.push_array(n);
    return true;
  }
  bool on_key_part(bj::string_view s, std::size_t, bj::error_code&) {
    st.push_chars(s);
    return true;
  }
  bool on_key(bj::string_view s, std::size_t, bj::error_code&) {
    st.push_key(s);
    return true;
  }
  bool on_string_part(bj::string_view s, std::size_t, bj::error_code&) {
    st.push_chars(s);
    return true;
  }
  bool on_string(bj::string_view s, std::size_t, bj::error_code&) {
    st.push_string(s);
    return true;
  }
  // A number's text arrives in parts only when it spans two writes; parse_exact makes one write, but keep them.
  bool on_number_part(bj::string_view s, bj::error_code&) {
    number_.append(s.data(), s.size());
    return true;
  }
  bool on_int64(std::int64_t i, bj::string_view, bj::error_code&) {
    number_.clear();
    st.push_int64(i);
    return true;
  }
  bool on_uint64(std::uint64_t u, bj::string_view, bj::error_code&) {
    number_.clear();
    st.push_uint64(u);
    return true;
  }
  bool on_double(double d, bj::string_view s, bj::error_code&) {
    const char* begin = s.data();
    const char* end = s.data() + s.size();
    if (!number_.empty()) {
      number_.append(s.data(), s.size());
      begin = number_.data();
      end = number_.data() + number_.size();
    }
    number_.clear();
    st.push_double(exact_double(d, begin, end));
    return true;
  }
  bool on_bool(bool b, bj::error_code&) {
    st.push_bool(b);
    return true;
  }
  bool on_null(bj::error_code&) {
    st.push_null();
    return true;
  }
  bool on_comment_part(bj::string_view, bj::error_code&) { return true; }
  bool on_comment(bj::string_view, bj::error_code&) { return true; }

 private:
  std::string number_;   // the parts of a number split over writes
};

}  // namespace

bj::value parse_exact(std::string_view text, boost::system::error_code& ec, bj::storage_ptr sp) {
  unsigned char temp[BOOST_JSON_STACK_BUFFER_SIZE];   // the parse's scratch on the stack, as boost::json::parse's
  bj::basic_parser<ExactHandler> p(bj::parse_options{}, temp, sizeof temp);
  p.handler().st.reset(std::move(sp));
  const std::size_t n = p.write_some(false, text.data(), text.size(), ec);
  if (ec) return nullptr;
  if (n < text.size()) {
    ec = bj::error::extra_data;
    return nullptr;
  }
  if (!p.done()) {
    ec = bj::error::incomplete;
    return nullptr;
  }
  return p.handler().st.release();
}

bj::value parse_exact(std::string_view text) {
  boost::system::error_code ec;
  bj::value v = parse_exact(text, ec);
  if (ec) throw boost::system::system_error(ec, "JSON");
  return v;
}

}  // namespace jetsweep::json
