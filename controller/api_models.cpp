// Model files users bring (docs/WORKLOADS.md "Your own model"; sql/023): PUT /api/models/SHA256/chunks/INDEX (the raw
// bytes of one chunk of proto::kModelChunkBytes, the last shorter), POST /api/models/SHA256 {"bytes": N} (completes
// the upload: sizes and hash checked), GET /api/models/SHA256 (a completed file's size, else 404). `jetsweep submit`
// uploads the files its campaign names; agents fetch them over their connection (fetch_model, agent_session.cpp).
// Io thread, like every Controller handler; the store's work goes to the DbWorker.
#include <boost/json.hpp>

#include "common/json_fields.hpp"
#include "common/json_parse.hpp"
#include "common/log.hpp"
#include "common/run_config.hpp"
#include "controller/api_call.hpp"

namespace jetsweep::controller {
namespace http = boost::beast::http;
namespace bj = boost::json;

namespace {

bj::object to_json(const ModelFileInfo& f) {
  return bj::object{{"sha256", f.sha256}, {"model", kTorchScriptPrefix + f.sha256}, {"bytes", f.bytes}, {"chunks", f.chunks}};
}

// The SHA-256 of /api/models/SHA256[/...], or a 400 answered.
std::optional<std::string> sha_of(const Controller::ApiCall& call) {
  if (is_sha256_hex(call.parts[2])) return call.parts[2];
  call.fail(http::status::bad_request, "'" + call.parts[2] + "' is not a SHA-256 (64 lowercase hex digits)");
  return std::nullopt;
}

}  // namespace

void Controller::api_put_model_chunk(const ApiCall& call) {
  auto sha = sha_of(call);
  if (!sha) return;
  int64_t index = -1;
  try {
    size_t used = 0;
    index = std::stoll(call.parts[4], &used);
    if (used != call.parts[4].size()) index = -1;
  } catch (const std::exception&) {
  }
  if (index < 0) return call.fail(http::status::bad_request, "chunk index '" + call.parts[4] + "': must be an integer >= 0");
  const int64_t max_bytes = options_.max_model_bytes;
  if (index >= (max_bytes + proto::kModelChunkBytes - 1) / proto::kModelChunkBytes)
    return call.fail(http::status::payload_too_large, "model file " + *sha + ": chunk " + std::to_string(index) +
                                                          " lies beyond this controller's limit of " +
                                                          std::to_string(max_bytes) + " bytes per model file (--max-model-mb)");
  db_.post<Status>(
      executor(), [sha = *sha, index, data = call.req->body()](Store& s) { return s.put_model_chunk(sha, index, data); },
      [call, sha = *sha, index](Status s) {
        if (!s.is_ok()) return call.fail(s);
        call.reply(http::status::ok, bj::object{{"sha256", sha}, {"index", index}});
      });
}

void Controller::api_complete_model(const ApiCall& call) {
  auto sha = sha_of(call);
  if (!sha) return;
  bj::error_code ec;
  const bj::value body = json::parse_exact(call.req->body(), ec);
  if (ec || !body.is_object()) return call.fail(http::status::bad_request, "the body must be a JSON object {\"bytes\": N}");
  json::FieldReader r(body.get_object(), "POST /api/models/" + *sha);
  const int64_t bytes = r.integer("bytes");
  if (!r.ok()) return call.fail(http::status::bad_request, r.status().message());
  if (bytes < 1 || bytes > options_.max_model_bytes)
    return call.fail(http::status::payload_too_large, "model file " + *sha + " of " + std::to_string(bytes) +
                                                          " bytes: this controller keeps model files of 1 to " +
                                                          std::to_string(options_.max_model_bytes) + " bytes (--max-model-mb)");
  db_.post<Result<ModelFileInfo>>(
      executor(), [sha = *sha, bytes](Store& s) { return s.complete_model_file(sha, bytes); },
      [call](Result<ModelFileInfo> r) {
        if (!r) return call.fail(r.status());
        if (r->completed_now) JS_LOG_INFO << "model file " << r->sha256 << " stored (" << r->bytes << " bytes)";
        bj::object o = to_json(r.value());
        o["stored_now"] = r->completed_now;
        call.reply(r->completed_now ? http::status::created : http::status::ok, o);
      });
}

void Controller::api_model_file(const ApiCall& call) {
  auto sha = sha_of(call);
  if (!sha) return;
  db_.post<Result<std::optional<ModelFileInfo>>>(
      executor(), [sha = *sha](Store& s) { return s.model_file(sha); },
      [call, sha = *sha](Result<std::optional<ModelFileInfo>> r) {
        if (!r) return call.fail(r.status());
        if (!r->has_value()) return call.fail(http::status::not_found, "no model file " + sha + " on this controller");
        call.reply(http::status::ok, to_json(**r));
      });
}

Status check_model_files(Store& store, const Campaign& campaign) {
  std::set<std::string> checked;
  for (const auto& run : campaign.runs) {
    if (!is_torchscript_model(run.model) || !checked.insert(run.model).second) continue;
    JS_ASSIGN_OR_RETURN(auto file, store.model_file(torchscript_sha256(run.model)));
    if (!file)
      return invalid_argument("model " + run.model + " has not been uploaded to this controller (jetsweep submit "
                              "uploads the files a campaign names as model: torchscript:FILE.pt)");
  }
  return Status::ok();
}

}  // namespace jetsweep::controller
