// fs_util's number parsing: from_chars_double (std::from_chars for double, which GCC < 11 lacks) and parse_double.
#include <doctest/doctest.h>

#include <charconv>
#include <clocale>
#include <cmath>
#include <cstring>
#include <string>

#include "agent/device/fs_util.hpp"

namespace jetsweep::device {
namespace {

struct Case {
  const char* text;
  bool ok;
  size_t consumed;   // characters parsed when ok
  double value;
};

TEST_CASE("from_chars_double accepts and rejects what std::from_chars does") {
  const Case cases[] = {
      {"1", true, 1, 1.0},          {"-1.5", true, 4, -1.5},      {".5", true, 2, 0.5},
      {"-.5", true, 3, -0.5},       {"1e5", true, 3, 1e5},        {"1E-5x", true, 4, 1e-5},
      {"1e", true, 1, 1.0},         {"1e+", true, 1, 1.0},        {"123abc", true, 3, 123.0},
      {"1,5", true, 1, 1.0},        {"1.2.3", true, 3, 1.2},      {"0x10", true, 1, 0.0},
      {"-0x10", true, 2, -0.0},     {"4e-320", true, 6, 4e-320},  {"inf", true, 3, HUGE_VAL},
      {"-infinity", true, 9, -HUGE_VAL},
      {"+1", false, 0, 0},          {" 1", false, 0, 0},          {"\t1", false, 0, 0},
      {"", false, 0, 0},            {"-", false, 0, 0},           {".", false, 0, 0},
      {"abc", false, 0, 0},         {"--1", false, 0, 0},         {"-+1", false, 0, 0},
      {"in", false, 0, 0},          {"1e400", false, 0, 0},       {"-1e400", false, 0, 0},
      {"1e-400", false, 0, 0},
  };
  for (const Case& c : cases) {
    CAPTURE(c.text);
    const char* first = c.text;
    const char* last = c.text + std::strlen(c.text);
    double v = 42;
    const char* end = from_chars_double(first, last, v);
    CHECK((end != nullptr) == c.ok);
    if (c.ok && end) {
      CHECK(static_cast<size_t>(end - first) == c.consumed);
      CHECK(v == c.value);
      CHECK(std::signbit(v) == std::signbit(c.value));
    } else {
      CHECK(v == 42);   // untouched on failure, as std::from_chars
    }
#if defined(__cpp_lib_to_chars) && !defined(JETSWEEP_NO_FLOATING_POINT_CHARCONV)   // GCC >= 11: compare with it
    double expected = 42;
    auto r = std::from_chars(first, last, expected);
    CHECK((r.ec == std::errc()) == c.ok);
    if (c.ok && end && r.ec == std::errc()) {
      CHECK(r.ptr == end);
      CHECK(expected == v);
    }
#endif
  }
  double nan = 0;
  CHECK(from_chars_double("nan(7)", "nan(7)" + 6, nan) != nullptr);
  CHECK(std::isnan(nan));
}

TEST_CASE("parse_double needs the whole trimmed text to be a number, in any locale") {
  CHECK(parse_double(" 2.5\n") == 2.5);
  CHECK(parse_double("-7") == -7.0);
  CHECK_FALSE(parse_double("2.5 W").has_value());
  CHECK_FALSE(parse_double("+2.5").has_value());
  CHECK_FALSE(parse_double("0x1p3").has_value());
  CHECK_FALSE(parse_double("").has_value());
  // A decimal comma locale must not change what is read (the agent may run with any LC_NUMERIC).
  const std::string before = std::setlocale(LC_NUMERIC, nullptr);
  if (std::setlocale(LC_NUMERIC, "de_DE.UTF-8") || std::setlocale(LC_NUMERIC, "fr_FR.UTF-8")) {
    CHECK(parse_double("2.5") == 2.5);
    CHECK_FALSE(parse_double("2,5").has_value());
  }
  std::setlocale(LC_NUMERIC, before.c_str());
}

}  // namespace
}  // namespace jetsweep::device
