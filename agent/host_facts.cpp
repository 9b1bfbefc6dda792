#include "agent/host_facts.hpp"

#include <sys/utsname.h>
#include <unistd.h>

#include <fstream>
#include <sstream>
#include <thread>

#include "agent/trainer.hpp"

#ifndef JETSWEEP_GIT_SHA
#define JETSWEEP_GIT_SHA "unknown"
#endif

namespace jetsweep::agent {

std::string read_boot_id(const std::string& root) {
  std::ifstream in((root == "/" ? std::string() : root) + "/proc/sys/kernel/random/boot_id");
  std::string id;
  if (!(in >> id)) return "";
  return proto::is_boot_id(id) ? id : "";
}

proto::DeviceFacts collect_host_facts(const std::string& root, const std::string& backend,
                                      const std::string& device_class) {
  proto::DeviceFacts f;
  char host[256] = {};
  if (gethostname(host, sizeof host - 1) == 0) f.hostname = host;
  f.cpus = static_cast<int64_t>(std::thread::hardware_concurrency());
  std::ifstream meminfo((root == "/" ? std::string() : root) + "/proc/meminfo");
  std::string key;
  int64_t kb = 0;
  while (meminfo >> key >> kb) {
    std::string unit;
    std::getline(meminfo, unit);
    if (key == "MemTotal:") {
      f.mem_bytes = kb * 1024;
      break;
    }
  }
  struct utsname u {};
  if (uname(&u) == 0) f.kernel = std::string(u.sysname) + " " + u.release + " " + u.machine;
  f.backend = backend;
  f.device_class = device_class;
  f.torch_version = torch_version();
  f.compiler = std::string("g++ ") + __VERSION__;
  f.git_sha = JETSWEEP_GIT_SHA;
  return f;
}

}  // namespace jetsweep::agent
