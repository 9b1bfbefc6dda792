#include "support/process.hpp"

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fstream>
#include <sstream>
#include <stdexcept>
#include <thread>

namespace jetsweep::testing {

namespace {
std::vector<char*> argv_of(const std::string& exe, std::vector<std::string>& args) {
  std::vector<char*> argv;
  argv.push_back(const_cast<char*>(exe.c_str()));
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  return argv;
}
}  // namespace

Process::Process(std::string exe, std::vector<std::string> args, std::string log_path) : log_path_(std::move(log_path)) {
  auto argv = argv_of(exe, args);
  pid_ = fork();
  if (pid_ < 0) throw std::runtime_error("fork failed");
  if (pid_ == 0) {
    int fd = open(log_path_.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
    if (fd >= 0) {
      dup2(fd, STDOUT_FILENO);
      dup2(fd, STDERR_FILENO);
      close(fd);
    }
    execv(exe.c_str(), argv.data());
    _exit(127);
  }
}

Process::~Process() {
  if (running()) {
    kill(pid_, SIGKILL);
    wait(std::chrono::seconds(10));
  }
}

bool Process::running() {
  if (pid_ <= 0 || status_ != -1) return false;
  int st = 0;
  pid_t r = waitpid(pid_, &st, WNOHANG);
  if (r == pid_) {
    status_ = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
    return false;
  }
  return true;
}

void Process::signal(int sig) {
  if (running()) kill(pid_, sig);
}

int Process::wait(std::chrono::milliseconds timeout) {
  wait_until(timeout, [&] { return !running(); });
  return status_;
}

std::string Process::log() const {
  std::ifstream in(log_path_);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

bool wait_until(std::chrono::milliseconds timeout, const std::function<bool()>& pred) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (true) {
    if (pred()) return true;
    if (std::chrono::steady_clock::now() >= deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
}

int run_command(const std::string& exe, const std::vector<std::string>& args_in, std::string* out, std::string* err) {
  std::vector<std::string> args = args_in;
  auto argv = argv_of(exe, args);
  int out_pipe[2], err_pipe[2];
  // Close-on-exec: only the dup2'd stdout/stderr reach the child, so a daemon it starts (pg_ctl's server)
  // cannot hold the pipes open and block the reads below.
  if (pipe2(out_pipe, O_CLOEXEC) != 0 || pipe2(err_pipe, O_CLOEXEC) != 0) return -1;
  pid_t pid = fork();
  if (pid == 0) {
    dup2(out_pipe[1], STDOUT_FILENO);
    dup2(err_pipe[1], STDERR_FILENO);
    close(out_pipe[0]);
    close(err_pipe[0]);
    execv(exe.c_str(), argv.data());
    _exit(127);
  }
  close(out_pipe[1]);
  close(err_pipe[1]);
  std::string o, e;
  char buf[4096];
  // Outputs here are small; read stdout fully, then stderr.
  for (ssize_t n; (n = read(out_pipe[0], buf, sizeof buf)) > 0;) o.append(buf, static_cast<size_t>(n));
  for (ssize_t n; (n = read(err_pipe[0], buf, sizeof buf)) > 0;) e.append(buf, static_cast<size_t>(n));
  close(out_pipe[0]);
  close(err_pipe[0]);
  int st = 0;
  waitpid(pid, &st, 0);
  if (out) *out = o;
  if (err) *err = e;
  return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

}  // namespace jetsweep::testing
