// libFuzzer target: the wire protocol's decoder (common/protocol.hpp proto::decode), which every frame an
// agent or a controller receives goes through. Properties: a refused frame says why, in UTF-8; every frame encode()
// writes is UTF-8; an accepted one, encoded again, decodes to the same envelope: encode(decode(encode(e))) is the
// JSON of encode(e), every number to the bit (the decoder's numbers are correctly rounded: common/json_parse.hpp;
// Boost.JSON 1.81's own parser came back an ulp off, fuzz/regressions/protocol/boost-json-imprecise-double-roundtrip);
// a frame the direct reader reads, the tree path reads the same.
#include <boost/json.hpp>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "common/json_parse.hpp"
#include "common/protocol.hpp"
#include "common/text.hpp"
#include "fuzz/fuzz_util.hpp"

using namespace jetsweep;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  fuzz::quiet_logs();
  const std::string_view frame(reinterpret_cast<const char*>(data), size);
  // Whatever bytes a message's text holds (an error naming a file, text read from a board), its frame is UTF-8
  // and decodes: the bytes that are not become U+FFFD.
  const std::string text_frame = proto::encode(proto::Envelope{1, proto::RunFinished{1, "failed", std::string(frame), 0}});
  fuzz::require(!invalid_utf8_at(text_frame), "a frame with any text in it is UTF-8", text_frame);
  fuzz::require(proto::decode(text_frame).is_ok() || text_frame.size() > proto::kMaxFrameBytes,
                "a frame with any text in it decodes", text_frame);
  auto decoded = proto::decode(frame);
  // decode reads a frame straight into its record where it can (common/json_direct.hpp): what it reads that way, the
  // tree path reads the same, to the bit.
  if (auto direct = proto::decode_direct(frame)) {
    auto tree = proto::decode_through_tree(frame);
    fuzz::require(tree.is_ok(), "a frame read directly, the tree path reads",
                  tree.is_ok() ? "" : tree.status().to_string());
    fuzz::require(*direct == tree.value() && proto::encode(*direct) == proto::encode(tree.value()),
                  "a frame read directly reads as through the tree", proto::encode(*direct));
  }
  if (!decoded.is_ok()) {
    fuzz::require(!decoded.status().message().empty(), "a refused frame says why");
    // The reason goes back to the peer in an 'error' frame (JSON) and into the log: UTF-8 whatever the frame.
    fuzz::require(!invalid_utf8_at(decoded.status().message()), "a refusal is UTF-8", decoded.status().message());
    return 0;
  }
  const proto::Envelope& envelope = decoded.value();
  fuzz::require(!proto::type_name(envelope.body).empty(), "a decoded message has a type name");
  (void)proto::needs_ack(envelope.body);
  const std::string encoded = proto::encode(envelope);
  fuzz::require(!invalid_utf8_at(encoded), "an encoded frame is UTF-8 (what a peer's JSON parser accepts)", encoded);
  auto again = proto::decode(encoded);
  fuzz::require(again.is_ok(), "a decoded envelope, encoded again, decodes",
                again.is_ok() ? "" : again.status().to_string() + " | " + encoded);
  const std::string reencoded = proto::encode(again.value());
  fuzz::require(json::parse_exact(encoded) == json::parse_exact(reencoded),
                "a decoded envelope, encoded again, decodes to the same (every number to the bit)",
                encoded + " | " + reencoded);
  return 0;
}
