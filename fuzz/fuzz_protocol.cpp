// libFuzzer target: the wire protocol's decoder (common/protocol.hpp proto::decode), which every frame an
// agent or a controller receives goes through. Properties: a refused frame says why, in UTF-8; an accepted one,
// encoded again, decodes to the same envelope: encode(decode(encode(e))) is the JSON of encode(e), numbers
// within 4 ulps (see near_equal).
#include <algorithm>
#include <boost/json.hpp>
#include <cmath>
#include <cstddef>
#include <limits>
#include <cstdint>
#include <string>
#include <string_view>

#include "common/protocol.hpp"
#include "common/text.hpp"
#include "fuzz/fuzz_util.hpp"

using namespace jetsweep;

namespace {

// Equal JSON, numbers within a few ulps: Boost.JSON 1.81 does not parse numbers correctly rounded (a
// 73-digit mantissa, or 5.000000000000001E72 that it wrote itself, comes back one ulp off), so a value may
// drift that much on each decode (fuzz/regressions/protocol/boost-json-imprecise-double-roundtrip).
bool near_equal(const boost::json::value& a, const boost::json::value& b) {
  if (a.is_number() && b.is_number() && (a.is_double() || b.is_double())) {
    const double x = a.to_number<double>(), y = b.to_number<double>();
    return x == y || std::fabs(x - y) <= 4 * std::numeric_limits<double>::epsilon() * std::max(std::fabs(x), std::fabs(y));
  }
  if (a.kind() != b.kind()) return false;
  if (a.is_object()) {
    const auto &oa = a.get_object(), &ob = b.get_object();
    if (oa.size() != ob.size()) return false;
    for (const auto& [key, value] : oa) {
      const auto* other = ob.if_contains(key);
      if (!other || !near_equal(value, *other)) return false;
    }
    return true;
  }
  if (a.is_array()) {
    const auto &xa = a.get_array(), &xb = b.get_array();
    if (xa.size() != xb.size()) return false;
    for (size_t i = 0; i < xa.size(); ++i)
      if (!near_equal(xa[i], xb[i])) return false;
    return true;
  }
  return a == b;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  fuzz::quiet_logs();
  const std::string_view frame(reinterpret_cast<const char*>(data), size);
  auto decoded = proto::decode(frame);
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
  auto again = proto::decode(encoded);
  fuzz::require(again.is_ok(), "a decoded envelope, encoded again, decodes",
                again.is_ok() ? "" : again.status().to_string() + " | " + encoded);
  const std::string reencoded = proto::encode(again.value());
  fuzz::require(near_equal(boost::json::parse(encoded), boost::json::parse(reencoded)),
                "a decoded envelope, encoded again, decodes to the same (numbers within 4 ulps)", encoded + " | " + reencoded);
  return 0;
}
