// The wire rules of a record described with BOOST_DESCRIBE_STRUCT (common/described_json.hpp derives its JSON codec):
// which members a decoder requires, and which the encoder leaves out when empty. Declared beside the record's
// description with JS_WIRE_RULES or JS_WIRE_RULES_ALL_REQUIRED. Header-only, constexpr.
#pragma once

#include <tuple>
#include <type_traits>

namespace jetsweep::json {

// What the listed members are: the only required ones, or the only ones not required (an std::optional member never
// is required either way).
enum class Listed { kRequired, kNotRequired };

template <Listed kListed, class Members, class Omitted>
struct WireRules {
  static constexpr Listed kWhat = kListed;
  Members listed;
  Omitted omitted_when_empty;
};
template <Listed kListed, class Members, class Omitted>
constexpr WireRules<kListed, Members, Omitted> wire_rules_of(Members listed, Omitted omitted) {
  return {listed, omitted};
}

// A value the encoder writes that no member holds, computed by a const member function of the record (read by no
// decoder): JS_WIRE_COMPUTED's.
template <class Function, class After>
struct WireComputed {
  const char* name;
  Function function;
  After after;
};

}  // namespace jetsweep::json

// Declares the wire rules of record T, in T's namespace: JS_WIRE_RULES(Heartbeat, (&Heartbeat::state),
// (&Heartbeat::backlog_messages, &Heartbeat::backlog_bytes)); either list may be (). JS_WIRE_RULES_ALL_REQUIRED(T,
// (members not required), (members left out when empty)) for a record whose members are required but a few.
#define JS_WIRE_RULES(T, REQUIRED, OMITTED_WHEN_EMPTY) JS_WIRE_RULES_LISTED(T, kRequired, REQUIRED, OMITTED_WHEN_EMPTY)
#define JS_WIRE_RULES_ALL_REQUIRED(T, NOT_REQUIRED, OMITTED_WHEN_EMPTY) \
  JS_WIRE_RULES_LISTED(T, kNotRequired, NOT_REQUIRED, OMITTED_WHEN_EMPTY)
// (A template taking exactly T: a record derived from T, without rules of its own, does not take T's.)
#define JS_WIRE_RULES_LISTED(T, WHAT, LISTED, OMITTED_WHEN_EMPTY)                                     \
  template <class U, std::enable_if_t<std::is_same_v<U, T>, int> = 0>                                \
  constexpr auto wire_rules(const U*) {                                                               \
    return ::jetsweep::json::wire_rules_of<::jetsweep::json::Listed::WHAT>(std::make_tuple LISTED,    \
                                                                          std::make_tuple OMITTED_WHEN_EMPTY); \
  }

// Where a record's described bases go among its own keys when not first: JS_WIRE_BASES_AFTER(EpochResult,
// &EpochResult::copy_s) writes the bases' keys right after copy_s's place (whether or not copy_s itself is written).
// MEMBER must be one of T's own described members: any other writes no base key at all (nothing checks it at compile
// time; the byte-for-byte pins in tests/unit/test_wire_frames.cpp and test_api_json.cpp check both users).
#define JS_WIRE_BASES_AFTER(T, MEMBER)                                  \
  template <class U, std::enable_if_t<std::is_same_v<U, T>, int> = 0> \
  constexpr auto wire_bases_after(const U*) {                          \
    return MEMBER;                                                     \
  }

// A computed key of record T: JS_WIRE_COMPUTED(FleetBoard, "ready", &FleetBoard::ready, &FleetBoard::simulated) writes
// "ready": v.ready() right after simulated's place (whether or not simulated itself is written); decoders ignore it.
// AFTER must be one of T's own described members (the pinned documents of tests/unit/test_api_json.cpp check both
// users).
#define JS_WIRE_COMPUTED(T, NAME, FUNCTION, AFTER)                                                 \
  template <class U, std::enable_if_t<std::is_same_v<U, T>, int> = 0>                               \
  constexpr auto wire_computed(const U*) {                                                          \
    return ::jetsweep::json::WireComputed<decltype(FUNCTION), decltype(AFTER)>{NAME, FUNCTION, AFTER}; \
  }
