#include "net/secret_file.hpp"

#include <sys/stat.h>

#include <fstream>
#include <sstream>

#include "common/log.hpp"

namespace jetsweep::net {

Result<std::string> read_secret_file(const std::string& flag, const std::string& path) {
  if (path.empty()) return invalid_argument(flag + ": must not be empty");
  std::ifstream in(path, std::ios::binary);
  struct stat st {};
  if (!in || ::stat(path.c_str(), &st) != 0) return io_error(flag + " " + path + ": cannot be read");
  if (!S_ISREG(st.st_mode)) return invalid_argument(flag + " " + path + ": not a regular file");
  std::ostringstream ss;
  ss << in.rdbuf();
  std::string secret = ss.str();
  if (!secret.empty() && secret.back() == '\n') secret.pop_back();
  if (!secret.empty() && secret.back() == '\r') secret.pop_back();
  if (secret.empty()) return invalid_argument(flag + " " + path + ": the file is empty");
  if (secret.find_first_of("\r\n") != std::string::npos)
    return invalid_argument(flag + " " + path + ": the secret must be one line");
  if ((st.st_mode & (S_IRGRP | S_IROTH)) != 0)
    JS_LOG_WARN << flag << " " << path << " is readable by " << ((st.st_mode & S_IROTH) ? "every user" : "its group")
                << "; chmod 600 it";
  return secret;
}

Result<std::string> resolve_secret(const std::string& flag, const std::string& direct, bool direct_given,
                                   const std::string& file_flag, const std::string& file, bool file_given) {
  if (direct_given && file_given) return invalid_argument(flag + " and " + file_flag + " exclude each other; give one");
  if (file_given) return read_secret_file(file_flag, file);
  return direct;
}

}  // namespace jetsweep::net
