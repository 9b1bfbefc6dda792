// operator== of the protocol and config structs (boost::pfr::eq_fields, C++17; EpochResult through its Boost.Describe
// description): every field takes part, so a field added later cannot be forgotten. Each field of a default value is
// changed in turn and must make it unequal.
#include <doctest/doctest.h>

#include <boost/describe.hpp>
#include <boost/mp11.hpp>
#include <boost/pfr.hpp>
#include <optional>
#include <string>
#include <type_traits>
#include <vector>

#include "common/perf/calibration.hpp"
#include "common/protocol.hpp"
#include "common/run_config.hpp"

namespace jetsweep {
namespace {

template <class T> struct IsOptional : std::false_type {};
template <class T> struct IsOptional<std::optional<T>> : std::true_type {};
template <class T> struct IsVector : std::false_type {};
template <class T> struct IsVector<std::vector<T>> : std::true_type {};

// Gives a field another value, whatever its type (a field of a new type fails to compile here: extend this).
template <class F>
void change(F& f) {
  if constexpr (std::is_same_v<F, bool>) f = !f;
  else if constexpr (std::is_arithmetic_v<F>) f = static_cast<F>(f + 1);
  else if constexpr (std::is_same_v<F, std::string>) f += "x";
  else if constexpr (IsOptional<F>::value) { if (f) f.reset(); else f.emplace(); }
  else if constexpr (IsVector<F>::value) f.emplace_back();
  else if constexpr (std::is_same_v<F, proto::Body>) f = proto::Ack{7};
  else if constexpr (std::is_aggregate_v<F>) change(boost::pfr::get<0>(f));
  else static_assert(!sizeof(F), "change(): no way to change a field of this type");
}

template <class T>
void every_field_compared() {
  const T a{};
  CHECK(a == T(a));
  for (size_t i = 0; i < boost::pfr::tuple_size_v<T>; ++i) {
    CAPTURE(i);
    T b = a;
    boost::pfr::for_each_field(b, [&](auto& field, size_t j) {
      if (j == i) change(field);
    });
    CHECK_FALSE(a == b);
  }
}

TEST_CASE_TEMPLATE("operator== compares every field", T, proto::DeviceFacts, proto::Register, proto::Registered,
                   proto::Heartbeat, proto::AssignRun, proto::BoardState, proto::RunStarted, proto::ClockReading,
                   proto::MinibatchChunk, proto::Sample, proto::SampleChunk, proto::RunFinished,
                   proto::TimeSync, proto::TimeSyncReply, proto::CancelRun, proto::Ack, proto::Error, proto::Envelope,
                   RunConfig, PowerModeRequest, perf::Settings) {
  every_field_compared<T>();
}

// EpochResult derives from EpochMeasures, which PFR cannot reflect: its operator== and this test follow its
// Boost.Describe description (its own members and its base's), which its codecs and the epochs table also follow.
TEST_CASE("operator== compares every described field of an epoch result, its measures included") {
  using Members = boost::describe::describe_members<proto::EpochResult,
                                                    boost::describe::mod_public | boost::describe::mod_inherited>;
  const proto::EpochResult a{};
  CHECK(a == proto::EpochResult(a));
  size_t count = 0;
  boost::mp11::mp_for_each<Members>([&](auto member) {
    CAPTURE(member.name);
    proto::EpochResult b = a;
    change(b.*member.pointer);
    CHECK_FALSE(a == b);
    ++count;
  });
  CHECK(count == boost::mp11::mp_size<Members>::value);
  CHECK(count >= 21);   // 11 own members and 10 measures when this test was written
}

}  // namespace
}  // namespace jetsweep
