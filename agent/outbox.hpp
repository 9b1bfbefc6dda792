// Outbox: the agent's result messages from the moment they are produced until the controller acks them, in
// bounded memory (issue 29). Each message is journaled first (agent/journal.hpp, when there is a journal); its
// frame stays in memory only while the frames held fit `memory_bytes`, and is read back from the journal when it
// is sent or resent otherwise. Sending is windowed: at most `send_window_bytes` are sent and not yet acked on a
// connection, so the frames in the socket's write queue stay bounded too and a control message (heartbeat,
// clock-probe reply) never waits behind more than a window of results. Without a journal every frame stays in
// memory until acked.
//
// Back-pressure reaches the producer through ProducerGate: the training thread waits between epochs (never
// inside one, where it would be timed) while the io thread has too many of its messages still to take in, or
// while the outbox is full (the journal over `journal_bytes` on disk, or, without a journal, frames over
// `memory_bytes` in memory): the run pauses, nothing is dropped.
//
// Threads: Outbox is io-thread only; ProducerGate is the one part the training thread touches.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "agent/journal.hpp"
#include "common/protocol.hpp"

namespace jetsweep::agent {

// ProducerGate: the count of results posted to the io thread and not yet taken in, and whether the outbox is
// full. Thread-safe: the training thread posts and waits, the io thread takes in and sets `full`.
class ProducerGate {
 public:
  // Results posted and not yet taken in before the producer waits (a sample chunk is up to ~1 MB in memory).
  static constexpr size_t kMaxPosted = 8;

  void posted();                  // training thread, before posting a result
  void taken();                   // io thread, after taking one in
  void set_full(bool full);       // io thread
  // Training thread: waits while more than kMaxPosted results wait for the io thread or the outbox is full, until
  // `cancel` is set. Returns the seconds it waited.
  double wait_for_room(const std::atomic<bool>& cancel);
  // wait_for_room, logging a pause of a second or more with its cause (agent `agent`, run `run`). Returns the
  // seconds it waited.
  double pause_between_epochs(const std::string& agent, int64_t run, const std::atomic<bool>& cancel);
  size_t posted_count() const;
  bool full() const;

 private:
  mutable std::mutex mutex_;
  std::condition_variable room_;
  size_t posted_ = 0;
  bool full_ = false;
};

class Outbox {
 public:
  struct Limits {
    uint64_t memory_bytes = 64u << 20;         // result frames held in memory
    uint64_t journal_bytes = 2048ull << 20;    // journal disk use at which the producer pauses
    uint64_t send_window_bytes = 4u << 20;     // sent and not yet acked on one connection
  };
  // A message in the outbox: its frame is held in memory or read back from the journal.
  struct Item {
    uint64_t id = 0;
    int64_t run_id = 0;
    bool run_finished = false;
    uint64_t frame_bytes = 0;
    std::string frame;    // empty when not held in memory
    bool journaled = false;
    bool lost = false;    // damaged in the journal: never sent
  };
  // Starts with the messages the journal holds unacknowledged (frames left on disk).
  Outbox(std::shared_ptr<Journal> journal, Limits limits);

  // Encodes `body` with the next id, journals it and keeps it until acked; returns its id. A journal error is
  // logged by the caller from `journal_error` (the message then stays in memory, and is journaled with the next
  // message the journal takes: a message is never journaled while an earlier one is not).
  uint64_t add(proto::Body body, Status& journal_error);
  // The controller committed every message with id <= up_to. Returns a journal error (logged by the caller).
  Status ack(uint64_t up_to);
  // A new connection: everything unacknowledged is to be sent again, oldest first.
  void restart_sending();
  // The next frame to send on this connection within the window (read back from the journal when not held);
  // nullopt when the window is full or everything is sent; an error when the journal cannot be read now (the
  // caller drops the connection and tries again on the next). A record damaged on disk never reads back: it is
  // logged once as lost (naming agent `agent`, its id and run), counted in lost(), passed over without taking
  // room in the window, and forgotten (acked in the journal) once everything before it is acked; when it was a
  // run's run_finished, a run_finished "failed" naming the loss takes its place, so the run still ends.
  Result<std::optional<std::string>> next_to_send(const std::string& agent);
  int64_t lost() const { return lost_; }

  bool empty() const { return items_.empty(); }
  size_t size() const { return items_.size(); }
  uint64_t bytes() const { return bytes_; }                    // frames unacknowledged
  uint64_t memory_bytes() const { return memory_bytes_; }      // frames held in memory
  uint64_t in_flight_bytes() const { return in_flight_bytes_; }
  uint64_t next_id() const { return next_id_; }
  uint64_t last_id() const { return next_id_ - 1; }
  std::vector<int64_t> runs() const;   // runs with unacknowledged messages
  // A heartbeat in `state` (running `run`) that reports this outbox's backlog.
  proto::Heartbeat heartbeat(std::string state, std::optional<int64_t> run) const;
  // Over its bound: the journal's disk use over journal_bytes, or without a journal memory over memory_bytes.
  bool full() const;
  ProducerGate& gate() { return gate_; }
  const Limits& limits() const { return limits_; }

 private:
  void update_gate();
  // Appends `it` to the journal; it.journaled says whether the journal now holds it.
  Status journal(Item& it, std::string_view type);
  // Appends the messages not yet journaled (a write failed, e.g. the disk was full), oldest first; stops at the
  // first that fails again.
  Status journal_backlog();
  // Forgets lost items at the front (everything before them is acked), acking them in the journal.
  Status forget_leading_lost();

  std::shared_ptr<Journal> journal_;
  Limits limits_;
  std::deque<Item> items_;   // in id order
  size_t sent_ = 0;          // items_[0, sent_) sent on this connection
  uint64_t bytes_ = 0;
  uint64_t memory_bytes_ = 0;
  uint64_t unjournaled_bytes_ = 0;   // held in memory because they are not in the journal
  size_t unjournaled_items_ = 0;     //   and how many: journaled, in id order, before any later message
  uint64_t in_flight_bytes_ = 0;
  uint64_t next_id_ = 1;
  int64_t lost_ = 0;
  ProducerGate gate_;
};

}  // namespace jetsweep::agent
