#include "controller/live_hub.hpp"

#include <algorithm>

#include "controller/io_thread.hpp"

namespace jetsweep::controller {

LiveHub::LiveHub(boost::asio::any_io_executor ex, Query query, std::chrono::milliseconds interval, int heartbeat_every)
    : ex_(ex), query_(std::move(query)), interval_(interval), heartbeat_every_(std::max(1, heartbeat_every)), timer_(ex) {}

std::string LiveHub::frame(const std::string& event, const std::string& data) {
  return "event: " + event + "\ndata: " + data + "\n\n";
}

size_t LiveHub::subscribers() const {
  return static_cast<size_t>(std::count_if(subscribers_.begin(), subscribers_.end(), [](const auto& w) {
    auto s = w.lock();
    return s && s->open();
  }));
}

void LiveHub::prune() {
  auto gone = [](const std::weak_ptr<LiveSubscriber>& w) {
    auto s = w.lock();
    return !s || !s->open();
  };
  subscribers_.erase(std::remove_if(subscribers_.begin(), subscribers_.end(), gone), subscribers_.end());
  waiting_first_.erase(std::remove_if(waiting_first_.begin(), waiting_first_.end(), gone), waiting_first_.end());
}

void LiveHub::subscribe(const std::shared_ptr<LiveSubscriber>& s) {
  JS_CHECK_IO_THREAD_OF(ex_);
  if (stopped_) return s->close();
  prune();
  subscribers_.push_back(s);
  if (last_frame_) {
    s->offer(last_frame_);   // the latest snapshot at once; changes follow from the next query
  } else {
    waiting_first_.push_back(s);
    query_now();
  }
  if (!ticking_) {
    ticking_ = true;
    timer_.expires_after(interval_);
    timer_.async_wait([self = shared_from_this()](boost::system::error_code ec) {
      if (!ec) self->tick();
    });
  }
}

void LiveHub::tick() {
  JS_CHECK_IO_THREAD_OF(ex_);
  ticking_ = false;
  if (stopped_) return;
  prune();
  if (subscribers_.empty()) {   // nobody listens: no queries; the cached snapshot may be stale by the next one
    last_frame_.reset();
    last_json_.reset();
    return;
  }
  query_now();
  if (++ticks_ % heartbeat_every_ == 0)
    for (auto& w : subscribers_)
      if (auto s = w.lock()) s->heartbeat();
  ticking_ = true;
  timer_.expires_after(interval_);
  timer_.async_wait([self = shared_from_this()](boost::system::error_code ec) {
    if (!ec) self->tick();
  });
}

void LiveHub::query_now() {
  if (querying_ || stopped_) return;   // one query at a time, shared by every subscriber
  querying_ = true;
  ++queries_;
  query_([self = shared_from_this()](std::optional<std::string> json) { self->on_snapshot(std::move(json)); });
}

void LiveHub::on_snapshot(std::optional<std::string> json) {
  JS_CHECK_IO_THREAD_OF(ex_);
  querying_ = false;
  if (stopped_ || !json) return;
  prune();
  const bool changed = !last_json_ || *last_json_ != *json;
  if (changed) {
    ++changes_;
    last_frame_ = std::make_shared<const std::string>(frame("snapshot", *json));
    last_json_ = std::move(json);
    for (auto& w : subscribers_)
      if (auto s = w.lock()) s->offer(last_frame_);
  } else {
    for (auto& w : waiting_first_)
      if (auto s = w.lock()) s->offer(last_frame_);
  }
  waiting_first_.clear();
}

void LiveHub::stop() {
  JS_CHECK_IO_THREAD_OF(ex_);
  stopped_ = true;
  timer_.cancel();
  auto all = std::move(subscribers_);
  subscribers_.clear();
  waiting_first_.clear();
  for (auto& w : all)
    if (auto s = w.lock()) s->close();
}

}  // namespace jetsweep::controller
