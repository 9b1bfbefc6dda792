// Agent credentials: the secret a controller issues an agent when it enrolls (proto::kCredentialChars hex digits
// from OpenSSL's RAND_bytes), and the SHA-256 the Store keeps instead of it. Pure functions; any thread.
#pragma once

#include <string>
#include <string_view>

#include "common/status.hpp"

namespace jetsweep::controller {

// A fresh credential (256 random bits as lower-case hex); kInternal when OpenSSL's generator fails.
Result<std::string> new_agent_credential();
// The SHA-256 of `credential` as lower-case hex: what the agents table keeps (the credential has 256 random bits,
// so a plain hash cannot be reversed by guessing).
std::string credential_sha256(std::string_view credential);
// Why a registration of `name` was refused: it is enrolled with a credential and the agent presented another one
// (`presented`) or none. Both stores word it alike; the agent logs it.
std::string credential_refusal(const std::string& name, bool presented);
// Why a registration that would enroll `name` was refused: the connection did not present the enrollment secret.
std::string enrollment_refusal(const std::string& name);

}  // namespace jetsweep::controller
