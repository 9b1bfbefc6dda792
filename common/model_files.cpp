#include "common/model_files.hpp"

#include <filesystem>
#include <map>
#include <regex>

#include "common/run_config.hpp"

namespace jetsweep {

namespace {
std::string position(const std::string& yaml, const std::string& yaml_path, size_t offset) {
  size_t line = 1, col = 1;
  for (size_t i = 0; i < offset; ++i) {
    if (yaml[i] == '\n') ++line, col = 1;
    else ++col;
  }
  return yaml_path + ":" + std::to_string(line) + ":" + std::to_string(col);
}
}  // namespace

Result<std::string> resolve_model_files(const std::string& yaml, const std::string& yaml_path, const ModelFileResolver& resolve) {
  static const std::regex kToken(R"(torchscript:([^\s,\]\}#"']+))");
  const std::filesystem::path base = std::filesystem::path(yaml_path).parent_path();
  std::map<std::string, std::string> sha_of;   // FILE as written -> its SHA-256
  std::string out;
  size_t copied = 0;
  for (auto it = std::sregex_iterator(yaml.begin(), yaml.end(), kToken); it != std::sregex_iterator(); ++it) {
    const std::string written = (*it)[1].str();
    if (is_sha256_hex(written)) continue;
    const auto at = static_cast<size_t>(it->position(1));
    // Only a value: the token starts a scalar (after a space, '[', ',', '{', ':' or at a line's start), and no
    // comment ('#') comes before it on its line.
    const auto token = static_cast<size_t>(it->position(0));
    const size_t line_start = yaml.rfind('\n', token == 0 ? 0 : token - 1);
    const size_t from = line_start == std::string::npos || token == 0 ? 0 : line_start + 1;
    if (yaml.find('#', from) < token) continue;
    if (token > from && std::string(" \t[,{:").find(yaml[token - 1]) == std::string::npos) continue;
    if (!sha_of.count(written)) {
      const std::filesystem::path file = std::filesystem::path(written).is_absolute() ? std::filesystem::path(written) : base / written;
      JS_ASSIGN_OR_RETURN(sha_of[written], resolve(file.string(), position(yaml, yaml_path, at)));
    }
    out.append(yaml, copied, at - copied);
    out += sha_of[written];
    copied = at + written.size();
  }
  out.append(yaml, copied, std::string::npos);
  return out;
}

}  // namespace jetsweep
