// Running a child process with a time limit, its output captured: no shell, stdin from /dev/null or a short text,
// SIGPIPE and the signal mask reset in the child. Used by the agent (systemctl, the reboot command) and the CLI (the
// model-file check in a helper process). Pure functions; any thread.
#pragma once

#include <string>
#include <variant>
#include <vector>

#include "common/status.hpp"

namespace jetsweep {

// What one finished child process left: its exit code (128 + N when killed by signal N), stdout, stderr.
struct ProcessResult {
  int exit_code = 0;
  bool signaled = false;
  std::string out;
  std::string err;
};

// Runs argv[0] (looked up in PATH when it has no '/') with argv, no shell, stdin from /dev/null (or reading
// `stdin_text`, at most 4 KiB, when given), capturing stdout and stderr (the first 64 KiB of each).
// kUnavailable, naming the command line, when it cannot be started or runs longer than timeout_s (it is then
// killed). Any thread.
Result<ProcessResult> run_process(const std::vector<std::string>& argv, double timeout_s,
                                  const std::string& stdin_text = {});

// The file `name` runs as (execvp's search: a name with a slash as is, else each PATH directory, an empty entry
// being the working directory), or the errno why none can run (ENOENT: none found). Any thread.
std::variant<std::string, int> resolve_executable(const std::string& name);

// argv joined with spaces, for messages: "systemctl stop nvfancontrol".
std::string command_line(const std::vector<std::string>& argv);

}  // namespace jetsweep
