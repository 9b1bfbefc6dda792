// The controller's unit tests run with the threading rule's check on (controller/io_thread.hpp), whatever
// the build type.
#define DOCTEST_CONFIG_IMPLEMENT
#include <doctest/doctest.h>

#include "controller/io_thread.hpp"

int main(int argc, char** argv) {
  jetsweep::controller::IoThreadChecker::set_enabled(true);
  doctest::Context context(argc, argv);
  return context.run();
}
