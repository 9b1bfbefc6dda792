// Storage media an agent offers (`--storage NAME=DIR`, e.g. sd=/media/sd/datasets, ssd=/mnt/ssd) and the
// resolution of a run's `data` value against them: "@NAME" = DIR/<dataset>, "@NAME/REL" = DIR/REL; any
// other value is a plain path (empty = the dataset's default path). Value type; any thread.
#pragma once

#include <map>
#include <string>

#include "common/status.hpp"

namespace jetsweep::agent::storage {

struct ResolvedData {
  std::string path;
  std::string medium;  // empty when `data` named no medium
};

class StorageMap {
 public:
  // Parses one NAME=DIR; names are [a-z0-9_-]+, DIR must be absolute.
  Status add(const std::string& spec);
  Result<ResolvedData> resolve(const std::string& data, const std::string& dataset, const std::string& default_path) const;
  const std::map<std::string, std::string>& media() const { return media_; }
  bool empty() const { return media_.empty(); }

 private:
  std::map<std::string, std::string> media_;
};

}  // namespace jetsweep::agent::storage
