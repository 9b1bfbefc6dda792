// Running a child process with a time limit, its output captured (issue 4's systemctl, the agent's reboot command,
// the CLI's model-file check). Pure functions over the process table; any thread.
#include "common/process.hpp"

#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <sstream>
#include <string>
#include <variant>

extern char** environ;

namespace jetsweep {

namespace {

constexpr size_t kMaxCapture = 64 * 1024;

void close_fd(int& fd) {
  if (fd >= 0) ::close(fd);
  fd = -1;
}

// waitpid without EINTR; the raw status, or -1 when it fails.
int wait_child(pid_t pid) {
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0) {
    if (errno != EINTR) return -1;
  }
  return status;
}

// Starts `program` with argv, stdin from `stdin_fd` (-1: /dev/null), stdout and stderr to the given fds, no
// blocked signals and SIGPIPE at its default, whatever this process set. Returns posix_spawn's error (0: started).
int spawn_child(const std::string& program, const std::vector<std::string>& argv, int stdin_fd, int out_fd, int err_fd,
                pid_t& pid) {
  posix_spawn_file_actions_t actions;
  ::posix_spawn_file_actions_init(&actions);
  if (stdin_fd < 0) ::posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
  else ::posix_spawn_file_actions_adddup2(&actions, stdin_fd, 0);
  ::posix_spawn_file_actions_adddup2(&actions, out_fd, 1);
  ::posix_spawn_file_actions_adddup2(&actions, err_fd, 2);
  posix_spawnattr_t attr;
  ::posix_spawnattr_init(&attr);
  sigset_t none, defaults;
  sigemptyset(&none);
  sigemptyset(&defaults);
  sigaddset(&defaults, SIGPIPE);
  ::posix_spawnattr_setsigmask(&attr, &none);
  ::posix_spawnattr_setsigdefault(&attr, &defaults);
  ::posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
  std::vector<char*> args;
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  const int spawned = ::posix_spawn(&pid, program.c_str(), &actions, &attr, args.data(), environ);
  ::posix_spawn_file_actions_destroy(&actions);
  ::posix_spawnattr_destroy(&attr);
  return spawned;
}

// Writes a child's whole standard input (it fits the pipe's buffer). A child that exits without reading makes the
// write fail with EPIPE: SIGPIPE is blocked for the write (and a pending one taken) so it cannot kill the agent;
// what the child did is judged from its exit code.
void feed_stdin(int fd, const std::string& text) {
  sigset_t pipe_signal, previous;
  sigemptyset(&pipe_signal);
  sigaddset(&pipe_signal, SIGPIPE);
  ::pthread_sigmask(SIG_BLOCK, &pipe_signal, &previous);
  if (::write(fd, text.data(), text.size()) < 0 && errno == EPIPE) {
    const struct timespec no_wait = {0, 0};
    ::sigtimedwait(&pipe_signal, nullptr, &no_wait);
  }
  ::pthread_sigmask(SIG_SETMASK, &previous, nullptr);
}

}  // namespace

// Resolved here rather than left to posix_spawnp: where the exec failure is only
// seen in the child (qemu user mode, some libcs) a missing program would look like a program exiting 127.
std::variant<std::string, int> resolve_executable(const std::string& name) {
  auto runnable = [](const std::string& path) {
    struct stat st {};
    if (::stat(path.c_str(), &st) != 0) return errno;
    if (!S_ISREG(st.st_mode)) return EACCES;
    return ::access(path.c_str(), X_OK) == 0 ? 0 : errno;
  };
  if (name.find('/') != std::string::npos) {
    const int err = runnable(name);
    if (err == 0) return name;
    return err;
  }
  const char* env = std::getenv("PATH");
  const std::string path = env && *env ? env : "/usr/local/bin:/usr/bin:/bin";
  int first_error = ENOENT;
  size_t start = 0;
  while (start <= path.size()) {
    const size_t end = std::min(path.find(':', start), path.size());
    const std::string dir = end > start ? path.substr(start, end - start) : ".";
    const std::string candidate = dir + "/" + name;
    const int err = runnable(candidate);
    if (err == 0) return candidate;
    if (err != ENOENT && err != ENOTDIR && first_error == ENOENT) first_error = err;
    start = end + 1;
  }
  return first_error;
}


std::string command_line(const std::vector<std::string>& argv) {
  std::string out;
  for (size_t i = 0; i < argv.size(); ++i) out += (i ? " " : "") + argv[i];
  return out;
}

Result<ProcessResult> run_process(const std::vector<std::string>& argv, double timeout_s, const std::string& stdin_text) {
  if (argv.empty() || argv[0].empty()) return invalid_argument("run_process: no command");
  if (stdin_text.size() > 4096) return invalid_argument("run_process: more than 4 KiB for the standard input");
  const std::string cmd = command_line(argv);
  const auto program = resolve_executable(argv[0]);
  if (const int* err = std::get_if<int>(&program)) return unavailable("cannot run '" + cmd + "': " + std::strerror(*err));
  int out_pipe[2] = {-1, -1}, err_pipe[2] = {-1, -1};
  if (::pipe2(out_pipe, O_CLOEXEC) != 0) return unavailable("cannot run '" + cmd + "': pipe: " + std::strerror(errno));
  if (::pipe2(err_pipe, O_CLOEXEC) != 0) {
    const int err = errno;
    close_fd(out_pipe[0]);
    close_fd(out_pipe[1]);
    return unavailable("cannot run '" + cmd + "': pipe: " + std::strerror(err));
  }

  // The standard input: /dev/null, or a pipe holding stdin_text, closed after it: the child sees its end.
  int in_pipe[2] = {-1, -1};
  if (!stdin_text.empty() && ::pipe2(in_pipe, O_CLOEXEC) != 0) {
    const int err = errno;
    for (int fd : {out_pipe[0], out_pipe[1], err_pipe[0], err_pipe[1]}) close_fd(fd);
    return unavailable("cannot run '" + cmd + "': pipe: " + std::strerror(err));
  }
  pid_t pid = -1;
  const int spawned = spawn_child(std::get<std::string>(program), argv, stdin_text.empty() ? -1 : in_pipe[0],
                                  out_pipe[1], err_pipe[1], pid);
  close_fd(out_pipe[1]);
  close_fd(err_pipe[1]);
  if (!stdin_text.empty()) {
    close_fd(in_pipe[0]);
    if (spawned == 0) feed_stdin(in_pipe[1], stdin_text);
    close_fd(in_pipe[1]);
  }
  if (spawned != 0) {
    close_fd(out_pipe[0]);
    close_fd(err_pipe[0]);
    return unavailable("cannot run '" + cmd + "': " + std::strerror(spawned));
  }

  ProcessResult result;
  std::string* sinks[2] = {&result.out, &result.err};
  struct pollfd fds[2] = {{out_pipe[0], POLLIN, 0}, {err_pipe[0], POLLIN, 0}};
  int open_fds = 2;
  std::string failure;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(std::max(0.0, timeout_s));
  while (open_fds > 0) {
    const auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now()).count();
    if (left <= 0) {
      std::ostringstream limit;
      limit << timeout_s;
      failure = "did not finish within " + limit.str() + " s and was killed";
      break;
    }
    const int ready = ::poll(fds, 2, static_cast<int>(std::min<long long>(left, INT_MAX)));
    if (ready < 0) {
      if (errno == EINTR) continue;
      failure = std::string("poll failed: ") + std::strerror(errno);
      break;
    }
    for (int i = 0; i < 2; ++i) {
      if (fds[i].fd < 0 || fds[i].revents == 0) continue;
      char buf[4096];
      const ssize_t got = ::read(fds[i].fd, buf, sizeof buf);
      if (got > 0) {
        std::string& sink = *sinks[i];
        sink.append(buf, static_cast<size_t>(std::min(static_cast<size_t>(got), kMaxCapture - std::min(kMaxCapture, sink.size()))));
      } else if (got == 0 || (errno != EINTR && errno != EAGAIN)) {
        close_fd(fds[i].fd);
        --open_fds;
      }
    }
  }
  close_fd(fds[0].fd);
  close_fd(fds[1].fd);
  if (!failure.empty()) {
    ::kill(pid, SIGKILL);
    wait_child(pid);
    return unavailable("'" + cmd + "' " + failure);
  }
  const int status = wait_child(pid);
  if (status < 0) return unavailable("'" + cmd + "': waitpid failed: " + std::strerror(errno));
  if (WIFEXITED(status)) {
    result.exit_code = WEXITSTATUS(status);
  } else if (WIFSIGNALED(status)) {
    result.signaled = true;
    result.exit_code = 128 + WTERMSIG(status);
  } else {
    return internal_error("'" + cmd + "': unexpected wait status " + std::to_string(status));
  }
  return result;
}

}  // namespace jetsweep
