#include "net/sha256.hpp"

#include <openssl/evp.h>

#include <fstream>
#include <memory>
#include <vector>

namespace jetsweep {

Sha256::Sha256() : ctx_(EVP_MD_CTX_new()) {
  if (ctx_) EVP_DigestInit_ex(static_cast<EVP_MD_CTX*>(ctx_), EVP_sha256(), nullptr);
}
Sha256::~Sha256() { EVP_MD_CTX_free(static_cast<EVP_MD_CTX*>(ctx_)); }
void Sha256::update(const void* data, size_t size) {
  if (ctx_) EVP_DigestUpdate(static_cast<EVP_MD_CTX*>(ctx_), data, size);
}
namespace {
std::string final_hex(EVP_MD_CTX* ctx) {
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int n = 0;
  if (!ctx || EVP_DigestFinal_ex(ctx, digest, &n) != 1) return "";
  static const char* kHex = "0123456789abcdef";
  std::string hex;
  for (unsigned int i = 0; i < n; ++i) {
    hex += kHex[digest[i] >> 4];
    hex += kHex[digest[i] & 15];
  }
  return hex;
}
}  // namespace

std::string Sha256::hex_digest() { return final_hex(static_cast<EVP_MD_CTX*>(ctx_)); }

std::string Sha256::hex_so_far() const {
  std::unique_ptr<EVP_MD_CTX, decltype(&EVP_MD_CTX_free)> copy(EVP_MD_CTX_new(), EVP_MD_CTX_free);
  if (!copy || !ctx_ || EVP_MD_CTX_copy_ex(copy.get(), static_cast<EVP_MD_CTX*>(ctx_)) != 1) return "";
  return final_hex(copy.get());
}

Result<std::string> sha256_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return Status(Code::kIoError, "cannot open '" + path + "' to hash it");
  Sha256 hash;
  std::vector<char> buf(1 << 16);
  while (in) {
    in.read(buf.data(), static_cast<std::streamsize>(buf.size()));
    if (in.gcount() > 0) hash.update(buf.data(), static_cast<size_t>(in.gcount()));
  }
  if (in.bad()) return Status(Code::kIoError, "reading '" + path + "' failed");
  std::string hex = hash.hex_digest();
  if (hex.empty()) return internal_error("OpenSSL: SHA-256 unavailable");
  return hex;
}

}  // namespace jetsweep
