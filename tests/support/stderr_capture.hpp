// StderrCapture: while it lives, what this process writes to stderr (file descriptor 2: every log line) goes to a
// temporary file instead; text() reads what was captured so far. Lets a test check what was logged, and how much.
// Test thread only; one at a time.
#pragma once

#include <fcntl.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <string>

namespace jetsweep::testing {

class StderrCapture {
 public:
  StderrCapture() {
    char name[] = "/tmp/jetsweep-stderr-XXXXXX";
    const int fd = ::mkstemp(name);
    if (fd < 0) throw std::runtime_error("StderrCapture: mkstemp failed");
    path_ = name;
    saved_ = ::dup(STDERR_FILENO);
    ::dup2(fd, STDERR_FILENO);
    ::close(fd);
  }
  ~StderrCapture() {
    ::dup2(saved_, STDERR_FILENO);
    ::close(saved_);
    ::unlink(path_.c_str());
  }
  StderrCapture(const StderrCapture&) = delete;
  StderrCapture& operator=(const StderrCapture&) = delete;

  std::string text() const {
    std::ifstream in(path_, std::ios::binary);
    std::ostringstream s;
    s << in.rdbuf();
    return s.str();
  }
  // Lines of the capture that contain `needle`.
  size_t lines_with(const std::string& needle) const {
    std::istringstream in(text());
    size_t n = 0;
    for (std::string line; std::getline(in, line);)
      if (line.find(needle) != std::string::npos) ++n;
    return n;
  }

 private:
  std::string path_;
  int saved_ = -1;
};

}  // namespace jetsweep::testing
