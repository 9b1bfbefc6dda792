// IoThreadChecker: the debug check of the controller's threading rule (README.md, "Threading"): one I/O
// thread runs every Controller, Server and AgentSession handler; database work runs on DbWorker threads and
// posts its completion back to the io_context. One checker per io_context (an Asio service): it binds to
// the first thread that passes a check and aborts, naming the place, when another thread passes one.
// Active in builds without NDEBUG, and wherever IoThreadChecker::set_enabled(true) was called (the unit
// tests do); otherwise a check costs one relaxed atomic load. Any thread may call it.
#pragma once

#include <atomic>
#include <boost/asio/execution.hpp>
#include <boost/asio/execution_context.hpp>
#include <boost/asio/io_context.hpp>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <thread>

namespace jetsweep::controller {

class IoThreadChecker : public boost::asio::execution_context::service {
 public:
  static inline boost::asio::execution_context::id id;

  explicit IoThreadChecker(boost::asio::execution_context& context)
      : boost::asio::execution_context::service(context) {}

  static void set_enabled(bool enabled) { enabled_flag().store(enabled, std::memory_order_relaxed); }
  static bool enabled() { return enabled_flag().load(std::memory_order_relaxed); }
  // What a broken rule does: by default print the place and abort; a test may record it instead.
  using FailureHandler = void (*)(const char* where);
  static void set_failure_handler(FailureHandler handler) { failure_handler() = handler ? handler : &abort_with; }

  // Binds to the calling thread on the first call; afterwards aborts when called from any other thread.
  void check(const char* where) {
    const std::thread::id me = std::this_thread::get_id();
    std::lock_guard lock(mu_);
    if (owner_ == std::thread::id()) owner_ = me;
    if (owner_ == me) return;
    failure_handler().load()(where);
  }

 private:
  void shutdown() override {}
  static void abort_with(const char* where) {
    std::fprintf(stderr, "jetsweep-controller: threading rule broken: %s ran off the io thread (README.md, Threading)\n",
                 where);
    std::abort();
  }
  static std::atomic<FailureHandler>& failure_handler() {
    static std::atomic<FailureHandler> handler{&abort_with};
    return handler;
  }
  static std::atomic<bool>& enabled_flag() {
#ifdef NDEBUG
    static std::atomic<bool> flag{false};
#else
    static std::atomic<bool> flag{true};
#endif
    return flag;
  }

  std::mutex mu_;
  std::thread::id owner_;
};

// Checks that the caller runs on the io thread of `context` (see IoThreadChecker).
inline void check_io_thread(boost::asio::execution_context& context, const char* where) {
  if (IoThreadChecker::enabled()) boost::asio::use_service<IoThreadChecker>(context).check(where);
}

template <class Executor>
inline void check_io_thread_of(const Executor& ex, const char* where) {
  if (IoThreadChecker::enabled())
    check_io_thread(boost::asio::query(ex, boost::asio::execution::context_as<boost::asio::execution_context&>), where);
}

}  // namespace jetsweep::controller

// JS_CHECK_IO_THREAD(context): at the top of io-thread entry points; names the function in its message.
#define JS_CHECK_IO_THREAD(context) ::jetsweep::controller::check_io_thread((context), __func__)
#define JS_CHECK_IO_THREAD_OF(executor) ::jetsweep::controller::check_io_thread_of((executor), __func__)
