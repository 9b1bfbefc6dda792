#include "agent/device/nvpmodel.hpp"

#include <algorithm>
#include <cctype>
#include <map>

#include "agent/device/fs_util.hpp"

namespace jetsweep::device {

namespace {

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
        if (tokens.size() == 2) conf.params.back().args.emplace_back(tokens[0], tokens[1]);
        else conf.warnings.push_back(where + ": skipped PARAM line '" + line + "'");
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

Result<NvpmodelConf> read_nvpmodel_conf(const std::filesystem::path& root) {
  auto path = under(root, "/etc/nvpmodel.conf");
  JS_ASSIGN_OR_RETURN(std::string text, read_raw(path));
  return parse_nvpmodel_conf(text, path.string());
}

}  // namespace jetsweep::device
