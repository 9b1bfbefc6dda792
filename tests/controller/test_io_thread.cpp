// The threading rule's check (controller/io_thread.hpp): bound per io_context to the first thread that
// passes a check, it reports any other thread.
#include <doctest/doctest.h>

#include <atomic>
#include <thread>

#include "controller/io_thread.hpp"

using jetsweep::controller::check_io_thread;
using jetsweep::controller::IoThreadChecker;

namespace {
std::atomic<int> broken{0};
void record(const char*) { ++broken; }
}  // namespace

TEST_CASE("the io thread check binds to the first thread and reports any other") {
  REQUIRE(IoThreadChecker::enabled());   // tests/controller/main.cpp turns it on
  IoThreadChecker::set_failure_handler(&record);
  broken = 0;
  boost::asio::io_context ioc;
  boost::asio::io_context other_ioc;
  check_io_thread(ioc, "test");
  check_io_thread(ioc, "test");
  CHECK(broken == 0);
  std::thread([&] {
    check_io_thread(ioc, "off-thread");          // a second thread on the same io_context: broken
    check_io_thread(other_ioc, "other context");  // binds the other io_context to this thread: fine
  }).join();
  CHECK(broken == 1);
  check_io_thread(other_ioc, "back on the first thread");
  CHECK(broken == 2);
  IoThreadChecker::set_failure_handler(nullptr);   // back to aborting
}
