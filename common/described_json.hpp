// JSON for plain records described once with BOOST_DESCRIBE_STRUCT: the encoder and the decoder are derived from
// that description (a member's name is its JSON key), so a new field is added in one place. Members may be
// std::string, int64_t, double, bool, or std::optional of those. A key absent or null decodes as the member's
// default (older senders); a key of the wrong type fails naming the field (FieldReader). Bounds are not checked
// here: each record has its own check. Header-only; pure functions, any thread.
#pragma once

#include <boost/describe.hpp>
#include <boost/json.hpp>
#include <boost/mp11.hpp>
#include <cstdint>
#include <optional>
#include <string>
#include <type_traits>

#include "common/json_fields.hpp"

namespace jetsweep::json {
namespace described_detail {

inline boost::json::value value_of(const std::string& v) { return boost::json::value(v); }
inline boost::json::value value_of(int64_t v) { return boost::json::value(v); }
inline boost::json::value value_of(double v) { return boost::json::value(v); }
inline boost::json::value value_of(bool v) { return boost::json::value(v); }
template <class T>
boost::json::value value_of(const std::optional<T>& v) {
  return v ? value_of(*v) : boost::json::value(nullptr);
}
// A number that is not finite (a diverged loss) is written as null: JSON has no NaN.
inline boost::json::value value_of(const std::optional<double>& v) { return optional_number(v); }

inline void read_member(FieldReader& r, const char* key, std::string& v) { v = r.opt_string(key).value_or(""); }
inline void read_member(FieldReader& r, const char* key, int64_t& v) { v = r.opt_integer(key).value_or(0); }
inline void read_member(FieldReader& r, const char* key, double& v) { v = r.opt_number(key).value_or(0.0); }
inline void read_member(FieldReader& r, const char* key, bool& v) { v = r.opt_boolean(key).value_or(false); }
inline void read_member(FieldReader& r, const char* key, std::optional<std::string>& v) { v = r.opt_string(key); }
inline void read_member(FieldReader& r, const char* key, std::optional<int64_t>& v) { v = r.opt_integer(key); }
inline void read_member(FieldReader& r, const char* key, std::optional<double>& v) { v = r.opt_number(key); }
inline void read_member(FieldReader& r, const char* key, std::optional<bool>& v) { v = r.opt_boolean(key); }

template <class T>
using public_members = boost::describe::describe_members<T, boost::describe::mod_public>;

}  // namespace described_detail

// Every described member of `record` (its own, not its bases') under its own name, added to `o`.
template <class T>
void put_described(boost::json::object& o, const T& record) {
  boost::mp11::mp_for_each<described_detail::public_members<T>>(
      [&](auto member) { o[member.name] = described_detail::value_of(record.*member.pointer); });
}
template <class T>
boost::json::object described_to_json(const T& record) {
  boost::json::object o;
  put_described(o, record);
  return o;
}

// Calls f(name, member) for every described member of `record` (its own, not its bases').
template <class T, class F>
void for_each_described(T& record, F&& f) {
  boost::mp11::mp_for_each<described_detail::public_members<std::remove_const_t<T>>>(
      [&](auto member) { f(member.name, record.*member.pointer); });
}

// The name the description gives the member `pointer` of T ("" if it is not described).
template <class T, class M>
const char* described_name(M T::*pointer) {
  const char* name = "";
  boost::mp11::mp_for_each<described_detail::public_members<T>>([&](auto member) {
    if constexpr (std::is_same_v<std::remove_const_t<decltype(member.pointer)>, M T::*>)
      if (member.pointer == pointer) name = member.name;
  });
  return name;
}

// Every described member of a and b equal, those of described bases included.
template <class T>
bool described_equal(const T& a, const T& b) {
  bool equal = true;
  boost::mp11::mp_for_each<
      boost::describe::describe_members<T, boost::describe::mod_public | boost::describe::mod_inherited>>(
      [&](auto member) { equal = equal && a.*member.pointer == b.*member.pointer; });
  return equal;
}

// Reads every described member of `record` from the object `reader` views; the first type error stays in `reader`.
template <class T>
void read_described(FieldReader& reader, T& record) {
  boost::mp11::mp_for_each<described_detail::public_members<T>>(
      [&](auto member) { described_detail::read_member(reader, member.name, record.*member.pointer); });
}

}  // namespace jetsweep::json
