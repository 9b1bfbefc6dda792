// ControllerModelFetcher: brings a model file missing from the agent's cache from the controller over the agent's
// connection, one chunk at a time (fetch_model -> model_chunk; common/protocol.hpp). fetch() runs on the training
// thread and blocks, asking again when a chunk does not come (the connection may have dropped and come back);
// deliver() is called on the agent's io thread with every model_chunk frame. Thread-safe between those two.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <optional>
#include <string>

#include "agent/model_cache.hpp"
#include "common/protocol.hpp"

namespace jetsweep::agent {

class ControllerModelFetcher final : public ModelSource {
 public:
  // `send` hands a request to the io thread (sent if connected, else lost: it is asked again after `retry`).
  explicit ControllerModelFetcher(std::function<void(proto::FetchModel)> send,
                                  std::chrono::milliseconds retry = std::chrono::seconds(10),
                                  std::chrono::milliseconds give_up = std::chrono::minutes(5));
  Status fetch(const std::string& sha256, const std::string& dest, const std::atomic<bool>& cancel) override;
  void deliver(proto::ModelChunk chunk);

 private:
  Result<proto::ModelChunk> request(const std::string& sha256, int64_t index, const std::atomic<bool>& cancel);

  std::function<void(proto::FetchModel)> send_;
  std::chrono::milliseconds retry_, give_up_;
  std::mutex mu_;
  std::condition_variable arrived_;
  std::string wanted_sha_;     // the chunk fetch() waits for
  int64_t wanted_index_ = -1;
  std::optional<proto::ModelChunk> reply_;
};

}  // namespace jetsweep::agent
