#include "common/json_fields.hpp"

#include <boost/json/detail/format.hpp>

#include <cmath>
#include <limits>

#include "common/text.hpp"

namespace jetsweep::json {

const char* kind_name(const boost::json::value& v) {
  switch (v.kind()) {
    case boost::json::kind::null: return "null";
    case boost::json::kind::bool_: return "boolean";
    case boost::json::kind::int64:
    case boost::json::kind::uint64: return "integer";
    case boost::json::kind::double_: return "number";
    case boost::json::kind::string: return "string";
    case boost::json::kind::array: return "array";
    case boost::json::kind::object: return "object";
  }
  return "?";
}

std::optional<int64_t> as_integer(const boost::json::value& v) {
  if (v.is_int64()) return v.get_int64();
  if (v.is_uint64()) {
    if (v.get_uint64() > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) return std::nullopt;
    return static_cast<int64_t>(v.get_uint64());
  }
  if (v.is_double()) {
    double d = v.get_double();
    if (std::isfinite(d) && d == std::floor(d) && std::fabs(d) < 9.0e15) return static_cast<int64_t>(d);
  }
  return std::nullopt;
}

std::optional<double> as_number(const boost::json::value& v) {
  if (v.is_double()) return v.get_double();
  if (v.is_int64()) return static_cast<double>(v.get_int64());
  if (v.is_uint64()) return static_cast<double>(v.get_uint64());
  return std::nullopt;
}

boost::json::value optional_number(const std::optional<double>& v) {
  if (v && std::isfinite(*v)) return *v;
  return nullptr;
}

const std::string& FieldReader::where() const {
  if (parent_ && where_.empty())
    where_ = parent_->where() + " field '" + array_name_ + "[" + std::to_string(index_) + "]',";
  return where_;
}

void null_non_finite(boost::json::value& v) {
  if (v.is_double()) {
    if (!std::isfinite(v.get_double())) v = nullptr;
  } else if (v.is_array()) {
    for (auto& e : v.get_array()) null_non_finite(e);
  } else if (v.is_object()) {
    for (auto& kv : v.get_object()) null_non_finite(kv.value());
  }
}

void FieldReader::fail(const char* name, const std::string& what) {
  if (!status_.is_ok()) return;
  status_ = protocol_error(where() + " field '" + name + "': " + what);
}

void FieldReader::fail_with(const Status& status) {
  if (status_.is_ok()) status_ = status;
}

bool FieldReader::has(const char* name) const {
  auto it = obj_.find(name);
  return it != obj_.end() && !it->value().is_null();
}

const boost::json::value* FieldReader::find(const char* name, bool required) {
  auto it = obj_.find(name);
  if (it == obj_.end() || (it->value().is_null() && !required)) {
    if (required) fail(name, "missing");
    return nullptr;
  }
  return &it->value();
}

bool FieldReader::present(const char* name, const char* kind) {
  auto it = obj_.find(name);
  if (it == obj_.end()) fail(name, "missing");
  else if (it->value().is_null()) fail(name, std::string("expected ") + kind + ", got null");
  else return true;
  return false;
}

int64_t FieldReader::integer(const char* name) {
  return present(name, "an integer") ? opt_integer(name).value_or(0) : 0;
}

std::optional<int64_t> FieldReader::opt_integer(const char* name) {
  const auto* v = find(name, false);
  if (!v) return std::nullopt;
  auto i = as_integer(*v);
  if (!i) fail(name, std::string("expected an integer, got ") + kind_name(*v));
  return i;
}

double FieldReader::number(const char* name) { return present(name, "a number") ? opt_number(name).value_or(0.0) : 0.0; }

std::optional<double> FieldReader::opt_number(const char* name) {
  const auto* v = find(name, false);
  if (!v) return std::nullopt;
  auto d = as_number(*v);
  if (!d) fail(name, std::string("expected a number, got ") + kind_name(*v));
  // JSON has no infinities, but an overflowing literal (1e999) parses to one.
  if (d && !std::isfinite(*d)) {
    fail(name, "must be a finite number");
    return std::nullopt;
  }
  return d;
}

std::string FieldReader::string(const char* name) {
  return present(name, "a string") ? opt_string(name).value_or(std::string()) : std::string();
}

std::optional<std::string> FieldReader::opt_string(const char* name) {
  const auto* v = find(name, false);
  if (!v) return std::nullopt;
  if (!v->is_string()) {
    fail(name, std::string("expected a string, got ") + kind_name(*v));
    return std::nullopt;
  }
  return nul_replaced(v->get_string());   // stored as text, which cannot hold a NUL
}

bool FieldReader::boolean(const char* name) { return present(name, "a boolean") && opt_boolean(name).value_or(false); }

std::optional<bool> FieldReader::opt_boolean(const char* name) {
  const auto* v = find(name, false);
  if (!v) return std::nullopt;
  if (!v->is_bool()) {
    fail(name, std::string("expected a boolean, got ") + kind_name(*v));
    return std::nullopt;
  }
  return v->get_bool();
}

std::vector<double> FieldReader::number_array(const char* name) {
  std::vector<double> out;
  const boost::json::array* a = array(name);
  if (!a) return out;
  out.reserve(a->size());
  for (const auto& e : *a) {
    auto d = as_number(e);
    if (!d) {
      fail(name, std::string("expected an array of numbers, found ") + kind_name(e));
      return {};
    }
    if (!std::isfinite(*d)) {
      fail(name, "must hold finite numbers");
      return {};
    }
    out.push_back(*d);
  }
  return out;
}

std::vector<int64_t> FieldReader::integer_array(const char* name) {
  std::vector<int64_t> out;
  const boost::json::array* a = array(name);
  if (!a) return out;
  out.reserve(a->size());
  for (const auto& e : *a) {
    auto i = as_integer(e);
    if (!i) {
      fail(name, e.is_number() ? std::string("expected an array of integers, found ") + boost::json::serialize(e)
                               : std::string("expected an array of integers, found ") + kind_name(e));
      return {};
    }
    out.push_back(*i);
  }
  return out;
}

std::vector<std::string> FieldReader::opt_string_array(const char* name) {
  std::vector<std::string> out;
  const auto* v = find(name, false);
  if (!v || v->is_null()) return out;
  if (!v->is_array()) {
    fail(name, std::string("expected an array of strings, got ") + kind_name(*v));
    return out;
  }
  for (size_t i = 0; i < v->get_array().size(); ++i) {
    const auto& e = v->get_array()[i];
    if (!e.is_string()) {
      fail(name, "element " + std::to_string(i) + " is not a string");
      return {};
    }
    out.push_back(nul_replaced(e.get_string()));
  }
  return out;
}

const boost::json::object* FieldReader::object(const char* name) {
  const auto* v = find(name, true);
  if (!v) return nullptr;
  if (!v->is_object()) {
    fail(name, std::string("expected an object, got ") + kind_name(*v));
    return nullptr;
  }
  return &v->get_object();
}

const boost::json::array* FieldReader::array(const char* name) {
  const auto* v = find(name, true);
  if (!v) return nullptr;
  if (!v->is_array()) {
    fail(name, std::string("expected an array, got ") + kind_name(*v));
    return nullptr;
  }
  return &v->get_array();
}

// As Boost.JSON's serializer writes a string (boost/json/impl/serializer.ipp, 1.81): the quote and the backslash
// escaped, \b \t \n \f \r by name, every other byte below 0x20 as \u00XX in lower-case hex, all else as it is.
void append_string(std::string& out, std::string_view s) {
  static constexpr char kHex[] = "0123456789abcdef";
  out += '"';
  size_t from = 0;  // the first byte not yet appended (a run without escapes goes in one append)
  for (size_t i = 0; i < s.size(); ++i) {
    const auto c = static_cast<unsigned char>(s[i]);
    if (c >= 0x20 && c != '"' && c != '\\') continue;
    out.append(s.data() + from, i - from);
    from = i + 1;
    out += '\\';
    switch (c) {
      case '"': out += '"'; break;
      case '\\': out += '\\'; break;
      case '\b': out += 'b'; break;
      case '\t': out += 't'; break;
      case '\n': out += 'n'; break;
      case '\f': out += 'f'; break;
      case '\r': out += 'r'; break;
      default:
        out += "u00";
        out += kHex[c >> 4];
        out += kHex[c & 15];
    }
  }
  out.append(s.data() + from, s.size() - from);
  out += '"';
}

// Boost.JSON's own formatting (what its serializer calls), so that the text is the tree's byte for byte. These are
// Boost's detail:: functions, not its public API: tests/unit/test_wire_text.cpp fails if a later Boost formats otherwise.
void append_number(std::string& out, double v) {
  if (!std::isfinite(v)) {
    out += "null";
    return;
  }
  char buf[boost::json::detail::max_number_chars + 1];
  out.append(buf, boost::json::detail::format_double(buf, v));
}
void append_number(std::string& out, int64_t v) {
  char buf[boost::json::detail::max_number_chars + 1];
  out.append(buf, boost::json::detail::format_int64(buf, v));
}
void append_number(std::string& out, uint64_t v) {
  char buf[boost::json::detail::max_number_chars + 1];
  out.append(buf, boost::json::detail::format_uint64(buf, v));
}

void append_value(std::string& out, const boost::json::value& v) {
  boost::json::value copy = v;
  null_non_finite(copy);
  out += boost::json::serialize(copy);
}

}  // namespace jetsweep::json
