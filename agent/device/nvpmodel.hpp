// Parser for /etc/nvpmodel.conf: PARAM blocks (what a setting writes), POWER_MODEL blocks (named
// modes) and PM_CONFIG DEFAULT. Plain values; any thread.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.hpp"

namespace jetsweep::device {

// "< PARAM TYPE=CLOCK NAME=GPU >" followed by "ARG /path" lines.
struct NvpParam {
  std::string type;  // FILE or CLOCK
  std::string name;  // CPU_ONLINE, CPU_A57, GPU, EMC, ...
  std::vector<std::pair<std::string, std::string>> args;  // (MAX_FREQ, /sys/...)
  int line = 0;
  const std::string* path_of(std::string_view arg) const;
};

// "PARAM ARG VALUE" inside a POWER_MODEL block, e.g. "GPU MAX_FREQ 670000000".
struct NvpSetting {
  std::string param;
  std::string arg;
  std::string value;
  int line = 0;
};

struct NvpMode {
  int id = -1;
  std::string name;
  std::vector<NvpSetting> settings;
  int line = 0;
};

struct NvpmodelConf {
  std::string source;  // file name used in messages
  std::vector<NvpParam> params;
  std::vector<NvpMode> modes;
  std::optional<int> default_mode;
  std::vector<std::string> warnings;  // lines that were skipped, with source:line

  const NvpParam* param(std::string_view name) const;
  // By exact name (case-insensitive) or by numeric id.
  const NvpMode* find(std::string_view name_or_id) const;
};

// Parse errors are kInvalidArgument naming source:line.
Result<NvpmodelConf> parse_nvpmodel_conf(std::string_view text, std::string source);
Result<NvpmodelConf> read_nvpmodel_conf(const std::filesystem::path& root);

}  // namespace jetsweep::device
