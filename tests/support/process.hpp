// Child processes for integration tests: spawn with output to a log file, signal, wait with a timeout.
// Plus wait_until(), the polling wait on a condition used instead of sleeps. Single-threaded use.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <functional>
#include <string>
#include <vector>

namespace jetsweep::testing {

class Process {
 public:
  Process(std::string exe, std::vector<std::string> args, std::string log_path);
  ~Process();  // SIGKILLs a child still running
  Process(const Process&) = delete;
  Process& operator=(const Process&) = delete;

  pid_t pid() const { return pid_; }
  bool running();
  void signal(int sig);
  // Waits for exit; returns the exit status (128+signal when killed) or -1 on timeout.
  int wait(std::chrono::milliseconds timeout);
  std::string log() const;
  const std::string& log_path() const { return log_path_; }

 private:
  pid_t pid_ = -1;
  int status_ = -1;
  std::string log_path_;
};

// Polls `pred` every 50 ms until it holds or `timeout` passes; returns whether it held.
bool wait_until(std::chrono::milliseconds timeout, const std::function<bool()>& pred);

// Runs a command to completion, capturing stdout; returns its exit status.
int run_command(const std::string& exe, const std::vector<std::string>& args, std::string* out, std::string* err = nullptr);

}  // namespace jetsweep::testing
