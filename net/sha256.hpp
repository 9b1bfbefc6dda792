// SHA-256 of files (model files: the agent's cache, the CLI's uploads; docs/WORKLOADS.md), through OpenSSL's libcrypto.
// Pure functions; any thread.
#pragma once

#include <cstddef>
#include <string>

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
  // 64 lowercase hex digits of everything given; the object is spent after.
  std::string hex_digest();

 private:
  void* ctx_;   // EVP_MD_CTX
};

// SHA-256 of a file's bytes as 64 lowercase hex digits; kIoError naming the file when it cannot be read.
Result<std::string> sha256_file(const std::string& path);

}  // namespace jetsweep
