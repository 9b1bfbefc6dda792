// Helpers of the outbox tests (test_outbox.cpp, test_outbox_disk.cpp): messages, a journal, an outbox on the tests'
// own io thread, and disks that stall or are full. Test code: the test's thread only.
#pragma once

#include <doctest/doctest.h>

#include <sys/resource.h>

#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <chrono>
#include <csignal>
#include <filesystem>
#include <future>
#include <memory>
#include <vector>

#include "agent/outbox.hpp"
#include "support/temp_dir.hpp"

namespace outbox_test {
using namespace jetsweep;
using agent::Journal;
using agent::Outbox;
using agent::ProducerGate;

// A minibatch chunk whose frame is about n * 40 bytes.
inline proto::Body chunk(int64_t run, int64_t epoch, size_t n) {
  return proto::MinibatchChunk{run, epoch, 0, std::vector<double>(n, 0.0123456789), std::vector<double>(n, 0.0234567891), {}};
}

inline std::shared_ptr<Journal> open_journal(const testing::TempDir& dir) {
  auto j = Journal::open(dir.str(), "box-1");
  REQUIRE_MESSAGE(j.is_ok(), j.status().to_string());
  return std::shared_ptr<Journal>(std::move(j).value());
}

inline Outbox::Limits limits(uint64_t memory, uint64_t journal, uint64_t window) {
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

inline Io& io() {
  static Io instance;
  return instance;
}

inline Outbox make_box(std::shared_ptr<Journal> j, Outbox::Limits l) { return Outbox(std::move(j), l, io().ioc.get_executor(), "box-1"); }

// Runs the journal thread's completions until none is outstanding (a condition, with a generous deadline).
inline void settle(Outbox& box) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (box.journal_jobs() > 0) {
    REQUIRE(std::chrono::steady_clock::now() < deadline);
    io().ioc.run_one_for(std::chrono::milliseconds(100));
  }
}

// Adds a message and waits until the journal thread has written it.
inline uint64_t add(Outbox& box, proto::Body body) {
  const uint64_t id = box.add(std::move(body));
  settle(box);
  return id;
}

// Everything the outbox sends now (until its window closes), as decoded envelopes; waits for reads from disk.
inline std::vector<proto::Envelope> send_all(Outbox& box) {
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

}  // namespace outbox_test
