// What every Store keeps of model files (issue 31; Store::put_model_chunk, complete_model_file, model_file,
// model_file_chunk): a file in chunks, completed once its sizes and SHA-256 check out, served chunk by chunk, stored
// once however often it is uploaded; an upload whose bytes do not hash to its name, or with a chunk missing or short,
// is refused naming why and dropped. Run against MemoryStore and PgStore (tests/store).
#pragma once

#include <doctest/doctest.h>

#include <openssl/sha.h>

#include <string>

#include "controller/store.hpp"

namespace jetsweep::testing {

inline std::string sha256_hex(const std::string& data) {
  unsigned char d[SHA256_DIGEST_LENGTH];
  SHA256(reinterpret_cast<const unsigned char*>(data.data()), data.size(), d);
  std::string hex;
  for (unsigned char b : d) {
    const char* k = "0123456789abcdef";
    hex += k[b >> 4];
    hex += k[b & 15];
  }
  return hex;
}

inline void check_model_files(controller::Store& store) {
  const int64_t kChunk = proto::kModelChunkBytes;
  std::string file(static_cast<size_t>(2 * kChunk + 1000), '\0');
  for (size_t i = 0; i < file.size(); ++i) file[i] = static_cast<char>((i * 7919) % 251);   // every byte value, no NULs only
  const std::string sha = sha256_hex(file);
  auto chunk = [&](int64_t i) { return file.substr(static_cast<size_t>(i * kChunk), static_cast<size_t>(kChunk)); };

  CHECK(store.model_file(sha).value() == std::nullopt);
  for (int64_t i : {2, 0, 1, 0})   // out of order, one twice
    REQUIRE(store.put_model_chunk(sha, i, chunk(i)).is_ok());
  CHECK(store.model_file(sha).value() == std::nullopt);   // not complete yet: not served
  CHECK(store.model_file_chunk(sha, 0).status().code() == Code::kNotFound);
  auto wrong_size = store.complete_model_file(sha, static_cast<int64_t>(file.size()) + 1);
  REQUIRE_FALSE(wrong_size.is_ok());
  CHECK(wrong_size.status().message().find("the chunks hold " + std::to_string(file.size()) + " bytes") != std::string::npos);

  // The refused upload was dropped: it starts again.
  for (int64_t i : {0, 1, 2}) REQUIRE(store.put_model_chunk(sha, i, chunk(i)).is_ok());
  auto done = store.complete_model_file(sha, static_cast<int64_t>(file.size()));
  REQUIRE_MESSAGE(done.is_ok(), done.status().to_string());
  CHECK(done->completed_now);
  CHECK(done->chunks == 3);
  CHECK(done->bytes == static_cast<int64_t>(file.size()));
  std::string back;
  for (int64_t i = 0; i < 3; ++i) back += store.model_file_chunk(sha, i).value();
  CHECK(back == file);
  CHECK(store.model_file_chunk(sha, 3).status().code() == Code::kNotFound);
  // Uploaded again: the same file, kept once and unchanged.
  REQUIRE(store.put_model_chunk(sha, 0, std::string(10, 'z')).is_ok());
  auto again = store.complete_model_file(sha, static_cast<int64_t>(file.size()));
  REQUIRE(again.is_ok());
  CHECK_FALSE(again->completed_now);
  CHECK(store.model_file_chunk(sha, 0).value() == chunk(0));
  CHECK(store.model_file(sha).value()->bytes == static_cast<int64_t>(file.size()));

  // Bytes that do not hash to the name (damaged in transit), a missing chunk, a short chunk in the middle.
  const std::string other = sha256_hex("another file");
  REQUIRE(store.put_model_chunk(other, 0, "not another file").is_ok());
  auto damaged = store.complete_model_file(other, 16);
  REQUIRE_FALSE(damaged.is_ok());
  CHECK(damaged.status().code() == Code::kInvalidArgument);
  CHECK(damaged.status().message().find("the uploaded bytes hash to " + sha256_hex("not another file")) != std::string::npos);
  CHECK(store.model_file(other).value() == std::nullopt);
  REQUIRE(store.put_model_chunk(other, 1, "x").is_ok());
  CHECK(store.complete_model_file(other, 1).status().message().find("chunk 0 is missing") != std::string::npos);
  REQUIRE(store.put_model_chunk(other, 0, "short").is_ok());
  REQUIRE(store.put_model_chunk(other, 1, "x").is_ok());
  CHECK(store.complete_model_file(other, 6).status().message().find("chunk 0 has 5 bytes") != std::string::npos);
  CHECK(store.complete_model_file(sha256_hex("never uploaded"), 1).status().message().find("no chunk was uploaded") !=
        std::string::npos);
  CHECK(store.put_model_chunk("not-a-sha", 0, "x").code() == Code::kInvalidArgument);
}

}  // namespace jetsweep::testing
