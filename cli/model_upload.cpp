#include "cli/model_upload.hpp"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <vector>

#include "common/model_files.hpp"
#include "common/protocol.hpp"
#include "common/run_config.hpp"
#include "net/sha256.hpp"

namespace jetsweep::cli {

namespace fs = std::filesystem;

namespace {

Status upload(ApiClient& client, const std::string& file, const std::string& sha, int64_t bytes, std::ostream& log) {
  auto have = client.call("GET", "/api/models/" + sha);
  if (have) {
    log << "model file " << file << ": the controller has it (" << kTorchScriptPrefix << sha << ")\n";
    return Status::ok();
  }
  if (have.status().code() != Code::kNotFound) return have.status();
  std::ifstream in(file, std::ios::binary);
  std::vector<char> chunk(static_cast<size_t>(proto::kModelChunkBytes));
  for (int64_t index = 0; in; ++index) {
    in.read(chunk.data(), static_cast<std::streamsize>(chunk.size()));
    if (in.gcount() <= 0) break;
    auto put = client.call("PUT", "/api/models/" + sha + "/chunks/" + std::to_string(index),
                           std::string(chunk.data(), static_cast<size_t>(in.gcount())),
                           {{"Content-Type", "application/octet-stream"}});
    if (!put) return put.status().with_context("uploading " + file + " chunk " + std::to_string(index));
  }
  if (in.bad()) return Status(Code::kIoError, "reading " + file + " failed");
  auto done = client.call("POST", "/api/models/" + sha, boost::json::serialize(boost::json::object{{"bytes", bytes}}),
                          {{"Content-Type", "application/json"}});
  if (!done) return done.status().with_context("uploading " + file);
  log << "model file " << file << ": uploaded " << bytes << " bytes (" << kTorchScriptPrefix << sha << ")\n";
  return Status::ok();
}

}  // namespace

Result<std::string> resolve_model_files(const std::string& yaml, const std::string& yaml_path,
                                        std::vector<ModelFileRef>& files, int64_t max_bytes) {
  return jetsweep::resolve_model_files(yaml, yaml_path, [&](const std::string& file, const std::string& where) -> Result<std::string> {
    std::error_code ec;
    const auto bytes = static_cast<int64_t>(fs::file_size(file, ec));
    if (ec) return invalid_argument(where + ": model file '" + file + "': " + ec.message());
    if (bytes > max_bytes || bytes == 0)
      return invalid_argument(where + ": model file '" + file + "' has " + std::to_string(bytes) +
                              " bytes; model files are 1 to " + std::to_string(max_bytes) + " bytes");
    auto sha = sha256_file(file);
    if (!sha) return invalid_argument(where + ": " + sha.status().message());
    // One file under two spellings (./m.pt, m.pt) is checked and uploaded once.
    const bool known = std::any_of(files.begin(), files.end(), [&](const ModelFileRef& f) { return f.sha256 == sha.value(); });
    if (!known) files.push_back({file, sha.value(), bytes, where});
    return sha;
  });
}

Status upload_model_files(ApiClient& client, const std::vector<ModelFileRef>& files, std::ostream& log) {
  for (const auto& f : files) JS_RETURN_IF_ERROR(upload(client, f.path, f.sha256, f.bytes, log));
  return Status::ok();
}

}  // namespace jetsweep::cli
