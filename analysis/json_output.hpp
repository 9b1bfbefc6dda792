// JSON and text formatting helpers shared by the analyze/export commands. Pure functions; any thread.
#pragma once

#include <boost/json.hpp>
#include <optional>
#include <string>

#include "analysis/corpus.hpp"

namespace jetsweep::analysis {

// {"cores":..,"cpu_mhz":..,"gpu_mhz":..,"emc_mhz":..} (plus "name" for a named mode).
boost::json::object mode_json(const ModeKey& m, const std::string& name = "");
// A configuration as JSON: whole-number axes as numbers, true/false as booleans, others as strings.
boost::json::object config_json(const AxisMap& axes);
// A number rounded to `digits` significant digits (whole numbers as integers), null when absent.
boost::json::value jnum(double v, int digits = 6);
boost::json::value jnum(const std::optional<double>& v, int digits = 6);
// printf-style "%.*f" / "-" for an absent value.
std::string fixed(double v, int decimals);
std::string fixed(const std::optional<double>& v, int decimals);
// Pads or truncates for aligned text columns.
std::string pad(const std::string& s, size_t width);
std::string pad_left(const std::string& s, size_t width);

}  // namespace jetsweep::analysis
