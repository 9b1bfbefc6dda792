#include "agent/model_fetch.hpp"

#include <fstream>

#include "common/log.hpp"

namespace jetsweep::agent {

ControllerModelFetcher::ControllerModelFetcher(std::function<void(proto::FetchModel)> send, std::chrono::milliseconds retry,
                                               std::chrono::milliseconds give_up)
    : send_(std::move(send)), retry_(retry), give_up_(give_up) {}

void ControllerModelFetcher::deliver(proto::ModelChunk chunk) {
  std::lock_guard lock(mu_);
  if (chunk.sha256 != wanted_sha_ || chunk.index != wanted_index_) return;   // late: asked again and answered already
  reply_ = std::move(chunk);
  arrived_.notify_all();
}

Result<proto::ModelChunk> ControllerModelFetcher::request(const std::string& sha256, int64_t index,
                                                          const std::atomic<bool>& cancel) {
  std::unique_lock lock(mu_);
  wanted_sha_ = sha256;
  wanted_index_ = index;
  reply_.reset();
  const auto deadline = std::chrono::steady_clock::now() + give_up_;
  while (!reply_) {
    lock.unlock();
    send_(proto::FetchModel{sha256, index});
    lock.lock();
    const auto ask_again = std::min(deadline, std::chrono::steady_clock::now() + retry_);
    while (!reply_ && !cancel.load() && std::chrono::steady_clock::now() < ask_again)
      arrived_.wait_for(lock, std::chrono::milliseconds(100));   // cancel is an atomic, not a condition: poll it
    if (cancel.load()) return Status(Code::kCancelled, "run cancelled while fetching model file " + sha256);
    if (!reply_ && std::chrono::steady_clock::now() >= deadline)
      return unavailable("model file " + sha256 + ": chunk " + std::to_string(index) + " did not come from the controller in " +
                         std::to_string(give_up_.count() / 1000) + " s");
  }
  proto::ModelChunk c = std::move(*reply_);
  reply_.reset();
  wanted_index_ = -1;
  return c;
}

Status ControllerModelFetcher::fetch(const std::string& sha256, const std::string& dest, const std::atomic<bool>& cancel) {
  std::ofstream out(dest, std::ios::binary | std::ios::trunc);
  if (!out) return Status(Code::kIoError, "cannot write '" + dest + "'");
  int64_t chunks = 1, bytes = 0, written = 0;
  for (int64_t index = 0; index < chunks; ++index) {
    JS_ASSIGN_OR_RETURN(proto::ModelChunk c, request(sha256, index, cancel));
    if (!c.error.empty()) return Status(Code::kNotFound, "fetching model file " + sha256 + ": " + c.error);
    if (index == 0) {
      chunks = c.chunks;
      bytes = c.bytes;
      JS_LOG_INFO << "fetching model file " << sha256 << " from the controller (" << bytes << " bytes, " << chunks << " chunks)";
    }
    if (c.chunks != chunks || c.bytes != bytes || c.data.bytes.empty() || static_cast<int64_t>(c.data.bytes.size()) > proto::kModelChunkBytes)
      return Status(Code::kProtocolError, "model file " + sha256 + " chunk " + std::to_string(index) + ": inconsistent answer (" +
                                              std::to_string(c.data.bytes.size()) + " bytes of chunk " + std::to_string(index) +
                                              " of " + std::to_string(c.chunks) + ")");
    out.write(c.data.bytes.data(), static_cast<std::streamsize>(c.data.bytes.size()));
    written += static_cast<int64_t>(c.data.bytes.size());
  }
  out.close();
  if (!out) return Status(Code::kIoError, "writing '" + dest + "' failed");
  if (written != bytes)
    return Status(Code::kProtocolError, "model file " + sha256 + ": received " + std::to_string(written) + " bytes of " +
                                            std::to_string(bytes));
  return Status::ok();
}

}  // namespace jetsweep::agent
