// PgStore: model files users upload (sql/023_model_files.sql; Store's model-file methods), as MemoryStore's
// memory_store_models.cpp. Chunks travel as hex text (decode(..., 'hex')) and come back as bytea.
#include <pqxx/pqxx>

#include "common/run_config.hpp"
#include "controller/pg_store.hpp"
#include "controller/pg_util.hpp"
#include "net/sha256.hpp"

namespace jetsweep::controller {

namespace {

Status check_sha(const std::string& sha256) {
  if (is_sha256_hex(sha256)) return Status::ok();
  return invalid_argument("model file '" + sha256 + "': not a SHA-256 (64 lowercase hex digits)");
}

std::string to_hex(const std::string& data) {
  static const char* kHex = "0123456789abcdef";
  std::string hex(data.size() * 2, '0');
  for (size_t i = 0; i < data.size(); ++i) {
    const auto b = static_cast<unsigned char>(data[i]);
    hex[2 * i] = kHex[b >> 4];
    hex[2 * i + 1] = kHex[b & 15];
  }
  return hex;
}

}  // namespace

Status PgStore::put_model_chunk(const std::string& sha256, int64_t index, const std::string& data) {
  JS_RETURN_IF_ERROR(check_sha(sha256));
  if (index < 0 || index > INT32_MAX || data.empty() || static_cast<int64_t>(data.size()) > proto::kModelChunkBytes)
    return invalid_argument("model file " + sha256 + " chunk " + std::to_string(index) + ": must be 1 to " +
                            std::to_string(proto::kModelChunkBytes) + " bytes at an index >= 0");
  return guarded("storing a model file chunk", [&]() -> Status {
    pqxx::work w(*conn_);
    w.exec_params("INSERT INTO model_files (sha256) VALUES ($1) ON CONFLICT DO NOTHING", sha256);
    // Nothing changes for a completed file; a chunk stored already is kept.
    w.exec_params(
        "INSERT INTO model_file_chunks (sha256, idx, data) SELECT $1, $2, decode($3, 'hex') "
        "WHERE (SELECT bytes FROM model_files WHERE sha256 = $1) IS NULL ON CONFLICT DO NOTHING",
        sha256, index, to_hex(data));
    w.commit();
    return Status::ok();
  });
}

Result<ModelFileInfo> PgStore::complete_model_file(const std::string& sha256, int64_t bytes) {
  JS_RETURN_IF_ERROR(check_sha(sha256));
  return guarded("completing a model file upload", [&]() -> Result<ModelFileInfo> {
    pqxx::work w(*conn_);
    auto file = w.exec_params("SELECT bytes, chunks FROM model_files WHERE sha256 = $1 FOR UPDATE", sha256);
    if (file.empty()) return invalid_argument("model file " + sha256 + ": no chunk was uploaded");
    if (!file[0]["bytes"].is_null()) {
      const auto stored = file[0]["bytes"].as<int64_t>();
      if (stored != bytes)
        return invalid_argument("model file " + sha256 + " is stored with " + std::to_string(stored) + " bytes, not " +
                                std::to_string(bytes));
      return ModelFileInfo{sha256, stored, file[0]["chunks"].as<int64_t>(), false};
    }
    std::vector<int64_t> sizes;
    for (const auto& row :
         w.exec_params("SELECT idx, length(data) AS bytes FROM model_file_chunks WHERE sha256 = $1 ORDER BY idx", sha256)) {
      while (static_cast<int64_t>(sizes.size()) < row["idx"].as<int64_t>()) sizes.push_back(-1);   // a missing chunk
      sizes.push_back(row["bytes"].as<int64_t>());
    }
    // Hashed a chunk at a time: a file may be larger than one bytea value (1 GB) or the backend's memory.
    Sha256 hash;
    for (size_t idx = 0; idx < sizes.size() && sizes[idx] >= 0; ++idx) {
      auto chunk = w.exec_params("SELECT data FROM model_file_chunks WHERE sha256 = $1 AND idx = $2", sha256,
                                 static_cast<int64_t>(idx));
      const pqxx::binarystring data(chunk[0][0]);
      hash.update(data.data(), data.size());
    }
    Status ok = check_model_upload(sha256, bytes, sizes, hash.hex_digest());
    if (!ok.is_ok()) {
      w.exec_params("DELETE FROM model_files WHERE sha256 = $1", sha256);   // its chunks go with it
      w.commit();
      return ok;
    }
    const auto chunks = static_cast<int64_t>(sizes.size());
    w.exec_params("UPDATE model_files SET bytes = $2, chunks = $3, completed_at = now() WHERE sha256 = $1", sha256, bytes,
                  chunks);
    w.commit();
    return ModelFileInfo{sha256, bytes, chunks, true};
  });
}

Result<std::optional<ModelFileInfo>> PgStore::model_file(const std::string& sha256) {
  return guarded("reading a model file's size", [&]() -> Result<std::optional<ModelFileInfo>> {
    pqxx::read_transaction w(*conn_);
    auto r = w.exec_params("SELECT bytes, chunks FROM model_files WHERE sha256 = $1 AND bytes IS NOT NULL", sha256);
    if (r.empty()) return std::optional<ModelFileInfo>();
    return std::optional<ModelFileInfo>(
        ModelFileInfo{sha256, r[0]["bytes"].as<int64_t>(), r[0]["chunks"].as<int64_t>(), false});
  });
}

Result<std::string> PgStore::model_file_chunk(const std::string& sha256, int64_t index) {
  return guarded("reading a model file chunk", [&]() -> Result<std::string> {
    pqxx::read_transaction w(*conn_);
    auto r = w.exec_params(
        "SELECT c.data FROM model_file_chunks c JOIN model_files f USING (sha256) "
        "WHERE c.sha256 = $1 AND c.idx = $2 AND f.bytes IS NOT NULL",
        sha256, index);
    if (r.empty()) return Status(Code::kNotFound, "model file " + sha256 + " has no chunk " + std::to_string(index));
    pqxx::binarystring data(r[0][0]);
    return data.str();
  });
}

}  // namespace jetsweep::controller
