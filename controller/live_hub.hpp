// LiveHub: the dashboard's live updates (GET /api/events, server-sent events). While anyone listens it asks for a
// snapshot (health, campaigns, fleet: one store query shared by all subscribers) at most once per interval, and
// sends it as a `snapshot` event to every subscriber when it changed, and to each new subscriber at once. A
// subscriber holds at most one unsent snapshot (the latest replaces it: a slow reader never grows a queue); idle
// subscribers get a comment line every `heartbeat_every` intervals so proxies keep the stream open. stop() closes
// every stream (controller shutdown). Owned by the Controller; io thread only (the threading rule: README.md,
// "Threading"); the snapshot query itself runs where `Query` puts it (the Controller's DbWorker) and calls back on
// the io thread.
#pragma once

#include <boost/asio.hpp>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace jetsweep::controller {

// An open event stream (LiveSession, controller/live_session.hpp). Io thread only.
class LiveSubscriber {
 public:
  virtual ~LiveSubscriber() = default;
  // The newest event frame: written next, replacing any frame not yet written.
  virtual void offer(std::shared_ptr<const std::string> frame) = 0;
  // A keep-alive comment, written only when nothing is being written or waiting.
  virtual void heartbeat() = 0;
  virtual void close() = 0;
  virtual bool open() const = 0;
};

class LiveHub : public std::enable_shared_from_this<LiveHub> {
 public:
  // Produces the snapshot's JSON text and calls `done` with it (nullopt: the query failed) on the io thread.
  using Query = std::function<void(std::function<void(std::optional<std::string>)> done)>;

  LiveHub(boost::asio::any_io_executor ex, Query query, std::chrono::milliseconds interval = std::chrono::seconds(1),
          int heartbeat_every = 15);

  void subscribe(const std::shared_ptr<LiveSubscriber>& s);
  void stop();

  // An SSE frame: "event: NAME\ndata: DATA\n\n" (DATA on one line, as serialized JSON is).
  static std::string frame(const std::string& event, const std::string& data);

  // For tests and /metrics: open subscribers, queries made, snapshots that differed from the previous one.
  size_t subscribers() const;
  uint64_t queries() const { return queries_; }
  uint64_t changes() const { return changes_; }

 private:
  void tick();
  void query_now();
  void on_snapshot(std::optional<std::string> json);
  void prune();

  boost::asio::any_io_executor ex_;
  Query query_;
  std::chrono::milliseconds interval_;
  int heartbeat_every_;
  boost::asio::steady_timer timer_;
  std::vector<std::weak_ptr<LiveSubscriber>> subscribers_;
  std::vector<std::weak_ptr<LiveSubscriber>> waiting_first_;   // subscribed before any snapshot existed
  std::optional<std::string> last_json_;
  std::shared_ptr<const std::string> last_frame_;
  bool ticking_ = false, querying_ = false, stopped_ = false;
  int ticks_ = 0;
  uint64_t queries_ = 0, changes_ = 0;
};

}  // namespace jetsweep::controller
