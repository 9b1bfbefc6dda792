#include "controller/credentials.hpp"

#include <openssl/rand.h>
#include <openssl/sha.h>

#include "common/protocol.hpp"

namespace jetsweep::controller {
namespace {

std::string hex(const unsigned char* bytes, size_t n) {
  static const char kDigits[] = "0123456789abcdef";
  std::string out;
  out.reserve(2 * n);
  for (size_t i = 0; i < n; ++i) {
    out.push_back(kDigits[bytes[i] >> 4]);
    out.push_back(kDigits[bytes[i] & 0xf]);
  }
  return out;
}

}  // namespace

Result<std::string> new_agent_credential() {
  unsigned char bytes[proto::kCredentialChars / 2];
  if (RAND_bytes(bytes, sizeof bytes) != 1)
    return internal_error("cannot make an agent credential: OpenSSL's random generator failed");
  return hex(bytes, sizeof bytes);
}

std::string credential_sha256(std::string_view credential) {
  unsigned char digest[SHA256_DIGEST_LENGTH];
  SHA256(reinterpret_cast<const unsigned char*>(credential.data()), credential.size(), digest);
  return hex(digest, sizeof digest);
}

std::string credential_refusal(const std::string& name, bool presented) {
  return "agent name '" + name + "' is enrolled with a credential and this agent " +
         (presented ? "presented a different one" : "presented none") +
         " (an agent keeps it in <journal dir>/credential); if the board was reinstalled or its credential lost, an "
         "operator can revoke it: jetsweep agents revoke " + name;
}

std::string enrollment_refusal(const std::string& name) {
  return "agent name '" + name + "' is not enrolled (new, or its credential was revoked) and this connection did not "
         "present the enrollment secret, which enrolling needs (--enroll-secret-file / $JETSWEEP_ENROLL_SECRET)";
}

}  // namespace jetsweep::controller
