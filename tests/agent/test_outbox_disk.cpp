// The agent's outbox when its disk fails (issue 29): a record damaged on disk, a read that fails, a full disk, a disk
// that stalls. Nothing is sent before it is written, nothing lost that the disk still holds, nothing sent twice.
#include <doctest/doctest.h>

#include <fcntl.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <functional>
#include <future>
#include <optional>

#include "outbox_support.hpp"

using namespace outbox_test;

namespace {

// Overwrites bytes inside the journal record of message `index` (in unacked order).
void damage(const testing::TempDir& dir, const Journal& j, size_t index) {
  std::fstream f((dir / "journal.bin").string(), std::ios::in | std::ios::out | std::ios::binary);
  f.seekp(static_cast<std::streamoff>(j.unacked()[index].offset + 30));
  f.write("damaged", 7);
}

}  // namespace

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

namespace {

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

}  // namespace

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
