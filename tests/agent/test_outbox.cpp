// The agent's outbox in bounded memory (issue 29): frames beyond the memory bound are read back from the journal,
// sending is windowed, the producer gate pauses a run while the outbox is full; and the journal's streaming
// read-back that this rests on. Under disk faults: test_outbox_disk.cpp.
#include <doctest/doctest.h>

#include <atomic>
#include <chrono>
#include <fstream>
#include <optional>
#include <random>
#include <thread>

#include "outbox_support.hpp"

using namespace outbox_test;

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
