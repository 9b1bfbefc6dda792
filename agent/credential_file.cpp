#include "agent/credential_file.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

#include "common/log.hpp"
#include "common/protocol.hpp"
#include "common/text.hpp"

namespace jetsweep::agent {
namespace {

Status errno_error(const std::string& what, const std::string& path) {
  return io_error(path + ": " + what + ": " + std::strerror(errno));
}

Status write_all(int fd, const std::string& data, const std::string& path) {
  size_t done = 0;
  while (done < data.size()) {
    const ssize_t n = ::write(fd, data.data() + done, data.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return errno_error("write", path);
    done += static_cast<size_t>(n);
  }
  return Status::ok();
}

std::string parent_dir(const std::string& path) {
  const size_t slash = path.rfind('/');
  if (slash == std::string::npos) return ".";
  return slash == 0 ? "/" : path.substr(0, slash);
}

}  // namespace

Result<std::optional<std::string>> load_credential(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) {
    if (errno == ENOENT) return std::optional<std::string>();
    return errno_error("cannot read the agent credential", path);
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) return errno_error("cannot open the agent credential", path);
  std::ostringstream text;
  text << in.rdbuf();
  const std::string credential = trim(text.str());
  if (!proto::is_credential_text(credential))
    return invalid_argument(path + ": does not hold an agent credential (" + std::to_string(proto::kCredentialChars) +
                            " hexadecimal digits); remove it and have an operator run `jetsweep agents revoke NAME` "
                            "so that this agent enrolls again");
  return std::optional<std::string>(credential);
}

Status save_credential(const std::string& path, const std::string& credential) {
  return write_file_durably(path, credential + "\n");
}

Status write_file_durably(const std::string& path, const std::string& text) {
  const std::string tmp = path + ".tmp";
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  if (fd < 0) return errno_error("cannot create", tmp);
  Status s = write_all(fd, text, tmp);
  if (s.is_ok() && ::fsync(fd) != 0) s = errno_error("fsync", tmp);
  ::close(fd);
  if (s.is_ok() && ::rename(tmp.c_str(), path.c_str()) != 0) s = errno_error("cannot rename over " + path, tmp);
  if (!s.is_ok()) {
    ::unlink(tmp.c_str());
    return s;
  }
  const int dir = ::open(parent_dir(path).c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dir >= 0) {
    ::fsync(dir);
    ::close(dir);
  }
  return Status::ok();
}

void keep_enrolled_credential(const std::string& path, const std::string& credential, const std::string& agent_name) {
  if (path.empty()) {
    JS_LOG_WARN << "agent " << agent_name << ": enrolled; the credential is kept in memory only (no journal "
                << "directory), so after a restart this name must be revoked (jetsweep agents revoke " << agent_name
                << ") before it can register again";
    return;
  }
  Status s = save_credential(path, credential);
  if (s.is_ok())
    JS_LOG_INFO << "agent " << agent_name << ": enrolled; credential kept in " << path;
  else
    JS_LOG_ERROR << "agent " << agent_name << ": enrolled, but the credential could not be kept: " << s.to_string()
                 << "; after a restart this name must be revoked (jetsweep agents revoke " << agent_name << ")";
}

}  // namespace jetsweep::agent
