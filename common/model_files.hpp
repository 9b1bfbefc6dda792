// A campaign (or run spec) names a user's model file as `model: torchscript:FILE` (FILE a path relative to the
// campaign file's directory; docs/WORKLOADS.md "Your own model"); everything downstream names it by the SHA-256 of
// its bytes. This rewrites the text in place, so that FILE:LINE:COL of every later error still points at the file.
// Pure (the resolver does the IO); any thread.
#pragma once

#include <functional>
#include <string>

#include "common/status.hpp"

namespace jetsweep {

// Gives the SHA-256 of the model file at `path` (absolute, or relative to the working directory); `where` is the
// token's FILE:LINE:COL for its errors. Called once per distinct FILE.
using ModelFileResolver = std::function<Result<std::string>(const std::string& path, const std::string& where)>;

// `yaml` with every torchscript:FILE (a plain YAML scalar: no spaces, quotes, commas or brackets; a 64-digit hex
// FILE names a file by its hash already and is left as it is) replaced by torchscript:<resolve(FILE)>. Text in
// comments and words that merely end in "torchscript:" are left alone.
Result<std::string> resolve_model_files(const std::string& yaml, const std::string& yaml_path, const ModelFileResolver& resolve);

}  // namespace jetsweep
