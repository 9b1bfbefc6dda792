// Reading JSON text straight into described records, without a boost::json tree: the controller's path for the
// frames that carry results (a telemetry chunk is 30,000 numbers; through a tree, then FieldReader, decoding was a
// third of the controller's CPU in a burst). It reads only what it is sure of and refuses the rest: any frame it
// does not read whole, exactly as the tree path would, it hands back (false), and the caller decodes that frame the
// usual way (parse_exact, then FieldReader), which is also what names the place of every error. So it never reports
// an error of its own, and the records it fills equal the tree path's (tests/unit/test_json_direct.cpp holds the two
// to each other over every message type and a corpus of mutated frames).
//
// What it reads, from a record's description and wire rules (common/described_json.hpp) and with the tree path's
// conversions (numbers correctly rounded as json::parse_exact reads them, a NUL in a string as U+FFFD):
// int64_t, uint64_t, double, bool and std::string members, std::optional of those, std::vector<double>,
// std::vector<int64_t>, nested described records and std::vector of them; a nested record's validate runs as it
// ends, the root's too. A record with a codec of its own, with bases, or with any other member type is not readable
// this way (kDirectReadable is false) and always takes the tree path.
// What it refuses: an unknown or repeated key, a null where the tree would keep a default, read an empty value or
// fail, an integer written in a double's form (1.0, 1E0; the tree reads one that is integral) or beyond int64, a
// number that is not finite, a required member absent, a failed validate, text that is not UTF-8, anything after the
// document.
// Pure functions, any thread; the tables are built once per type (function-local statics).
#pragma once

#include <boost/describe.hpp>
#include <boost/mp11.hpp>
#include <cmath>
#include <cstdint>
#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "common/described_json.hpp"
#include "common/json_fields.hpp"
#include "common/text.hpp"

namespace jetsweep::json {
namespace direct {

struct RecordTable;

// How one C++ type takes JSON values. A null function refuses that kind of value; a taker returning false refuses
// the value itself. A value is converted as FieldReader converts it.
struct Kind {
  bool (*take_int64)(void* slot, int64_t v) = nullptr;
  bool (*take_uint64)(void* slot, uint64_t v) = nullptr;
  bool (*take_double)(void* slot, double v) = nullptr;   // `v` already correctly rounded
  bool (*take_string)(void* slot, std::string_view v) = nullptr;
  bool (*take_bool)(void* slot, bool v) = nullptr;
  bool (*take_null)(void* slot) = nullptr;
  // An array (std::vector): its elements' kind, how to empty it and append one (returned; used before the next).
  const Kind* element = nullptr;
  void (*clear)(void* slot) = nullptr;
  void* (*append)(void* slot) = nullptr;
  // std::vector<double>: its numbers gathered by the reader and assigned in one go (one allocation).
  void (*assign_doubles)(void* slot, const double* first, std::size_t n) = nullptr;
  // An object: a described record.
  const RecordTable* record = nullptr;
};

struct Member {
  std::string_view name;
  void* (*get)(void* record);
  const Kind* kind;
  bool required;
  // Absent and not required: what the tree path reads (a number, string, boolean or record keeps its default; an
  // array, object or optional is emptied).
  void (*reset)(void* slot);
};

// A described record's members in the description's order, and its validate (run as the record ends).
struct RecordTable {
  std::vector<Member> members;
  bool (*validate)(const void* record) = nullptr;
};

// One object the root's keys go to: a key is looked up in each target in turn (a message and its envelope's keys).
struct Target {
  const RecordTable* table;
  void* record;
};

template <class V>
struct IsOptional : std::false_type {};
template <class V>
struct IsOptional<std::optional<V>> : std::true_type {};
template <class V>
struct IsVector : std::false_type {};
template <class V>
struct IsVector<std::vector<V>> : std::true_type {};

template <class V>
struct Readable : std::false_type {};
template <class T>
constexpr bool record_readable();
template <>
struct Readable<int64_t> : std::true_type {};
template <>
struct Readable<uint64_t> : std::true_type {};
template <>
struct Readable<double> : std::true_type {};
template <>
struct Readable<bool> : std::true_type {};
template <>
struct Readable<std::string> : std::true_type {};
template <class V>
struct Readable<std::optional<V>>
    : std::bool_constant<std::is_same_v<V, int64_t> || std::is_same_v<V, uint64_t> || std::is_same_v<V, double> ||
                         std::is_same_v<V, bool> || std::is_same_v<V, std::string>> {};
template <class V>
struct Readable<std::vector<V>>
    : std::bool_constant<std::is_same_v<V, double> || std::is_same_v<V, int64_t> || record_readable<V>()> {};

template <class T>
constexpr bool record_readable() {
  namespace dd = described_detail;
  if constexpr (!std::is_class_v<T> || !dd::kDescribed<T> || dd::HasFromJson<T>::value) {
    return false;
  } else if constexpr (boost::mp11::mp_size<boost::describe::describe_bases<T, boost::describe::mod_any_access>>::value !=
                       0) {
    return false;
  } else {
    using Members = dd::public_members<T>;
    bool all = boost::mp11::mp_size<Members>::value <= 64;
    boost::mp11::mp_for_each<Members>([&](auto m) {
      using V = std::remove_cv_t<std::remove_reference_t<decltype(std::declval<T&>().*m.pointer)>>;
      all = all && (Readable<V>::value || record_readable<V>());
    });
    return all;
  }
}
template <class T>
inline constexpr bool kDirectReadable = record_readable<T>();

template <class T>
const RecordTable* record_table();

template <class X, class F, class A>
bool emplaced(void* s, F take, A v) {
  auto& o = *static_cast<std::optional<X>*>(s);
  if (take(&o.emplace(), v)) return true;
  o.reset();
  return false;
}

// The Kind of each readable type.
template <class V>
const Kind* kind_of() {
  static const Kind kind = [] {
    Kind k;
    if constexpr (std::is_same_v<V, int64_t>) {
      k.take_int64 = [](void* s, int64_t v) { return *static_cast<int64_t*>(s) = v, true; };
      k.take_uint64 = [](void* s, uint64_t v) {
        if (v > static_cast<uint64_t>(INT64_MAX)) return false;
        return *static_cast<int64_t*>(s) = static_cast<int64_t>(v), true;
      };
    } else if constexpr (std::is_same_v<V, uint64_t>) {   // a count or an id: never negative (read as int64 first)
      k.take_int64 = [](void* s, int64_t v) {
        if (v < 0) return false;
        return *static_cast<uint64_t*>(s) = static_cast<uint64_t>(v), true;
      };
      k.take_uint64 = [](void* s, uint64_t v) {
        if (v > static_cast<uint64_t>(INT64_MAX)) return false;
        return *static_cast<uint64_t*>(s) = v, true;
      };
    } else if constexpr (std::is_same_v<V, double>) {
      k.take_int64 = [](void* s, int64_t v) { return *static_cast<double*>(s) = static_cast<double>(v), true; };
      k.take_uint64 = [](void* s, uint64_t v) { return *static_cast<double*>(s) = static_cast<double>(v), true; };
      k.take_double = [](void* s, double v) {
        if (!std::isfinite(v)) return false;   // an overflowing literal (1e999): the tree path fails it
        return *static_cast<double*>(s) = v, true;
      };
    } else if constexpr (std::is_same_v<V, bool>) {
      k.take_bool = [](void* s, bool v) { return *static_cast<bool*>(s) = v, true; };
    } else if constexpr (std::is_same_v<V, std::string>) {
      k.take_string = [](void* s, std::string_view v) {
        auto& out = *static_cast<std::string*>(s);
        if (v.find('\0') == std::string_view::npos) out.assign(v.data(), v.size());
        else out = nul_replaced(v);
        return true;
      };
    } else if constexpr (IsOptional<V>::value) {
      // std::optional<X>: null is empty; any other value is X's.
      using X = typename V::value_type;
      k = *kind_of<X>();
      k.take_null = [](void* s) { return static_cast<V*>(s)->reset(), true; };
      // Each taker emplaces X first, then X's taker fills it (an unset optional again if X refuses the value).
      if (k.take_int64) k.take_int64 = [](void* s, int64_t v) { return emplaced<X>(s, kind_of<X>()->take_int64, v); };
      if (k.take_uint64)
        k.take_uint64 = [](void* s, uint64_t v) { return emplaced<X>(s, kind_of<X>()->take_uint64, v); };
      if (k.take_double)
        k.take_double = [](void* s, double v) { return emplaced<X>(s, kind_of<X>()->take_double, v); };
      if (k.take_string)
        k.take_string = [](void* s, std::string_view v) { return emplaced<X>(s, kind_of<X>()->take_string, v); };
      if (k.take_bool) k.take_bool = [](void* s, bool v) { return emplaced<X>(s, kind_of<X>()->take_bool, v); };
    } else if constexpr (IsVector<V>::value) {
      using E = typename V::value_type;
      k.element = kind_of<E>();
      k.clear = [](void* s) { static_cast<V*>(s)->clear(); };
      k.append = [](void* s) -> void* { return &static_cast<V*>(s)->emplace_back(); };
      if constexpr (std::is_same_v<E, double>)
        k.assign_doubles = [](void* s, const double* p, std::size_t n) { static_cast<V*>(s)->assign(p, p + n); };
    } else {
      static_assert(record_readable<V>(), "a type the direct reader does not read");
      k.record = record_table<V>();
    }
    return k;
  }();
  return &kind;
}

template <class T>
const RecordTable* record_table() {
  static const RecordTable table = [] {
    namespace dd = described_detail;
    RecordTable t;
    boost::mp11::mp_for_each<dd::public_members<T>>([&](auto m) {
      using D = decltype(m);
      using V = std::remove_cv_t<std::remove_reference_t<decltype(std::declval<T&>().*D::pointer)>>;
      Member member;
      member.name = D::name;
      member.get = [](void* r) -> void* { return &(static_cast<T*>(r)->*D::pointer); };
      member.kind = kind_of<V>();
      member.required = !IsOptional<V>::value && dd::required_by(dd::kRules<T>, D::pointer);
      if constexpr (record_readable<V>() || std::is_arithmetic_v<V> || std::is_same_v<V, std::string>)
        member.reset = [](void*) {};   // keeps its default
      else
        member.reset = [](void* s) { *static_cast<V*>(s) = V{}; };
      t.members.push_back(member);
    });
    if constexpr (dd::HasValidate<T>::value)
      t.validate = [](const void* r) {
        static const boost::json::object kNone;
        FieldReader reader(kNone, std::string());
        validate(reader, *static_cast<const T*>(r));
        return reader.ok();
      };
    return t;
  }();
  return &table;
}

}  // namespace direct

// Reads the JSON object `text` into `targets` (their keys together make the object's; each record default
// constructed by the caller). True when the whole text was read exactly as the tree path reads it; false when the
// text holds anything the direct reader refuses (see above): the records are then in an unspecified state, and the
// caller decodes the text the usual way, which accepts it or names what is wrong.
bool read_direct(std::string_view text, std::initializer_list<direct::Target> targets);

}  // namespace jetsweep::json
