// The agent's outbox in bounded memory (issue 29): frames beyond the memory bound are read back from the journal,
// sending is windowed, the producer gate pauses a run while the outbox is full; and the journal's streaming
// read-back that this rests on.
#include <doctest/doctest.h>

#include <fcntl.h>
#include <sys/resource.h>
#include <unistd.h>

#include <atomic>
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <chrono>
#include <csignal>
#include <filesystem>
#include <fstream>
#include <functional>
#include <future>
#include <optional>
#include <random>
#include <thread>

#include "agent/outbox.hpp"
#include "support/temp_dir.hpp"

using namespace jetsweep;
using agent::Journal;
using agent::Outbox;
using agent::ProducerGate;

namespace {

// A minibatch chunk whose frame is about n * 40 bytes.
proto::Body chunk(int64_t run, int64_t epoch, size_t n) {
  return proto::MinibatchChunk{run, epoch, 0, std::vector<double>(n, 0.0123456789), std::vector<double>(n, 0.0234567891), {}};
}

std::shared_ptr<Journal> open_journal(const testing::TempDir& dir) {
  auto j = Journal::open(dir.str(), "box-1");
  REQUIRE_MESSAGE(j.is_ok(), j.status().to_string());
  return std::shared_ptr<Journal>(std::move(j).value());
}

Outbox::Limits limits(uint64_t memory, uint64_t journal, uint64_t window) {
  Outbox::Limits l;
  l.memory_bytes = memory;
  l.journal_bytes = journal;
  l.send_window_bytes = window;
  return l;
}

// The tests' io thread: the outbox's journal completions run here, when the test runs them.
struct Io {
  boost::asio::io_context ioc;
  boost::asio::executor_work_guard<boost::asio::io_context::executor_type> guard = boost::asio::make_work_guard(ioc);
};

Io& io() {
  static Io instance;
  return instance;
}

Outbox make_box(std::shared_ptr<Journal> j, Outbox::Limits l) { return Outbox(std::move(j), l, io().ioc.get_executor(), "box-1"); }

// Runs the journal thread's completions until none is outstanding (a condition, with a generous deadline).
void settle(Outbox& box) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (box.journal_jobs() > 0) {
    REQUIRE(std::chrono::steady_clock::now() < deadline);
    io().ioc.run_one_for(std::chrono::milliseconds(100));
  }
}

// Adds a message and waits until the journal thread has written it.
uint64_t add(Outbox& box, proto::Body body) {
  const uint64_t id = box.add(std::move(body));
  settle(box);
  return id;
}

// Everything the outbox sends now (until its window closes), as decoded envelopes; waits for reads from disk.
std::vector<proto::Envelope> send_all(Outbox& box) {
  std::vector<proto::Envelope> out;
  for (;;) {
    auto next = box.next_to_send();
    REQUIRE_MESSAGE(next.is_ok(), next.status().to_string());
    if (!next->has_value()) {
      if (box.journal_jobs() == 0) return out;
      settle(box);
      continue;
    }
    auto env = proto::decode(***next);
    REQUIRE_MESSAGE(env.is_ok(), env.status().to_string());
    out.push_back(std::move(env).value());
  }
}

// Stalls the outbox's journal thread (a disk that does not answer) until release().
struct StalledDisk {
  explicit StalledDisk(Outbox& box) {
    REQUIRE(box.run_on_journal_thread([f = released.get_future().share()](Journal&) { f.wait(); }));
  }
  ~StalledDisk() { release(); }
  void release() {
    if (!done) released.set_value();
    done = true;
  }
  std::promise<void> released;
  bool done = false;
};

// A full disk without privileges, while it lives: a file-size limit at the journal's present size (plus `room`
// bytes) makes its writes fail (EFBIG instead of ENOSPC, the same path through the journal: the record is cut
// back, the message stays in memory).
struct FullDisk {
  explicit FullDisk(const testing::TempDir& dir, uint64_t room = 0) {
    std::signal(SIGXFSZ, SIG_IGN);
    REQUIRE(::getrlimit(RLIMIT_FSIZE, &unlimited) == 0);
    rlimit full = unlimited;
    full.rlim_cur = std::filesystem::file_size(dir.str() + "/journal.bin") + room;
    REQUIRE(::setrlimit(RLIMIT_FSIZE, &full) == 0);
  }
  ~FullDisk() { ::setrlimit(RLIMIT_FSIZE, &unlimited); }
  rlimit unlimited{};
};

}  // namespace

TEST_CASE("journal: frames are read back from disk by id, intact, and only while unacknowledged") {
  testing::TempDir dir;
  auto j = open_journal(dir);
  std::vector<std::string> frames;
  for (uint64_t id = 1; id <= 20; ++id) {
    proto::Body body = chunk(3, static_cast<int64_t>(id), 50 * id);
    agent::JournalEntry e{id, 3, false, proto::encode(proto::Envelope{id, body})};
    frames.push_back(e.frame);
    REQUIRE(j->append(e, "minibatches").is_ok());
  }
  for (uint64_t id = 1; id <= 20; ++id) {
    auto f = j->read_frame(id);
    REQUIRE_MESSAGE(f.is_ok(), f.status().to_string());
    CHECK(*f == frames[id - 1]);
    CHECK(j->unacked()[id - 1].frame_bytes() == frames[id - 1].size());
  }
  REQUIRE(j->ack(5).is_ok());
  CHECK(j->read_frame(5).status().code() == Code::kNotFound);
  CHECK(j->read_frame(6).value() == frames[5]);
  CHECK(j->unacked_bytes() > 0);

  // A record damaged on disk after it was written is an error naming it, never a wrong frame.
  const uint64_t offset = j->unacked().back().offset;
  {
    std::fstream f((dir / "journal.bin").string(), std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(static_cast<std::streamoff>(offset + 40));
    f.write("garbage", 7);
  }
  auto bad = j->read_frame(20);
  REQUIRE_FALSE(bad.is_ok());
  CHECK(bad.status().message().find("message #20") != std::string::npos);
}

TEST_CASE("outbox: frames beyond the memory bound stay on disk and are sent from there, in order") {
  testing::TempDir dir;
  auto j = open_journal(dir);
  Outbox box = make_box(j, limits(64 << 10, 1 << 30, 1 << 30));
  uint64_t total = 0;
  for (int i = 0; i < 200; ++i) {   // about 1.4 MB of frames: 20 times the memory bound
    add(box, chunk(9, i, 250));
    total = box.bytes();
    CHECK(box.memory_bytes() <= (64u << 10));
  }
  CHECK(box.size() == 200);
  CHECK(total > 20 * (64u << 10));
  CHECK_FALSE(box.full());
  auto sent = send_all(box);
  REQUIRE(sent.size() == 200);
  for (size_t i = 0; i < sent.size(); ++i) {
    CHECK(sent[i].id == i + 1);
    CHECK(std::get<proto::MinibatchChunk>(sent[i].body).epoch == static_cast<int64_t>(i));
  }
  box.ack(150);
  CHECK(box.size() == 50);
  CHECK(box.runs() == std::vector<int64_t>{9});

  // A new connection resends what is unacknowledged, from the oldest.
  box.restart_sending();
  auto again = send_all(box);
  REQUIRE(again.size() == 50);
  CHECK(again.front().id == 151);
}

// Overwrites bytes inside the journal record of message `index` (in unacked order).
void damage(const testing::TempDir& dir, const Journal& j, size_t index) {
  std::fstream f((dir / "journal.bin").string(), std::ios::in | std::ios::out | std::ios::binary);
  f.seekp(static_cast<std::streamoff>(j.unacked()[index].offset + 30));
  f.write("damaged", 7);
}

TEST_CASE("outbox: a journal record damaged on disk is lost once, passed over, and never blocks the rest") {
  testing::TempDir dir;
  auto j = open_journal(dir);
  Outbox box = make_box(j, limits(1, 1 << 30, 1 << 30));   // nothing held in memory: every frame is read back
  for (int i = 0; i < 5; ++i) add(box, chunk(6, i, 50));
  damage(dir, *j, 2);
  auto sent = send_all(box);
  REQUIRE(sent.size() == 4);
  CHECK(sent[1].id == 2);
  CHECK(sent[2].id == 4);
  CHECK(box.lost() == 1);
  box.restart_sending();   // a reconnect: passed over again, not lost again
  CHECK(send_all(box).size() == 4);
  CHECK(box.lost() == 1);
  box.ack(5);   // the controller's cumulative ack covers it
  CHECK(box.empty());

  SUBCASE("the last message, a run_finished: a failed run_finished takes its place, and nothing waits for it") {
    add(box, chunk(7, 0, 50));
    add(box, proto::RunFinished{7, "done", "", 1.0});
    damage(dir, *j, 1);
    auto more = send_all(box);
    REQUIRE(more.size() == 2);
    CHECK(std::get<proto::MinibatchChunk>(more[0].body).run_id == 7);
    const auto& fin = std::get<proto::RunFinished>(more[1].body);
    CHECK(fin.status == "failed");
    CHECK(fin.error.find("damaged") != std::string::npos);
    box.ack(more.back().id);
    CHECK(box.empty());
    CHECK(box.lost() == 2);
  }
}

// Makes the journal's reads fail while it lives: an I/O error, not damage (its descriptor is swapped, on the journal
// thread, for one of the same file opened for appending only, on which pread fails with EBADF); writes still go to
// the file's end. Restored on destruction.
struct FailingReads {
  FailingReads(Outbox& box, const testing::TempDir& dir) : box_(box) {
    const auto file = std::filesystem::canonical(dir / "journal.bin");
    REQUIRE(on_journal_thread([&] {
      for (const auto& entry : std::filesystem::directory_iterator("/proc/self/fd")) {
        std::error_code ec;
        if (std::filesystem::read_symlink(entry.path(), ec) == file) fd_ = std::stoi(entry.path().filename().string());
      }
      if (fd_ < 0 || (saved_ = ::dup(fd_)) < 0) return false;
      const int write_only = ::open(file.c_str(), O_WRONLY | O_APPEND | O_CLOEXEC);
      const bool swapped = write_only >= 0 && ::dup2(write_only, fd_) == fd_;
      if (write_only >= 0) ::close(write_only);
      return swapped;
    }));
  }
  ~FailingReads() {
    on_journal_thread([&] { return saved_ < 0 || (::dup2(saved_, fd_) == fd_ && ::close(saved_) == 0); });
  }
  // Runs `job` on the journal thread (no assertion there: a throw would end that thread) and returns its result.
  bool on_journal_thread(std::function<bool()> job) {
    auto done = std::make_shared<std::promise<bool>>();
    auto result = done->get_future();
    if (!box_.run_on_journal_thread([done, job](Journal&) { done->set_value(job()); })) return false;
    return result.wait_for(std::chrono::seconds(60)) == std::future_status::ready && result.get();
  }
  Outbox& box_;
  int fd_ = -1;
  int saved_ = -1;
};

TEST_CASE("outbox: a journal read that fails (an I/O error, not damage) ends the connection after the frames before it, "
          "and everything is sent on the next one, nothing lost") {
  testing::TempDir dir;
  auto j = open_journal(dir);
  for (int i = 0; i < 6; ++i) REQUIRE(j->append(agent::JournalEntry{static_cast<uint64_t>(i + 1), 4, false,
                                                                 proto::encode(proto::Envelope{static_cast<uint64_t>(i + 1), chunk(4, i, 20)})},
                                               "minibatches").is_ok());
  const uint64_t frame = j->unacked()[0].frame_bytes();
  // Nothing held in memory (every frame is read back from disk); a window of two frames.
  Outbox box = make_box(j, limits(1, 1 << 30, 2 * frame));
  const auto first = send_all(box);
  REQUIRE(first.size() == 2);
  {
    FailingReads failing(box, dir);
    box.ack(2);   // the window opens: 3 and 4 are read from disk, and the reads fail
    std::optional<Status> error;
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
    while (!error) {
      REQUIRE(std::chrono::steady_clock::now() < deadline);
      auto next = box.next_to_send();
      if (!next.is_ok()) error = next.status();
      else REQUIRE_FALSE(next->has_value());   // nothing is sent in the place of 3
      settle(box);
    }
    CHECK(error->code() != Code::kInvalidArgument);
    CHECK_MESSAGE(error->message().find("journal") != std::string::npos, error->to_string());
    CHECK(box.lost() == 0);   // an I/O error is not damage: nothing is passed over
    CHECK(box.size() == 4);
  }
  box.restart_sending();   // the next connection reads them again
  const auto again = send_all(box);
  REQUIRE(again.size() == 2);   // the window
  CHECK(again[0].id == 3);
  CHECK(again[1].id == 4);
  box.ack(4);
  const auto rest = send_all(box);
  REQUIRE(rest.size() == 2);
  CHECK(rest[0].id == 5);
  CHECK(rest[1].id == 6);
  box.ack(6);
  CHECK(box.empty());
  CHECK(box.lost() == 0);
}

TEST_CASE("outbox: a restarted agent's outbox holds no frame in memory and replays from the journal") {
  testing::TempDir dir;
  {
    auto j = open_journal(dir);
    Outbox box = make_box(j, limits(1 << 30, 1 << 30, 1 << 30));
    for (int i = 0; i < 50; ++i) add(box, chunk(4, i, 100));
    add(box, proto::RunFinished{4, "done", "", 1.0});
    box.ack(10);
  }
  auto j = open_journal(dir);
  Outbox box = make_box(j, limits(1 << 30, 1 << 30, 1 << 30));
  CHECK(box.size() == 41);
  CHECK(box.memory_bytes() == 0);
  CHECK(box.bytes() > 0);
  CHECK(box.next_id() == 52);
  auto sent = send_all(box);
  REQUIRE(sent.size() == 41);
  CHECK(sent.front().id == 11);
  CHECK(std::holds_alternative<proto::RunFinished>(sent.back().body));
  CHECK(add(box, chunk(5, 0, 10)) == 52);
}

TEST_CASE("outbox: at most a window of results is in flight; an ack opens it again") {
  testing::TempDir dir;
  Outbox box = make_box(open_journal(dir), limits(1 << 30, 1 << 30, 20 << 10));
  for (int i = 0; i < 40; ++i) add(box, chunk(2, i, 100));   // about 2.7 KB each
  auto first = send_all(box);
  CHECK(first.size() >= 3);
  CHECK(first.size() < 10);
  CHECK(box.in_flight_bytes() <= (20u << 10));
  CHECK(box.in_flight_bytes() > (16u << 10));   // within one frame of the window
  CHECK(send_all(box).empty());   // the window is full
  box.ack(first.back().id);
  CHECK(box.in_flight_bytes() == 0);
  auto second = send_all(box);
  REQUIRE_FALSE(second.empty());
  CHECK(second.front().id == first.back().id + 1);

  // One message larger than the whole window still goes, alone.
  Outbox tiny = make_box(nullptr, limits(1 << 30, 1 << 30, 100));
  add(tiny, chunk(2, 0, 100));
  add(tiny, chunk(2, 1, 100));
  CHECK(send_all(tiny).size() == 1);
}

TEST_CASE("outbox: full at the journal's disk limit, or without a journal at the memory bound; acks empty it") {
  SUBCASE("journal") {
    testing::TempDir dir;
    auto j = open_journal(dir);
    Outbox box = make_box(j, limits(8 << 10, 256 << 10, 1 << 30));
    while (!box.full()) add(box, chunk(1, 0, 200));
    CHECK(box.journal_disk_bytes() >= (256u << 10));
    CHECK(box.gate().full());
    box.ack(box.last_id());
    settle(box);
    CHECK_FALSE(box.full());
    CHECK_FALSE(box.gate().full());
    CHECK(box.journal_disk_bytes() < (64u << 10));   // compacted once everything was acked
  }
  SUBCASE("memory only") {
    Outbox box = make_box(nullptr, limits(64 << 10, 1 << 30, 1 << 30));
    while (!box.full()) add(box, chunk(1, 0, 200));
    CHECK(box.memory_bytes() >= (64u << 10));
    CHECK(box.memory_bytes() == box.bytes());   // nowhere else to keep them
    CHECK(box.gate().full());
    box.ack(box.last_id() - 1);
    CHECK_FALSE(box.gate().full());
  }
}

TEST_CASE("producer gate: the producer waits while the outbox is full or too much waits for the io thread") {
  ProducerGate gate;
  std::atomic<bool> cancel{false};
  CHECK(gate.wait_for_room(cancel) == 0.0);   // room: returns at once, having waited 0 s (paused_before_s)

  gate.set_full(true);
  std::atomic<bool> returned{false};
  std::thread producer([&] {
    gate.wait_for_room(cancel);
    returned = true;
  });
  CHECK_FALSE(returned.load());   // still waiting (it can only return once `full` clears)
  gate.set_full(false);
  producer.join();
  CHECK(returned.load());

  for (size_t i = 0; i <= ProducerGate::kMaxPosted; ++i) gate.posted();
  returned = false;
  std::thread second([&] {
    gate.wait_for_room(cancel);
    returned = true;
  });
  CHECK_FALSE(returned.load());
  gate.taken();   // back to kMaxPosted waiting: room
  second.join();
  CHECK(returned.load());

  // A cancelled run never waits.
  gate.set_full(true);
  cancel = true;
  gate.wait_for_room(cancel);
  CHECK(gate.posted_count() == ProducerGate::kMaxPosted);
}

TEST_CASE("outbox: messages the journal could not take (a full disk) are journaled before any later one") {
  testing::TempDir dir;
  {
    auto j = open_journal(dir);
    Outbox box = make_box(j, limits(1, 1 << 30, 1 << 30));   // journaled frames are not kept in memory
    add(box, chunk(4, 0, 10));
    add(box, chunk(4, 1, 10));
    CHECK(box.memory_bytes() == 0);
    const auto size_before = std::filesystem::file_size(dir.str() + "/journal.bin");
    {
      FullDisk disk(dir, 30);   // room for a record's head (26 bytes), not its frame: the write fails half done
      add(box, chunk(4, 2, 10));
      add(box, chunk(4, 3, 10));
    }
    CHECK(std::filesystem::file_size(dir.str() + "/journal.bin") == size_before);   // the half record cut back
    CHECK(box.size() == 4);
    CHECK(box.memory_bytes() > 0);   // not journaled: held in memory, to be sent all the same
    CHECK(box.full());               // and over the memory bound: the producer pauses
    const auto sent = send_all(box);
    REQUIRE(sent.size() == 4);
    CHECK(sent[3].id == 4);
    add(box, proto::RunFinished{4, "done", "", 1.0});   // the disk has room again: 3 and 4 go in first
    CHECK(box.size() == 5);
    CHECK(box.memory_bytes() == 0);   // all journaled now
    CHECK_FALSE(box.full());
  }   // the agent dies with nothing acknowledged
  auto j = open_journal(dir);
  Outbox box = make_box(j, limits(1 << 30, 1 << 30, 1 << 30));
  const auto sent = send_all(box);
  REQUIRE(sent.size() == 5);
  for (size_t i = 0; i < sent.size(); ++i) CHECK(sent[i].id == i + 1);
  CHECK(std::holds_alternative<proto::RunFinished>(sent.back().body));
  CHECK(std::get<proto::MinibatchChunk>(sent[2].body).epoch == 2);
}

TEST_CASE("outbox: the io thread never waits on the disk, and sends nothing the journal has not written") {
  testing::TempDir dir;
  auto j = open_journal(dir);
  Outbox box = make_box(j, limits(1 << 30, 1 << 30, 1 << 30));
  add(box, chunk(8, 0, 20));
  REQUIRE(send_all(box).size() == 1);
  {
    StalledDisk disk(box);
    for (int i = 1; i <= 20; ++i) box.add(chunk(8, i, 20));   // returns while the journal thread is stalled
    CHECK(box.size() == 21);
    CHECK(box.journal_jobs() == 20);
    // Nothing unwritten is sendable, and asking never waits.
    auto next = box.next_to_send();
    REQUIRE(next.is_ok());
    CHECK_FALSE(next->has_value());
    CHECK(box.heartbeat("running", 8).backlog_messages == 21);   // control messages still go
    box.ack(1);   // an ack is taken at once, journaled in order behind the appends
    CHECK(box.size() == 20);
  }
  settle(box);
  const auto sent = send_all(box);
  REQUIRE(sent.size() == 20);
  for (size_t i = 0; i < sent.size(); ++i) CHECK(sent[i].id == i + 2);
}

TEST_CASE("outbox: a frame being read back when its message is acked or the connection drops is not sent twice") {
  testing::TempDir dir;
  auto j = open_journal(dir);
  Outbox box = make_box(j, limits(1, 1 << 30, 1 << 30));   // every frame is read back
  for (int i = 0; i < 10; ++i) add(box, chunk(5, i, 20));
  {
    StalledDisk disk(box);
    auto next = box.next_to_send();   // queues the reads behind the stalled disk
    REQUIRE(next.is_ok());
    CHECK_FALSE(next->has_value());
    box.ack(4);               // the controller had 1..4 from the last connection
    box.restart_sending();    // and a new connection starts
  }
  const auto sent = send_all(box);
  REQUIRE(sent.size() == 6);
  for (size_t i = 0; i < sent.size(); ++i) CHECK(sent[i].id == i + 5);
  CHECK(box.memory_bytes() == 0);   // frames read back to be sent are not kept
}

TEST_CASE("outbox: appends still queued for the journal thread when the agent stops are written, not dropped") {
  testing::TempDir dir;
  {
    auto j = open_journal(dir);
    Outbox box = make_box(j, limits(1 << 30, 1 << 30, 1 << 30));
    StalledDisk disk(box);
    for (int i = 0; i < 30; ++i) box.add(chunk(6, i, 20));
    box.add(proto::RunFinished{6, "done", "", 1.0});
    CHECK(box.journal_jobs() == 31);
    disk.release();
  }   // destroyed with the appends queued (their completions never run)
  auto j = open_journal(dir);
  Outbox box = make_box(j, limits(1 << 30, 1 << 30, 1 << 30));
  const auto sent = send_all(box);
  REQUIRE(sent.size() == 31);
  CHECK(std::holds_alternative<proto::RunFinished>(sent.back().body));
}

TEST_CASE("outbox: a producer's result holds its place in the gate until the journal has written it") {
  testing::TempDir dir;
  auto j = open_journal(dir);
  Outbox box = make_box(j, limits(1 << 30, 1 << 30, 1 << 30));
  {
    StalledDisk disk(box);
    for (int i = 0; i < 3; ++i) {
      box.gate().posted();   // the training thread, before posting
      box.add(chunk(3, i, 20), true);
    }
    CHECK(box.gate().posted_count() == 3);   // taken in by the io thread, not yet written
  }
  settle(box);
  CHECK(box.gate().posted_count() == 0);
}

TEST_CASE("outbox: acks of messages still being written, or that the journal could not take, forget them everywhere") {
  testing::TempDir dir;
  {
    auto j = open_journal(dir);
    Outbox box = make_box(j, limits(1, 1 << 30, 1 << 30));
    add(box, chunk(4, 0, 10));
    add(box, chunk(4, 1, 10));
    {
      StalledDisk disk(box);
      box.add(chunk(4, 2, 10));
      box.ack(3);   // the controller has #3 before the journal wrote it (a resend of an earlier life, say)
      CHECK(box.size() == 0);
      CHECK(box.bytes() == 0);
      CHECK(box.memory_bytes() == 0);
    }
    settle(box);
    CHECK(box.memory_bytes() == 0);
    // The disk refuses #4 and #5; #4 is acked, then the disk has room again.
    {
      FullDisk disk(dir);
      add(box, chunk(4, 3, 10));
      add(box, chunk(4, 4, 10));
    }
    CHECK(box.memory_bytes() > 0);
    box.ack(4);
    add(box, proto::RunFinished{4, "done", "", 1.0});
    CHECK(box.size() == 2);
    CHECK(box.memory_bytes() == 0);
  }
  auto j = open_journal(dir);   // #4 was never written; #5 and #6 were, in order
  Outbox box = make_box(j, limits(1 << 30, 1 << 30, 1 << 30));
  const auto sent = send_all(box);
  REQUIRE(sent.size() == 2);
  CHECK(sent[0].id == 5);
  CHECK(std::get<proto::MinibatchChunk>(sent[0].body).epoch == 4);
  CHECK(sent[1].id == 6);
}

TEST_CASE("outbox: a seeded random life of adds, sends, acks, reconnects and disk stalls keeps every promise") {
  // The model: the controller receives frames on a connection and acks, cumulatively, what it has received.
  for (uint64_t seed = 1; seed <= 8; ++seed) {
    CAPTURE(seed);
    std::mt19937_64 rng(seed);
    testing::TempDir dir;
    auto j = open_journal(dir);
    const Outbox::Limits l = limits(6 << 10, 1 << 30, 8 << 10);   // a few frames in memory, a few in flight
    Outbox box = make_box(j, l);
    std::optional<StalledDisk> stall;
    uint64_t added = 0, acked = 0, received = 0;   // received: the highest id on this connection, in order
    uint64_t added_before_stall = 0;   // while the disk stalls, only these can have been written
    for (int step = 0; step < 600; ++step) {
      const int op = std::uniform_int_distribution<int>(0, 99)(rng);
      if (op < 35) {
        const size_t n = std::uniform_int_distribution<size_t>(5, 60)(rng);
        REQUIRE(box.add(chunk(1, static_cast<int64_t>(added + 1), n)) == added + 1);
        ++added;
      } else if (op < 70) {
        for (int k = std::uniform_int_distribution<int>(1, 6)(rng); k > 0; --k) {
          auto next = box.next_to_send();
          REQUIRE_MESSAGE(next.is_ok(), next.status().to_string());
          if (!next->has_value()) break;
          auto env = proto::decode(***next);
          REQUIRE(env.is_ok());
          CHECK(env->id == std::max(received, acked) + 1);   // in order, nothing skipped, nothing twice
          CHECK(std::get<proto::MinibatchChunk>(env->body).epoch == static_cast<int64_t>(env->id));
          if (stall) CHECK(env->id <= added_before_stall);   // nothing is sent before it is written
          received = env->id;
        }
      } else if (op < 82) {
        if (received > acked) {
          acked = std::uniform_int_distribution<uint64_t>(acked + 1, received)(rng);
          box.ack(acked);
        }
      } else if (op < 88) {
        box.restart_sending();   // a new connection: everything unacked again, from the oldest
        received = 0;
      } else if (op < 94) {
        if (stall) {
          stall.reset();
        } else {
          stall.emplace(box);
          added_before_stall = added;
        }
      } else {
        io().ioc.poll();   // whatever the journal thread has finished by now
      }
      CHECK(box.size() == added - acked);
    }
    stall.reset();
    settle(box);
    box.restart_sending();
    received = 0;
    while (acked < added) {   // the rest, a window at a time, each window acked
      const auto window = send_all(box);
      REQUIRE_FALSE(window.empty());
      for (size_t i = 0; i < window.size(); ++i) CHECK(window[i].id == acked + 1 + i);
      CHECK(box.memory_bytes() <= l.memory_bytes);   // frames read back to be sent are not kept
      acked = window.back().id;
      box.ack(acked);
    }
    settle(box);
    CHECK(box.empty());
    CHECK(box.bytes() == 0);
    CHECK(box.memory_bytes() == 0);
    CHECK(box.journal_disk_bytes() < (64u << 10));
  }
}
