// JSON for plain records described once with BOOST_DESCRIBE_STRUCT: the encoder and the decoder are derived from
// that description (a member's name is its JSON key, the description's order is the keys' order), so a new field is
// added in one place. Members may be std::string, int64_t, uint64_t, double, bool, a JSON object passed through,
// std::vector of those, another described record, a record with a codec of its own (`to_json(const T&)` and
// `from_json(const boost::json::value&, const std::string& where, T&)`, found by argument-dependent lookup: it is
// used, also for a described record that has one), std::vector of records, or std::optional of any of these.
// A record's described bases travel flat with it: read with its members, and written before them (a base with a
// codec of its own by that codec), or after the member its JS_WIRE_BASES_AFTER names.
//
// Wire rules (common/wire_rules.hpp, beside the description): the members a decoder requires (absent fails naming the
// field; so does null, except for a string or a boolean, which FieldReader reads as "" / false) and those the encoder
// leaves out when empty (an unset optional, "", an empty array, false, an integer 0, a nested record whose `empty()`
// says so) instead of writing null or the value. Every other member absent or null (older senders) keeps the value the
// record was constructed with (records are read into default-constructed ones: its default; RunConfig's threads = 1),
// except an array, a JSON object and an std::optional, which read as empty; it is always written, an unset optional
// as null, a number that is not finite as null (JSON has no NaN). An std::optional member is never required.
//
// A key computed by a member function (JS_WIRE_COMPUTED: FleetBoard's "ready") is written after the member it names and
// read by no decoder.
//
// Bounds are not checked while reading: a record's `validate(FieldReader&, const T&)` (found by argument-dependent
// lookup, declared beside the record) does that once the record is read, and runs for a nested record too.
// Header-only; pure functions, any thread.
#pragma once

#include <boost/describe.hpp>
#include <boost/json.hpp>
#include <boost/mp11.hpp>
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include "common/json_fields.hpp"
#include "common/status.hpp"
#include "common/wire_rules.hpp"

namespace jetsweep::json {
namespace described_detail {

// A record without rules: nothing required, nothing left out.
constexpr WireRules<Listed::kRequired, std::tuple<>, std::tuple<>> wire_rules(const void*) { return {}; }
template <class T>
inline constexpr auto kRules = wire_rules(static_cast<const T*>(nullptr));
// A record without JS_WIRE_BASES_AFTER: its bases' keys first.
constexpr std::nullptr_t wire_bases_after(const void*) { return nullptr; }
template <class T>
inline constexpr auto kBasesAfter = wire_bases_after(static_cast<const T*>(nullptr));

// A record without JS_WIRE_COMPUTED: no computed key.
constexpr std::nullptr_t wire_computed(const void*) { return nullptr; }
template <class T>
inline constexpr auto kComputed = wire_computed(static_cast<const T*>(nullptr));

template <class A, class B>
constexpr bool same_member(A a, B b) {
  if constexpr (std::is_same_v<A, B>) return a == b;
  else return false;
}
template <class Tuple, class P>
constexpr bool listed(const Tuple& members, P p) {
  return std::apply([p](auto... q) { return (false || ... || same_member(q, p)); }, members);
}
template <class Rules, class P>
constexpr bool required_by(const Rules& rules, P p) {
  return listed(rules.listed, p) == (Rules::kWhat == Listed::kRequired);
}

inline constexpr size_t kMaxReservedElements = 4096;

template <class T>
inline constexpr bool kDescribed = boost::describe::has_describe_members<T>::value;
template <class T>
using public_members = boost::describe::describe_members<T, boost::describe::mod_public>;
template <class T>
using public_bases = boost::describe::describe_bases<T, boost::describe::mod_public>;

template <class T, class = void>
struct HasValidate : std::false_type {};
template <class T>
struct HasValidate<T, std::void_t<decltype(validate(std::declval<FieldReader&>(), std::declval<const T&>()))>>
    : std::true_type {};
// A record with a JSON codec of its own (to_json / from_json beside it).
template <class T, class = void>
struct HasToJson : std::false_type {};
template <class T>
struct HasToJson<T, std::void_t<decltype(to_json(std::declval<const T&>()))>> : std::true_type {};
template <class T, class = void>
struct HasFromJson : std::false_type {};
template <class T>
struct HasFromJson<T, std::void_t<decltype(from_json(std::declval<const boost::json::value&>(),
                                                     std::declval<const std::string&>(), std::declval<T&>()))>>
    : std::true_type {};
template <class T>
inline constexpr bool kRecord = std::is_class_v<T> && (kDescribed<T> || HasToJson<T>::value);

inline bool is_empty(const std::string& v) { return v.empty(); }
inline bool is_empty(bool v) { return !v; }
inline bool is_empty(int64_t v) { return v == 0; }
template <class T>
bool is_empty(const std::optional<T>& v) { return !v; }
template <class T>
bool is_empty(const std::vector<T>& v) { return v.empty(); }
// A nested record: empty when its own empty() says so (RunConfig's power mode).
template <class T, std::enable_if_t<kRecord<T>, int> = 0>
auto is_empty(const T& v) -> decltype(bool(v.empty())) { return v.empty(); }

// ---- writing ----
inline boost::json::value value_of(const std::string& v) { return boost::json::value(v); }
inline boost::json::value value_of(int64_t v) { return boost::json::value(v); }
inline boost::json::value value_of(uint64_t v) { return boost::json::value(v); }
inline boost::json::value value_of(double v) { return boost::json::value(v); }
inline boost::json::value value_of(bool v) { return boost::json::value(v); }
inline boost::json::value value_of(const boost::json::object& v) { return boost::json::value(v); }
inline boost::json::value value_of(const std::optional<double>& v) { return optional_number(v); }
template <class T>
boost::json::value value_of(const std::optional<T>& v);
template <class T>
boost::json::value value_of(const std::vector<T>& v);
template <class T, std::enable_if_t<kRecord<T>, int> = 0>
boost::json::value value_of(const T& record);

// Calls member(name, value) for each member of `record` the encoder writes, in the wire's order, by its rules: its
// own in the description's order, with its described bases' first or right after the member its JS_WIRE_BASES_AFTER
// names, and its JS_WIRE_COMPUTED key right after the member that names; a base with a codec of its own is one call
// codec_base(its object), in that object's order.
template <class T, class Member, class CodecBase>
void for_each_wire_member(const T& record, Member&& member, CodecBase&& codec_base) {
  auto put_bases = [&] {
    boost::mp11::mp_for_each<public_bases<T>>([&](auto base) {
      using B = typename decltype(base)::type;
      if constexpr (HasToJson<B>::value) {
        codec_base(to_json(static_cast<const B&>(record)));
      } else {
        for_each_wire_member(static_cast<const B&>(record), member, codec_base);
      }
    });
  };
  constexpr bool kBasesFirst = std::is_null_pointer_v<std::remove_const_t<decltype(kBasesAfter<T>)>>;
  if constexpr (kBasesFirst) put_bases();
  boost::mp11::mp_for_each<public_members<T>>([&](auto m) {
    using D = decltype(m);
    const auto& v = record.*D::pointer;
    bool omit = false;
    if constexpr (listed(kRules<T>.omitted_when_empty, D::pointer)) omit = is_empty(v);
    if (!omit) member(D::name, v);
    if constexpr (!kBasesFirst)
      if constexpr (same_member(kBasesAfter<T>, D::pointer)) put_bases();
    if constexpr (!std::is_null_pointer_v<std::remove_const_t<decltype(kComputed<T>)>>)
      if constexpr (same_member(kComputed<T>.after, D::pointer))
        member(kComputed<T>.name, (record.*kComputed<T>.function)());
  });
}

template <class T>
void put_members(boost::json::object& o, const T& record) {
  for_each_wire_member(
      record, [&](const char* name, const auto& v) { o[name] = value_of(v); },
      [&](boost::json::object base) {
        for (auto& kv : base) o[kv.key()] = std::move(kv.value());
      });
}

template <class T>
boost::json::value value_of(const std::optional<T>& v) {
  return v ? value_of(*v) : boost::json::value(nullptr);
}
template <class T>
boost::json::value value_of(const std::vector<T>& v) {
  if constexpr (std::is_arithmetic_v<T> || std::is_same_v<T, std::string>) {
    return boost::json::array(v.begin(), v.end());   // in one go (a hot path: minibatch times)
  } else {
    boost::json::array a;
    a.reserve(v.size());
    for (const auto& e : v) a.emplace_back(value_of(e));
    return a;
  }
}
template <class T, std::enable_if_t<kRecord<T>, int>>
boost::json::value value_of(const T& record) {
  if constexpr (HasToJson<T>::value) {
    return to_json(record);
  } else {
    boost::json::object o;
    put_members(o, record);
    return o;
  }
}

// ---- writing text: the bytes Boost.JSON serialises the tree above to (a number that is not finite as null, as
// null_non_finite writes it), without building the tree (proto::encode's path: a telemetry chunk is 30,000 numbers);
// json_fields.hpp's append_* write the values. The same overloads as value_of's, so that a member converts as there.
inline void append_json(std::string& out, const std::string& v) { append_string(out, v); }
inline void append_json(std::string& out, int64_t v) { append_number(out, v); }
inline void append_json(std::string& out, uint64_t v) { append_number(out, v); }
inline void append_json(std::string& out, double v) { append_number(out, v); }
inline void append_json(std::string& out, bool v) { out += v ? "true" : "false"; }
inline void append_json(std::string& out, const boost::json::object& v) { append_value(out, v); }
inline void append_json(std::string& out, const std::optional<double>& v) {
  if (v) append_number(out, *v);
  else out += "null";
}
template <class T>
void append_json(std::string& out, const std::optional<T>& v);
template <class T>
void append_json(std::string& out, const std::vector<T>& v);
template <class T, std::enable_if_t<kRecord<T>, int> = 0>
void append_json(std::string& out, const T& record);

template <class T>
void append_members(std::string& out, const T& record, bool& first) {
  auto key = [&](std::string_view name) {
    if (!first) out += ',';
    first = false;
    append_string(out, name);
    out += ':';
  };
  for_each_wire_member(
      record,
      [&](const char* name, const auto& v) {
        key(name);
        append_json(out, v);
      },
      [&](const boost::json::object& base) {
        for (const auto& kv : base) {
          key(kv.key());
          append_value(out, kv.value());
        }
      });
}

template <class T>
void append_json(std::string& out, const std::optional<T>& v) {
  if (v) append_json(out, *v);
  else out += "null";
}
template <class T>
void append_json(std::string& out, const std::vector<T>& v) {
  out += '[';
  bool first = true;
  for (const auto& e : v) {
    if (!first) out += ',';
    first = false;
    if constexpr (std::is_same_v<T, bool>) append_json(out, bool(e));
    else append_json(out, e);
  }
  out += ']';
}
template <class T, std::enable_if_t<kRecord<T>, int>>
void append_json(std::string& out, const T& record) {
  if constexpr (HasToJson<T>::value) {
    append_value(out, to_json(record));
  } else {
    out += '{';
    bool first = true;
    append_members(out, record, first);
    out += '}';
  }
}

// ---- reading ----
// A member not required and absent (or null) keeps its value: the record's default.
inline void read_member(FieldReader& r, const char* key, std::string& v, bool required) {
  if (required) v = r.string(key);
  else if (auto got = r.opt_string(key)) v = std::move(*got);
}
inline void read_member(FieldReader& r, const char* key, int64_t& v, bool required) {
  v = required ? r.integer(key) : r.opt_integer(key).value_or(v);
}
// A message id or count: never negative (it would come back as a huge unsigned number).
inline void read_member(FieldReader& r, const char* key, uint64_t& v, bool required) {
  if (!required && !r.has(key)) return;
  const int64_t i = r.integer(key);
  if (r.ok() && i < 0) r.fail(key, "must be >= 0");
  v = static_cast<uint64_t>(i);
}
inline void read_member(FieldReader& r, const char* key, double& v, bool required) {
  v = required ? r.number(key) : r.opt_number(key).value_or(v);
}
inline void read_member(FieldReader& r, const char* key, bool& v, bool required) {
  v = required ? r.boolean(key) : r.opt_boolean(key).value_or(v);
}
inline void read_member(FieldReader& r, const char* key, boost::json::object& v, bool required) {
  v = {};
  if (!required && !r.has(key)) return;
  if (const auto* o = r.object(key)) v = *o;
}
inline void read_member(FieldReader& r, const char* key, std::optional<std::string>& v, bool) { v = r.opt_string(key); }
inline void read_member(FieldReader& r, const char* key, std::optional<int64_t>& v, bool) { v = r.opt_integer(key); }
inline void read_member(FieldReader& r, const char* key, std::optional<uint64_t>& v, bool) {
  v.reset();
  if (!r.has(key)) return;
  read_member(r, key, v.emplace(), true);
}
inline void read_member(FieldReader& r, const char* key, std::optional<double>& v, bool) { v = r.opt_number(key); }
inline void read_member(FieldReader& r, const char* key, std::optional<bool>& v, bool) { v = r.opt_boolean(key); }
inline void read_member(FieldReader& r, const char* key, std::optional<boost::json::object>& v, bool) {
  v.reset();
  if (!r.has(key)) return;
  if (const auto* o = r.object(key)) v = *o;
}
inline void read_member(FieldReader& r, const char* key, std::vector<double>& v, bool required) {
  v = required || r.has(key) ? r.number_array(key) : std::vector<double>();
}
inline void read_member(FieldReader& r, const char* key, std::vector<int64_t>& v, bool required) {
  v = required || r.has(key) ? r.integer_array(key) : std::vector<int64_t>();
}
inline void read_member(FieldReader& r, const char* key, std::vector<std::string>& v, bool required) {
  v.clear();
  if (required && !r.array(key)) return;   // absent, null or not an array: fails naming the field
  v = r.opt_string_array(key);
}
template <class T, std::enable_if_t<kRecord<T>, int> = 0>
void read_member(FieldReader& r, const char* key, T& v, bool required);
template <class T, std::enable_if_t<kRecord<T>, int> = 0>
void read_member(FieldReader& r, const char* key, std::optional<T>& v, bool required);
template <class T, std::enable_if_t<kRecord<T>, int> = 0>
void read_member(FieldReader& r, const char* key, std::vector<T>& v, bool required);

// Every described member of `record` and of its described bases, by its rules. A base is read by its description
// (its members by its rules) even where it has a codec of its own, and its validate is not run: a record that
// travels flat over a base whose own codec checks more must check it in its own validate.
template <class T>
void read_members(FieldReader& reader, T& record) {
  boost::mp11::mp_for_each<public_bases<T>>([&](auto base) {
    using B = typename decltype(base)::type;
    read_members(reader, static_cast<B&>(record));
  });
  boost::mp11::mp_for_each<public_members<T>>([&](auto member) {
    using D = decltype(member);
    read_member(reader, D::name, record.*D::pointer, required_by(kRules<T>, D::pointer));
  });
}

// A nested record from `value`, named `where` (its own codec, or its description and then its validate).
template <class T>
Status read_record(const boost::json::value& value, const std::string& where, T& v) {
  if constexpr (HasFromJson<T>::value) {
    return from_json(value, where, v);
  } else {
    if (!value.is_object()) return protocol_error(where + ": expected an object, got " + kind_name(value));
    FieldReader sub(value.get_object(), where + ",");
    read_members(sub, v);
    if constexpr (HasValidate<T>::value) validate(sub, static_cast<const T&>(v));
    return sub.status();
  }
}
template <class T, std::enable_if_t<kRecord<T>, int>>
void read_member(FieldReader& r, const char* key, T& v, bool required) {
  if (!required && !r.has(key)) return;
  if (const auto* value = r.value(key)) {
    if (Status s = read_record(*value, r.where() + " field '" + key + "'", v); !s.is_ok()) r.fail_with(s);
  }
}
template <class T, std::enable_if_t<kRecord<T>, int>>
void read_member(FieldReader& r, const char* key, std::optional<T>& v, bool) {
  v.reset();
  if (!r.has(key)) return;
  read_member(r, key, v.emplace(), true);
  if (!r.ok()) v.reset();
}
template <class T, std::enable_if_t<kRecord<T>, int>>
void read_member(FieldReader& r, const char* key, std::vector<T>& v, bool required) {
  v.clear();
  if (!required && !r.has(key)) return;
  const auto* a = r.array(key);
  if (!a) return;
  // Reserved up to a bound only: an array of millions of elements (a forged frame) fails at its first bad element,
  // or at the record's own count bound in its validate, without a giant allocation first.
  v.reserve(std::min<size_t>(a->size(), kMaxReservedElements));
  for (size_t i = 0; r.ok() && i < a->size(); ++i) {
    const auto& e = (*a)[i];
    if constexpr (HasFromJson<T>::value) {
      if (Status s = from_json(e, r.where() + " field '" + key + "[" + std::to_string(i) + "]'", v.emplace_back());
          !s.is_ok())
        r.fail_with(s);
    } else {
      if (!e.is_object()) {
        r.fail(key, "element " + std::to_string(i) + " is not an object");
        break;
      }
      // The place is named only when an error is reported: thousands of samples per frame stay allocation-free.
      FieldReader sub(e.get_object(), r, key, i);
      read_members(sub, v.emplace_back());
      if constexpr (HasValidate<T>::value) validate(sub, static_cast<const T&>(v.back()));
      if (!sub.ok()) r.fail_with(sub.status());
    }
  }
}

}  // namespace described_detail

// The JSON of any value a described record may hold (a described record itself: its object).
template <class T>
boost::json::value wire_value(const T& v) {
  return described_detail::value_of(v);
}

// Every described member of `record` under its own name, added to `o`, by its wire rules: its own in the description's
// order, with its described bases' (a base with a codec of its own by that codec) first or right after the member its
// JS_WIRE_BASES_AFTER names.
template <class T>
void put_described(boost::json::object& o, const T& record) {
  described_detail::put_members(o, record);
}
// The same members as text: `"key":value` pairs appended to `out`, a comma before each but the first (`first` says
// whether one was written yet, and is cleared once one is): the bytes boost::json::serialize writes for the object
// put_described fills (a number that is not finite as null), without building it.
template <class T>
void append_described(std::string& out, const T& record, bool& first) {
  described_detail::append_members(out, record, first);
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

// Reads every described member of `record` (and of its described bases) from the object `reader` views, by its wire
// rules; the first error stays in `reader`. The record's own validate is not run (nested records' are).
template <class T>
void read_described(FieldReader& reader, T& record) {
  described_detail::read_members(reader, record);
}

// `v` read as a described record named `where` (not an object: an error saying so), then its validate: the from_json
// of a record whose codec is derived.
template <class T>
Status described_from_json(const boost::json::value& v, const std::string& where, T& out) {
  if (!v.is_object()) return protocol_error(where + ": expected an object");
  FieldReader r(v.get_object(), where);
  described_detail::read_members(r, out);
  if constexpr (described_detail::HasValidate<T>::value) validate(r, static_cast<const T&>(out));
  return r.status();
}

}  // namespace jetsweep::json

// Defines to_json(const T&) and from_json(value, where, T&) of a record whose codec is its description's, in the
// namespace it is used in (beside the record's declarations of them).
#define JS_DESCRIBED_CODEC(T)                                                                             \
  boost::json::object to_json(const T& v) { return ::jetsweep::json::described_to_json(v); }               \
  ::jetsweep::Status from_json(const boost::json::value& v, const std::string& where, T& out) {            \
    return ::jetsweep::json::described_from_json(v, where, out);                                          \
  }
