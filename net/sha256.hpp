// SHA-256 of files (model files: the agent's cache, the CLI's uploads; docs/WORKLOADS.md), through OpenSSL's libcrypto.
// Pure functions; any thread.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

#include "common/status.hpp"

namespace jetsweep {

// SHA-256 of bytes given piece by piece (OpenSSL's EVP); one owner.
class Sha256 {
 public:
  Sha256();
  ~Sha256();
  Sha256(const Sha256&) = delete;
  Sha256& operator=(const Sha256&) = delete;
  void update(const void* data, size_t size);
  void update(std::string_view bytes) { update(bytes.data(), bytes.size()); }
  // 64 lowercase hex digits of everything given; the object is spent after.
  std::string hex_digest();
  // The same of everything given so far; the digest goes on. "" when OpenSSL fails.
  std::string hex_so_far() const;

 private:
  void* ctx_;   // EVP_MD_CTX
};

// SHA-256 of a file's bytes as 64 lowercase hex digits; kIoError naming the file when it cannot be read.
Result<std::string> sha256_file(const std::string& path);

}  // namespace jetsweep
