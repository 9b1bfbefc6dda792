// Draining an io_context from a test: the test's thread is the io thread, and it runs handlers until the
// condition it waits for holds. Handlers posted from other threads (DbWorker completions) are waited for,
// not slept for; the timeout only bounds a test that would otherwise hang. Single-threaded use.
#pragma once

#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <chrono>
#include <functional>

namespace jetsweep::testing {

// Runs handlers of `ioc` on the calling thread until `done()` holds; false when `timeout` passed first.
inline bool drain_until(boost::asio::io_context& ioc, const std::function<bool()>& done,
                        std::chrono::milliseconds timeout = std::chrono::seconds(20)) {
  auto guard = boost::asio::make_work_guard(ioc);   // run_one_for waits for posted work instead of returning
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (!done()) {
    const auto now = std::chrono::steady_clock::now();
    if (now >= deadline) return false;
    if (ioc.stopped()) ioc.restart();
    ioc.run_one_for(std::min<std::chrono::steady_clock::duration>(deadline - now, std::chrono::milliseconds(50)));
  }
  return true;
}

// Runs every handler that is ready now, and those they make ready, for at most `max_rounds` rounds of
// poll(); returns how many handlers ran. Work that other threads have yet to post is not waited for.
inline size_t drain_ready(boost::asio::io_context& ioc, int max_rounds = 1000) {
  size_t total = 0;
  for (int round = 0; round < max_rounds; ++round) {
    if (ioc.stopped()) ioc.restart();
    const size_t ran = ioc.poll();
    if (ran == 0) break;
    total += ran;
  }
  return total;
}

}  // namespace jetsweep::testing
