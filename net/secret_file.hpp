// Secrets (API token, enrollment secret) read from a file instead of the command line, where every local user
// can read them in /proc/PID/cmdline. Pure apart from a warning logged for a file others can read; any thread.
#pragma once

#include <string>

#include "common/status.hpp"

namespace jetsweep::net {

// The content of `path` without its trailing newline (CR LF or LF). Errors name `flag` and the file: unreadable,
// empty, or more than one line. Logs a warning when the file is readable by its group or by others.
Result<std::string> read_secret_file(const std::string& flag, const std::string& path);

// Resolves a secret given as `flag` (value `direct`, `direct_given` when the flag was on the command line) and/or
// `file_flag` (path `file`, `file_given` likewise): both is an error; the file's content when a file is given;
// else `direct`.
Result<std::string> resolve_secret(const std::string& flag, const std::string& direct, bool direct_given,
                                   const std::string& file_flag, const std::string& file, bool file_given);

}  // namespace jetsweep::net
