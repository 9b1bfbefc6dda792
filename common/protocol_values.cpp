// The protocol's value rules and renderings outside the codec: agent names, credentials, board states (protocol.hpp).
#include <boost/json.hpp>
#include <cstdio>

#include "common/described_json.hpp"
#include "common/protocol.hpp"

namespace jetsweep::proto {
namespace bj = boost::json;

std::optional<std::string> agent_name_problem(std::string_view name) {
  if (name.empty()) return std::string("must not be empty");
  if (name.size() > kMaxAgentNameChars)
    return "is " + std::to_string(name.size()) + " characters long; at most " + std::to_string(kMaxAgentNameChars);
  auto alnum = [](unsigned char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9'); };
  if (!alnum(static_cast<unsigned char>(name[0]))) return std::string("must start with a letter or a digit");
  for (size_t i = 0; i < name.size(); ++i) {
    const auto c = static_cast<unsigned char>(name[i]);
    if (!alnum(c) && c != '.' && c != '_' && c != '-')
      return "has a character outside [A-Za-z0-9._-] at position " + std::to_string(i);
  }
  return std::nullopt;
}

bool is_credential_text(std::string_view text) {
  if (text.size() != kCredentialChars) return false;
  for (char c : text)
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return false;
  return true;
}


std::string BoardState::to_string() const {
  auto mhz = [](int64_t v, double per_mhz) {
    if (v <= 0) return std::string("?");
    char buf[32];
    std::snprintf(buf, sizeof buf, "%g", static_cast<double>(v) / per_mhz);
    return std::string(buf);
  };
  std::string s = (cores_online > 0 ? std::to_string(cores_online) : std::string("?")) + "c/" + mhz(cpu_khz, 1e3) + "/" +
                  mhz(gpu_hz, 1e6) + "/" + mhz(emc_hz, 1e6);
  if (!mode_name.empty()) s += " " + mode_name;
  if (clocks_pinned) s += " pinned";
  if (fan == "max") s += " fan=max";
  if (tpc_pg_mask) s += " tpc_pg=" + std::to_string(*tpc_pg_mask);
  if (fbp_pg_mask) s += " fbp_pg=" + std::to_string(*fbp_pg_mask);
  return s;
}

bj::object to_json(const BoardState& b) { return json::described_to_json(b); }

bj::object to_json(const WorkloadFacts& facts) { return json::described_to_json(facts); }

void check_workload_facts(const WorkloadFacts& f, json::FieldReader& r) {
  auto hash = [&](const char* key, const std::string& v) {
    if (!v.empty() && !is_sha256_hex(v)) r.fail(key, "expected \"\" or 64 lowercase hex digits (a SHA-256)");
  };
  hash("model_sha256", f.model_sha256);
  hash("dataset_fingerprint", f.dataset_fingerprint);
  const std::pair<const char*, int64_t> counts[] = {{"parameters", f.parameters.value_or(0)},
                                                    {"forward_macs", f.forward_macs.value_or(0)},
                                                    {"dataset_files", f.dataset_files}, {"dataset_bytes", f.dataset_bytes}};
  for (const auto& [key, v] : counts)
    if (r.ok() && v < 0) r.fail(key, "must be >= 0, got " + std::to_string(v));
}

}  // namespace jetsweep::proto
