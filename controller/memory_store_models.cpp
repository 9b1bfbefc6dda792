// MemoryStore's model files, as pg_models.cpp keeps them in sql/023's tables.
#include "common/run_config.hpp"
#include "controller/credentials.hpp"
#include "controller/memory_store.hpp"

namespace jetsweep::controller {

namespace {
Status check_sha(const std::string& sha256) {
  if (is_sha256_hex(sha256)) return Status::ok();
  return invalid_argument("model file '" + sha256 + "': not a SHA-256 (64 lowercase hex digits)");
}
}  // namespace

Status MemoryStore::put_model_chunk(const std::string& sha256, int64_t index, const std::string& data) {
  JS_RETURN_IF_ERROR(check_sha(sha256));
  if (index < 0 || data.empty() || static_cast<int64_t>(data.size()) > proto::kModelChunkBytes)
    return invalid_argument("model file " + sha256 + " chunk " + std::to_string(index) + ": must be 1 to " +
                            std::to_string(proto::kModelChunkBytes) + " bytes at an index >= 0");
  std::lock_guard lock(mu_);
  ModelFileRow& f = model_files_[sha256];
  if (!f.bytes) f.chunks.emplace(index, data);   // a chunk stored already is kept
  return Status::ok();
}

Result<ModelFileInfo> MemoryStore::complete_model_file(const std::string& sha256, int64_t bytes) {
  JS_RETURN_IF_ERROR(check_sha(sha256));
  std::lock_guard lock(mu_);
  auto it = model_files_.find(sha256);
  if (it == model_files_.end()) return invalid_argument("model file " + sha256 + ": no chunk was uploaded");
  ModelFileRow& f = it->second;
  const auto chunks = static_cast<int64_t>(f.chunks.size());
  if (f.bytes) {
    if (*f.bytes != bytes)
      return invalid_argument("model file " + sha256 + " is stored with " + std::to_string(*f.bytes) + " bytes, not " +
                              std::to_string(bytes));
    return ModelFileInfo{sha256, *f.bytes, chunks, false};
  }
  std::vector<int64_t> sizes;
  std::string all;
  for (const auto& [index, data] : f.chunks) {
    while (static_cast<int64_t>(sizes.size()) < index) sizes.push_back(-1);   // a gap: that chunk is missing
    sizes.push_back(static_cast<int64_t>(data.size()));
    all += data;
  }
  Status ok = check_model_upload(sha256, bytes, sizes, credential_sha256(all));
  if (!ok.is_ok()) {
    model_files_.erase(it);
    return ok;
  }
  f.bytes = bytes;
  return ModelFileInfo{sha256, bytes, chunks, true};
}

Result<std::optional<ModelFileInfo>> MemoryStore::model_file(const std::string& sha256) {
  std::lock_guard lock(mu_);
  auto it = model_files_.find(sha256);
  if (it == model_files_.end() || !it->second.bytes) return std::optional<ModelFileInfo>();
  return std::optional<ModelFileInfo>(
      ModelFileInfo{sha256, *it->second.bytes, static_cast<int64_t>(it->second.chunks.size()), false});
}

Result<std::string> MemoryStore::model_file_chunk(const std::string& sha256, int64_t index) {
  std::lock_guard lock(mu_);
  auto it = model_files_.find(sha256);
  if (it == model_files_.end() || !it->second.bytes) return Status(Code::kNotFound, "no model file " + sha256);
  auto chunk = it->second.chunks.find(index);
  if (chunk == it->second.chunks.end())
    return Status(Code::kNotFound, "model file " + sha256 + " has no chunk " + std::to_string(index));
  return chunk->second;
}

}  // namespace jetsweep::controller
