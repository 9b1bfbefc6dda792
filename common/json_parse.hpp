// JSON text to a Boost.JSON value with every number that has a fraction or an exponent converted correctly rounded
// (std::from_chars on its text). Boost.JSON 1.81's own parser is not: about one double in nine of those its own
// serializer writes (ordinary values such as 0.49712764980921675) comes back an ulp off, so a figure an agent
// measured would reach the database a bit different from what it sent. number_precision::precise fixes that from
// Boost 1.83 on; Debian 12 ships 1.81. Integers are parsed as Boost.JSON parses them. Pure function, any thread.
#pragma once

#include <boost/json.hpp>
#include <string_view>

namespace jetsweep::json {

// As boost::json::parse(text, ec, sp): on error `ec` is set (a malformed document, extra data after it) and the
// result is null.
boost::json::value parse_exact(std::string_view text, boost::system::error_code& ec, boost::json::storage_ptr sp = {});
// As boost::json::parse(text): throws boost::system::system_error on error.
boost::json::value parse_exact(std::string_view text);

// The double the JSON number text [begin, end) stands for, correctly rounded, given `d`, Boost.JSON 1.81's reading of
// it (returned where that is exact): what parse_exact stores for a number with a fraction or an exponent.
double exact_double(double d, const char* begin, const char* end);

}  // namespace jetsweep::json
