// The model files a campaign names as `model: torchscript:FILE` (FILE a path, relative to the campaign file's
// directory; docs/WORKLOADS.md "Your own model"): each hashed and named in the campaign's text as
// torchscript:<sha256> in place (only that token changes: FILE:LINE:COL of every error still points at the file),
// checked by the agent's LibTorch in a helper process (cli/model_check.hpp), then uploaded to the controller once,
// in proto::kModelChunkBytes chunks (skipped when it has the file). Calling thread.
#pragma once

#include <cstdint>
#include <ostream>
#include <string>
#include <vector>

#include "cli/client.hpp"
#include "common/status.hpp"

namespace jetsweep::cli {

// One model file a campaign names.
struct ModelFileRef {
  std::string path;     // as resolved against the campaign file's directory
  std::string sha256;
  int64_t bytes = 0;
  std::string where;    // FILE:LINE:COL of its first mention
};

// `yaml` with every torchscript:FILE replaced by torchscript:<sha256 of FILE>, each distinct file appended to
// `files`; kInvalidArgument naming FILE:LINE:COL when a file cannot be read or exceeds `max_bytes`.
Result<std::string> resolve_model_files(const std::string& yaml, const std::string& yaml_path,
                                        std::vector<ModelFileRef>& files, int64_t max_bytes = int64_t{1} << 30);

// Uploads each file unless the controller has it, `log` saying which.
Status upload_model_files(ApiClient& client, const std::vector<ModelFileRef>& files, std::ostream& log);

}  // namespace jetsweep::cli
