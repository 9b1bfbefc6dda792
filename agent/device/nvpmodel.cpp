#include "agent/device/nvpmodel.hpp"

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <map>

#include "agent/device/fs_util.hpp"

namespace jetsweep::device {

namespace fs = std::filesystem;

namespace {

// A mask as the sysfs files and the conf write it: decimal, or hexadecimal with 0x.
std::optional<int64_t> parse_mask(std::string_view v) {
  if (v.size() > 2 && v[0] == '0' && (v[1] == 'x' || v[1] == 'X')) {
    int64_t out = 0;
    for (char c : v.substr(2)) {
      int d = std::isdigit(static_cast<unsigned char>(c)) ? c - '0'
              : (c >= 'a' && c <= 'f')                    ? c - 'a' + 10
              : (c >= 'A' && c <= 'F')                    ? c - 'A' + 10
                                                          : -1;
      if (d < 0 || out > (INT64_MAX >> 4)) return std::nullopt;
      out = out * 16 + d;
    }
    return out;
  }
  auto n = parse_int(v);
  if (!n || *n < 0) return std::nullopt;
  return *n;
}

bool iequals(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (std::toupper(static_cast<unsigned char>(a[i])) != std::toupper(static_cast<unsigned char>(b[i]))) return false;
  }
  return true;
}

}  // namespace

const std::string* NvpParam::path_of(std::string_view arg) const {
  for (const auto& [a, p] : args) {
    if (a == arg) return &p;
  }
  return nullptr;
}

std::optional<fs::path> NvpParam::resolve(const fs::path& root, std::string_view arg, int l4t_major) const {
  const std::string* plain = path_of(arg);
  const std::string* knext = path_of(std::string(arg) + "_KNEXT");
  std::vector<const std::string*> order = l4t_major >= 36 ? std::vector{knext, plain} : std::vector{plain, knext};
  for (const std::string* p : order) {
    if (p && exists_file(under(root, *p))) return under(root, *p);
  }
  for (const std::string* p : order) {
    if (p) return under(root, *p);
  }
  return std::nullopt;
}

std::string GpuGating::to_string() const {
  std::string s;
  if (tpc_pg_mask) s += "TPC_PG_MASK " + std::to_string(*tpc_pg_mask);
  if (fbp_pg_mask) s += std::string(s.empty() ? "" : " ") + "FBP_PG_MASK " + std::to_string(*fbp_pg_mask);
  return s.empty() ? "none" : s;
}

const NvpSetting* NvpMode::setting(std::string_view param, std::string_view arg) const {
  for (const auto& st : settings) {
    if (st.param == param && st.arg == arg) return &st;
  }
  return nullptr;
}

Result<GpuGating> NvpMode::gating(const std::string& source) const {
  GpuGating g;
  auto mask = [&](const char* param, const char* arg, std::optional<int64_t>& out) -> Status {
    const NvpSetting* st = setting(param, arg);
    if (!st) return Status::ok();
    out = parse_mask(st->value);
    if (!out)
      return invalid_argument(source + ":" + std::to_string(st->line) + ": " + param + " " + arg + " '" + st->value +
                              "' is not a non-negative integer mask");
    return Status::ok();
  };
  JS_RETURN_IF_ERROR(mask("TPC_POWER_GATING", "TPC_PG_MASK", g.tpc_pg_mask));
  JS_RETURN_IF_ERROR(mask("FBP_POWER_GATING", "FBP_PG_MASK", g.fbp_pg_mask));
  return g;
}

const NvpParam* NvpmodelConf::param(std::string_view name) const {
  for (const auto& p : params) {
    if (p.name == name) return &p;
  }
  return nullptr;
}

const NvpMode* NvpmodelConf::find(std::string_view name_or_id) const {
  for (const auto& m : modes) {
    if (iequals(m.name, name_or_id)) return &m;
  }
  if (auto id = parse_int(name_or_id)) {
    for (const auto& m : modes) {
      if (m.id == *id) return &m;
    }
  }
  return nullptr;
}

Result<NvpmodelConf> parse_nvpmodel_conf(std::string_view text, std::string source) {
  NvpmodelConf conf;
  conf.source = source;
  enum class Block { kNone, kParam, kMode, kOther } block = Block::kNone;
  int line_no = 0;
  size_t pos = 0;
  while (pos <= text.size()) {
    size_t end = text.find('\n', pos);
    if (end == std::string_view::npos) end = text.size();
    std::string line = trim(text.substr(pos, end - pos));
    pos = end + 1;
    ++line_no;
    std::string where = source + ":" + std::to_string(line_no);
    if (line.empty() || line[0] == '#') {
      if (end == text.size()) break;
      continue;
    }
    if (line[0] == '<') {
      if (line.back() != '>') return invalid_argument(where + ": block header without closing '>': " + line);
      auto tokens = split_ws(line.substr(1, line.size() - 2));
      if (tokens.empty()) return invalid_argument(where + ": empty block header");
      std::map<std::string, std::string> kv;
      for (size_t i = 1; i < tokens.size(); ++i) {
        size_t eq = tokens[i].find('=');
        if (eq == std::string::npos) return invalid_argument(where + ": expected KEY=VALUE, got '" + tokens[i] + "'");
        kv[tokens[i].substr(0, eq)] = tokens[i].substr(eq + 1);
      }
      if (tokens[0] == "PARAM") {
        NvpParam p;
        p.type = kv["TYPE"];
        p.name = kv["NAME"];
        p.line = line_no;
        if (p.name.empty()) return invalid_argument(where + ": PARAM block without NAME");
        conf.params.push_back(std::move(p));
        block = Block::kParam;
      } else if (tokens[0] == "POWER_MODEL") {
        NvpMode m;
        auto id = parse_int(kv["ID"]);
        if (!id) return invalid_argument(where + ": POWER_MODEL without a numeric ID: " + line);
        m.id = static_cast<int>(*id);
        m.name = kv["NAME"];
        m.line = line_no;
        conf.modes.push_back(std::move(m));
        block = Block::kMode;
      } else if (tokens[0] == "FAN_CONFIG") {
        conf.default_fan_mode = kv["DEFAULT"];
        block = Block::kOther;
      } else if (tokens[0] == "PM_CONFIG") {
        auto d = parse_int(kv["DEFAULT"]);
        if (!d) return invalid_argument(where + ": PM_CONFIG without a numeric DEFAULT: " + line);
        conf.default_mode = static_cast<int>(*d);
        block = Block::kOther;
      } else {
        block = Block::kOther;
      }
      if (end == text.size()) break;
      continue;
    }
    auto tokens = split_ws(line);
    switch (block) {
      case Block::kParam:
        if (tokens.size() == 2) {
          conf.params.back().args.emplace_back(tokens[0], tokens[1]);
        } else if (tokens.size() == 3 && conf.params.back().type == "HWMON") {
          // "WARN /sys/bus/i2c/.../hwmon curr1_max": the limit file of a hwmon folder.
          conf.params.back().args.emplace_back(tokens[0], tokens[1] + "/" + tokens[2]);
        } else {
          conf.warnings.push_back(where + ": skipped PARAM line '" + line + "'");
        }
        break;
      case Block::kMode:
        if (tokens.size() == 3) conf.modes.back().settings.push_back({tokens[0], tokens[1], tokens[2], line_no});
        else conf.warnings.push_back(where + ": skipped POWER_MODEL line '" + line + "'");
        break;
      case Block::kNone:
        conf.warnings.push_back(where + ": line outside any block '" + line + "'");
        break;
      case Block::kOther:
        break;
    }
    if (end == text.size()) break;
  }
  if (conf.default_mode) {
    bool known = std::any_of(conf.modes.begin(), conf.modes.end(), [&](const NvpMode& m) { return m.id == *conf.default_mode; });
    if (!known) {
      return invalid_argument(source + ": PM_CONFIG DEFAULT=" + std::to_string(*conf.default_mode) +
                              " names no POWER_MODEL");
    }
  }
  return conf;
}

std::optional<NvpStatus> parse_nvpmodel_status(std::string_view text) {
  auto tokens = split_ws(trim(text));
  if (tokens.empty()) return std::nullopt;
  NvpStatus st;
  for (const auto& t : tokens) {
    size_t colon = t.find(':');
    std::string key = colon == std::string::npos ? "pmode" : t.substr(0, colon);
    std::string value = colon == std::string::npos ? t : t.substr(colon + 1);
    if (key == "pmode") {
      auto id = parse_int(value);
      if (!id || *id < 0 || *id > 1000) return std::nullopt;
      st.mode = static_cast<int>(*id);
    } else if (key == "fmode") {
      st.fan_mode = value;
    }
  }
  if (st.mode < 0) return std::nullopt;
  return st;
}

Result<BoardGating> read_board_gating(const fs::path& root, const NvpmodelConf* conf, int l4t_major) {
  BoardGating out;
  auto read_mask = [&](const char* param, const char* arg, const char* file, std::optional<int64_t>& mask,
                       std::string& source) -> Status {
    std::vector<fs::path> candidates;
    if (const NvpParam* p = conf ? conf->param(param) : nullptr) {
      if (auto path = p->resolve(root, arg, l4t_major)) candidates.push_back(*path);
    }
    const fs::path r36 = under(root, std::string("/sys/devices/platform/gpu.0/") + file);
    const fs::path old = under(root, std::string("/sys/devices/gpu.0/") + file);
    if (l4t_major >= 36) candidates.insert(candidates.end(), {r36, old});
    else candidates.insert(candidates.end(), {old, r36});
    for (const auto& c : candidates) {
      if (!exists_file(c)) continue;
      JS_ASSIGN_OR_RETURN(std::string text, read_trimmed(c));
      mask = parse_mask(text);
      if (!mask) return invalid_argument(c.string() + ": GPU " + arg + " '" + text + "' is not a non-negative integer mask");
      source = c.string();
      return Status::ok();
    }
    return Status::ok();
  };
  JS_RETURN_IF_ERROR(read_mask("TPC_POWER_GATING", "TPC_PG_MASK", "tpc_pg_mask", out.gating.tpc_pg_mask, out.tpc_source));
  JS_RETURN_IF_ERROR(read_mask("FBP_POWER_GATING", "FBP_PG_MASK", "fbp_pg_mask", out.gating.fbp_pg_mask, out.fbp_source));
  return out;
}

Result<NvpmodelConf> read_nvpmodel_conf(const std::filesystem::path& root) {
  auto path = under(root, "/etc/nvpmodel.conf");
  JS_ASSIGN_OR_RETURN(std::string text, read_raw(path));
  return parse_nvpmodel_conf(text, path.string());
}

std::vector<std::string> live_mode_keys(const NvpmodelConf& conf, const GpuGating& board) {
  std::vector<std::string> keys;
  for (const auto& m : conf.modes) {
    auto g = m.gating(conf.source);
    if (!g.is_ok() || !g->applies_live_on(board)) continue;
    keys.push_back(m.name);
    keys.push_back(std::to_string(m.id));
  }
  return keys;
}

}  // namespace jetsweep::device
