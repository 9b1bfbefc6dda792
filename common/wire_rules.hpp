// The wire rules of a record described with BOOST_DESCRIBE_STRUCT (common/described_json.hpp derives its JSON codec):
// which members a decoder requires, and which the encoder leaves out when empty. Declared beside the record's
// description with JS_WIRE_RULES. Header-only, constexpr.
#pragma once

#include <tuple>

namespace jetsweep::json {

template <class Required, class Omitted>
struct WireRules {
  Required required;
  Omitted omitted_when_empty;
};
template <class Required, class Omitted>
WireRules(Required, Omitted) -> WireRules<Required, Omitted>;

}  // namespace jetsweep::json

// Declares the wire rules of record T, in T's namespace: JS_WIRE_RULES(Heartbeat, (&Heartbeat::state),
// (&Heartbeat::backlog_messages, &Heartbeat::backlog_bytes)); either list may be ().
#define JS_WIRE_RULES(T, REQUIRED, OMITTED_WHEN_EMPTY)                                                  \
  constexpr auto wire_rules(const T*) {                                                                 \
    return ::jetsweep::json::WireRules{std::make_tuple REQUIRED, std::make_tuple OMITTED_WHEN_EMPTY}; \
  }
