// The credential this agent enrolled with (issue 12, docs/SECURITY.md): issued by the controller in `registered`
// the first time the name registers, presented in every later `register`. Kept in one file, mode 0600, next to
// the journal (DIR/credential: proto::kCredentialChars hex digits and a newline), written atomically (temporary
// file, fsync, rename, directory fsync) so a crash leaves the old credential or the new one. Pure file I/O; any
// thread.
#pragma once

#include <optional>
#include <string>

#include "common/status.hpp"

namespace jetsweep::agent {

// The credential in `path`; nullopt when the file does not exist (not enrolled yet). A file that cannot be read or
// does not hold a credential is an error naming it.
Result<std::optional<std::string>> load_credential(const std::string& path);
// Replaces `path` with `credential` (mode 0600).
Status save_credential(const std::string& path, const std::string& credential);
// An agent's credential just issued by the controller: saved to `path` ("" = no journal directory, memory only)
// and logged, saying what a restart then needs (`jetsweep agents revoke NAME`) when it could not be kept.
void keep_enrolled_credential(const std::string& path, const std::string& credential, const std::string& agent_name);

// Replaces `path` with `text` so that a crash leaves the old file or the new one, never a torn one: a temporary
// beside it (mode 0600), fsync, rename, fsync of the directory. Also used for the pending reboot (agent/reboot.hpp).
Status write_file_durably(const std::string& path, const std::string& text);

}  // namespace jetsweep::agent
