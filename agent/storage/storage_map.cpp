#include "agent/storage/storage_map.hpp"

#include <cctype>

namespace jetsweep::agent::storage {

Status StorageMap::add(const std::string& spec) {
  const auto eq = spec.find('=');
  if (eq == std::string::npos || eq == 0 || eq + 1 == spec.size())
    return invalid_argument("--storage '" + spec + "': expected NAME=DIR (e.g. ssd=/mnt/ssd/datasets)");
  const std::string name = spec.substr(0, eq);
  std::string dir = spec.substr(eq + 1);
  for (char c : name)
    if (!(std::islower(static_cast<unsigned char>(c)) || std::isdigit(static_cast<unsigned char>(c)) || c == '_' || c == '-'))
      return invalid_argument("--storage '" + spec + "': medium name '" + name + "' must be lower-case letters, digits, _ or -");
  if (dir.front() != '/') return invalid_argument("--storage '" + spec + "': DIR must be an absolute path");
  while (dir.size() > 1 && dir.back() == '/') dir.pop_back();
  if (media_.count(name)) return invalid_argument("--storage '" + spec + "': medium '" + name + "' given twice");
  media_[name] = dir;
  return Status::ok();
}

Result<ResolvedData> StorageMap::resolve(const std::string& data, const std::string& dataset,
                                         const std::string& default_path) const {
  if (data.empty()) return ResolvedData{default_path, ""};
  if (data.front() != '@') return ResolvedData{data, ""};
  const auto slash = data.find('/');
  const std::string name = data.substr(1, slash == std::string::npos ? std::string::npos : slash - 1);
  auto it = media_.find(name);
  if (it == media_.end()) {
    std::string known;
    for (const auto& [n, d] : media_) known += (known.empty() ? "" : ", ") + n + "=" + d;
    return invalid_argument("data '" + data + "': this agent has no storage medium '" + name + "' (" +
                            (known.empty() ? std::string("no --storage given") : "known: " + known) + ")");
  }
  const std::string rel = slash == std::string::npos ? dataset : data.substr(slash + 1);
  return ResolvedData{it->second + "/" + rel, name};
}

}  // namespace jetsweep::agent::storage
