#include "analysis/json_output.hpp"

#include <cmath>
#include <cstdio>
#include <cstdlib>

namespace jetsweep::analysis {

boost::json::value jnum(double v, int digits) {
  if (!std::isfinite(v)) return nullptr;
  if (v == std::floor(v) && std::fabs(v) < 9e15) return static_cast<int64_t>(v);
  char buf[48];
  std::snprintf(buf, sizeof buf, "%.*g", digits, v);
  const double r = std::strtod(buf, nullptr);
  if (r == std::floor(r) && std::fabs(r) < 9e15) return static_cast<int64_t>(r);
  return r;
}

boost::json::value jnum(const std::optional<double>& v, int digits) {
  if (!v) return nullptr;
  return jnum(*v, digits);
}

boost::json::object config_json(const AxisMap& axes) {
  boost::json::object o;
  for (const auto& [axis, v] : axes) {
    if (v == "true" || v == "false") {
      o[axis] = v == "true";
      continue;
    }
    char* end = nullptr;
    const long long n = std::strtoll(v.c_str(), &end, 10);
    if (axis != "mode" && !v.empty() && end == v.c_str() + v.size()) o[axis] = static_cast<int64_t>(n);
    else o[axis] = v;
  }
  return o;
}

boost::json::object mode_json(const ModeKey& m, const std::string& name) {
  boost::json::object o;
  if (m.explicit_settings()) {
    o["cores"] = m.cores;
    o["cpu_mhz"] = jnum(m.cpu_mhz, 10);
    o["gpu_mhz"] = jnum(m.gpu_mhz, 10);
    o["emc_mhz"] = jnum(m.emc_mhz, 10);
  } else {
    o["cores"] = nullptr;
    o["cpu_mhz"] = nullptr;
    o["gpu_mhz"] = nullptr;
    o["emc_mhz"] = nullptr;
  }
  if (!name.empty()) o["name"] = name;
  return o;
}

std::string fixed(double v, int decimals) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", decimals, v);
  return buf;
}

std::string fixed(const std::optional<double>& v, int decimals) { return v ? fixed(*v, decimals) : "-"; }

std::string pad(const std::string& s, size_t width) { return s.size() >= width ? s : s + std::string(width - s.size(), ' '); }
std::string pad_left(const std::string& s, size_t width) {
  return s.size() >= width ? s : std::string(width - s.size(), ' ') + s;
}

}  // namespace jetsweep::analysis
