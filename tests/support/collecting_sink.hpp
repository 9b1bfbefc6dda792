// A ResultSink that keeps every message a run emits, in order, with accessors by message type. An honest
// fake for the agent's result stream (the agent posts the same messages to the controller). Single-threaded:
// the run and the checks happen on the test's thread.
#pragma once

#include <doctest/doctest.h>

#include <variant>
#include <vector>

#include "agent/backend.hpp"
#include "common/protocol.hpp"

namespace jetsweep::testing {

class CollectingSink final : public agent::ResultSink {
 public:
  void emit(proto::Body body) override { messages.push_back(std::move(body)); }

  std::vector<proto::EpochResult> epochs() const { return all<proto::EpochResult>(); }
  std::vector<proto::MinibatchChunk> chunks() const { return all<proto::MinibatchChunk>(); }
  // Every sample of every sample chunk, in order.
  std::vector<proto::Sample> samples() const {
    std::vector<proto::Sample> out;
    for (const auto& c : all<proto::SampleChunk>()) out.insert(out.end(), c.samples.begin(), c.samples.end());
    return out;
  }
  // The last message, which must be run_finished.
  proto::RunFinished finished() const {
    REQUIRE(!messages.empty());
    REQUIRE(std::holds_alternative<proto::RunFinished>(messages.back()));
    return std::get<proto::RunFinished>(messages.back());
  }
  // Every message of type T, in order.
  template <typename T>
  std::vector<T> all() const {
    std::vector<T> out;
    for (const auto& m : messages)
      if (const auto* x = std::get_if<T>(&m)) out.push_back(*x);
    return out;
  }

  std::vector<proto::Body> messages;
};

}  // namespace jetsweep::testing
