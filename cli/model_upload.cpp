#include "cli/model_upload.hpp"

#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <vector>

#include "common/protocol.hpp"
#include "common/run_config.hpp"
#include "net/sha256.hpp"

namespace jetsweep::cli {

namespace fs = std::filesystem;

namespace {

std::string position(const std::string& yaml, const std::string& yaml_path, size_t offset) {
  size_t line = 1, col = 1;
  for (size_t i = 0; i < offset; ++i) {
    if (yaml[i] == '\n') ++line, col = 1;
    else ++col;
  }
  return yaml_path + ":" + std::to_string(line) + ":" + std::to_string(col);
}

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

Result<std::string> resolve_model_files(const std::string& yaml, const std::string& yaml_path, ApiClient* client,
                                        std::ostream& log, int64_t max_bytes) {
  // torchscript:FILE as a plain YAML scalar (FILE without spaces, quotes, commas or brackets); a 64-digit hex FILE
  // names an uploaded file already.
  static const std::regex kToken(R"(torchscript:([^\s,\]\}#"']+))");
  const fs::path base = fs::path(yaml_path).parent_path();
  std::map<std::string, std::string> sha_of;   // file as written -> its SHA-256
  std::string out;
  size_t copied = 0;
  for (auto it = std::sregex_iterator(yaml.begin(), yaml.end(), kToken); it != std::sregex_iterator(); ++it) {
    const std::string written = (*it)[1].str();
    if (is_sha256_hex(written)) continue;
    const auto at = static_cast<size_t>(it->position(1));
    const std::string where = position(yaml, yaml_path, at);
    if (!sha_of.count(written)) {
      const fs::path file = fs::path(written).is_absolute() ? fs::path(written) : base / written;
      std::error_code ec;
      const auto bytes = static_cast<int64_t>(fs::file_size(file, ec));
      if (ec) return invalid_argument(where + ": model file '" + file.string() + "': " + ec.message());
      if (bytes > max_bytes || bytes == 0)
        return invalid_argument(where + ": model file '" + file.string() + "' has " + std::to_string(bytes) +
                                " bytes; model files are 1 to " + std::to_string(max_bytes) + " bytes");
      auto sha = sha256_file(file.string());
      if (!sha) return invalid_argument(where + ": " + sha.status().message());
      if (client) JS_RETURN_IF_ERROR(upload(*client, file.string(), sha.value(), bytes, log));
      sha_of[written] = sha.value();
    }
    out.append(yaml, copied, at - copied);
    out += sha_of[written];
    copied = at + written.size();
  }
  out.append(yaml, copied, std::string::npos);
  return out;
}

}  // namespace jetsweep::cli
