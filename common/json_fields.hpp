// Typed, error-reporting access to the fields of a Boost.JSON object.
// FieldReader owns nothing (views an object); use from one thread at a time.
#pragma once

#include <boost/json.hpp>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.hpp"

namespace jetsweep::json {

// Reads fields of one JSON object; the first failure is kept and names `where` and the field.
// Example error: "message 'epoch_result' field 'epoch': expected an integer, got string".
class FieldReader {
 public:
  FieldReader(const boost::json::object& obj, std::string where) : obj_(obj), where_(std::move(where)) {}
  // Reader of element `index` of the parent's array field `array_name`; the place named in its errors is
  // built only when one is reported (decoding thousands of samples per frame stays allocation-free).
  FieldReader(const boost::json::object& obj, const FieldReader& parent, const char* array_name, size_t index)
      : obj_(obj), parent_(&parent), array_name_(array_name), index_(index) {}

  int64_t integer(const char* name);
  std::optional<int64_t> opt_integer(const char* name);
  double number(const char* name);
  std::optional<double> opt_number(const char* name);
  // Strings: a NUL in one reads as U+FFFD (common/text.hpp nul_replaced).
  std::string string(const char* name);
  std::optional<std::string> opt_string(const char* name);
  bool boolean(const char* name);
  std::optional<bool> opt_boolean(const char* name);
  std::vector<double> number_array(const char* name);
  // Integral numbers only (as_integer: int64, uint64 within int64, or an integral double below 9e15); a
  // fraction or an out-of-range value fails naming the field.
  std::vector<int64_t> integer_array(const char* name);
  // An array of strings; absent or null = empty. A non-string element fails naming the field and the element.
  std::vector<std::string> opt_string_array(const char* name);
  const boost::json::object* object(const char* name);
  const boost::json::array* array(const char* name);
  // Whether the field is present and not null (fails nothing).
  bool has(const char* name) const;
  // The field's value, whatever its kind (a null too); absent fails as missing.
  const boost::json::value* value(const char* name) { return find(name, true); }

  const Status& status() const { return status_; }
  bool ok() const { return status_.is_ok(); }
  void fail(const char* name, const std::string& what);
  // Keeps `status` (a nested reader's failure, already naming its place) unless a failure is kept already.
  void fail_with(const Status& status);
  const std::string& where() const;

 private:
  const boost::json::value* find(const char* name, bool required);
  // Whether a required field is there and not null; fails naming it otherwise ("missing", "expected <kind>, got null").
  bool present(const char* name, const char* kind);

  const boost::json::object& obj_;
  const FieldReader* parent_ = nullptr;
  const char* array_name_ = nullptr;
  size_t index_ = 0;
  mutable std::string where_;
  Status status_;
};

const char* kind_name(const boost::json::value& v);
// Integral value of a JSON number (int64, uint64 or an integral double).
std::optional<int64_t> as_integer(const boost::json::value& v);
std::optional<double> as_number(const boost::json::value& v);
boost::json::value optional_number(const std::optional<double>& v);
// Replaces every NaN or infinite number in `v` by null. Boost.JSON writes them as NaN / Infinity, which no
// JSON parser (its own included) accepts, so one diverged loss would make a whole frame unreadable.
void null_non_finite(boost::json::value& v);

// JSON text appended to `out` as boost::json::serialize writes the same value, byte for byte (its own number
// formatting; strings escaped as it escapes them), a number that is not finite as null (as null_non_finite makes it):
// for writing a frame without building its tree (json::append_described). tests/unit/test_wire_text.cpp holds them
// to boost::json::serialize.
void append_string(std::string& out, std::string_view s);
void append_number(std::string& out, double v);
void append_number(std::string& out, int64_t v);
void append_number(std::string& out, uint64_t v);
void append_value(std::string& out, const boost::json::value& v);

}  // namespace jetsweep::json
