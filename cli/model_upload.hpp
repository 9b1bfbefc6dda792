// The model files a campaign names as `model: torchscript:FILE` (FILE a path, relative to the campaign file's
// directory; docs/WORKLOADS.md "Your own model"): each hashed and named in the campaign's text as
// torchscript:<sha256> in place (only that token changes: FILE:LINE:COL of every error still points at the file), and,
// with a client, uploaded to the controller once, in proto::kModelChunkBytes chunks (skipped when it has the file).
// Calling thread.
#pragma once

#include <ostream>
#include <string>

#include "cli/client.hpp"
#include "common/status.hpp"

namespace jetsweep::cli {

// `yaml` with every torchscript:FILE replaced by torchscript:<sha256 of FILE>; kInvalidArgument naming
// FILE:LINE:COL when a file cannot be read or exceeds `max_bytes`. `client` null: hash only (validate); else each
// file is uploaded unless the controller has it, `log` saying which.
Result<std::string> resolve_model_files(const std::string& yaml, const std::string& yaml_path, ApiClient* client,
                                        std::ostream& log, int64_t max_bytes = int64_t{1} << 30);

}  // namespace jetsweep::cli
