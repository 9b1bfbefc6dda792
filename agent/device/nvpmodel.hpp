// Parser for /etc/nvpmodel.conf in NVIDIA's syntax: PARAM blocks (what a setting writes; FILE, CLOCK and HWMON
// types, path pairs ARG / ARG_KNEXT of which the board has one), POWER_MODEL blocks (named modes, GPU TPC/FBP
// power gating among their settings), PM_CONFIG DEFAULT and FAN_CONFIG DEFAULT; and /var/lib/nvpmodel/status.
// Plain values; any thread.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.hpp"

namespace jetsweep::device {

// "< PARAM TYPE=CLOCK NAME=GPU >" followed by "ARG /path" lines; a HWMON block's lines have three tokens
// ("WARN /sys/.../hwmon curr1_max"), kept as (WARN, "/sys/.../hwmon/curr1_max").
struct NvpParam {
  std::string type;  // FILE, CLOCK or HWMON
  std::string name;  // CPU_ONLINE, CPU_A57, GPU, EMC, TPC_POWER_GATING, VDDIN_OC_LIMIT, ...
  std::vector<std::pair<std::string, std::string>> args;  // (MAX_FREQ, /sys/...), (MAX_FREQ_KNEXT, /sys/...)
  int line = 0;
  const std::string* path_of(std::string_view arg) const;
  // The board file of `arg` under `root`: of ARG and ARG_KNEXT (the newer kernel's path, L4T R36) the one that
  // exists, the KNEXT one first on R36 and later, the plain one first before; when neither exists, the path of
  // the release's preference (so that an error names it). Nothing when the block has neither line.
  std::optional<std::filesystem::path> resolve(const std::filesystem::path& root, std::string_view arg,
                                               int l4t_major) const;
};

// "PARAM ARG VALUE" inside a POWER_MODEL block, e.g. "GPU MAX_FREQ 670000000".
struct NvpSetting {
  std::string param;
  std::string arg;
  std::string value;
  int line = 0;
};

// GPU power gating of a mode or a board: a set bit switches a unit off. Masks change only at boot (nvpmodel
// asks for a reboot), so a mode whose masks differ from the board's cannot be applied live.
struct GpuGating {
  std::optional<int64_t> tpc_pg_mask;   // TPC_POWER_GATING TPC_PG_MASK
  std::optional<int64_t> fbp_pg_mask;   // FBP_POWER_GATING FBP_PG_MASK
  bool empty() const { return !tpc_pg_mask && !fbp_pg_mask; }
  // Whether a mode with these masks can be applied live on a board running `board`'s: every mask the mode sets
  // equals the board's (a mask the board does not show counts as different).
  bool applies_live_on(const GpuGating& board) const {
    return (!tpc_pg_mask || tpc_pg_mask == board.tpc_pg_mask) && (!fbp_pg_mask || fbp_pg_mask == board.fbp_pg_mask);
  }
  std::string to_string() const;        // "TPC_PG_MASK 240 FBP_PG_MASK 2" (set fields only), "none"
};

struct NvpMode {
  int id = -1;
  std::string name;
  std::vector<NvpSetting> settings;
  int line = 0;
  const NvpSetting* setting(std::string_view param, std::string_view arg) const;
  // The mode's masks; kInvalidArgument naming source:line when a mask is not a non-negative integer.
  Result<GpuGating> gating(const std::string& source) const;
};

struct NvpmodelConf {
  std::string source;  // file name used in messages
  std::vector<NvpParam> params;
  std::vector<NvpMode> modes;
  std::optional<int> default_mode;
  std::string default_fan_mode;       // FAN_CONFIG DEFAULT ("quiet", "cool"), "" when absent
  std::vector<std::string> warnings;  // lines that were skipped, with source:line

  const NvpParam* param(std::string_view name) const;
  // By exact name (case-insensitive) or by numeric id.
  const NvpMode* find(std::string_view name_or_id) const;
};

// Parse errors are kInvalidArgument naming source:line.
Result<NvpmodelConf> parse_nvpmodel_conf(std::string_view text, std::string source);
Result<NvpmodelConf> read_nvpmodel_conf(const std::filesystem::path& root);

// /var/lib/nvpmodel/status: "pmode:0002 fmode:quiet" (JetPack 4.3 and later: the mode id zero-padded, then the
// fan mode), "pmode:2", or a bare id. Nothing when the text is none of these.
struct NvpStatus {
  int mode = -1;
  std::string fan_mode;  // "" when not given
};
std::optional<NvpStatus> parse_nvpmodel_status(std::string_view text);

// The GPU's current masks as the board reads them back: TPC_PG_MASK and FBP_PG_MASK from the files the conf's
// TPC_POWER_GATING / FBP_POWER_GATING blocks name (ARG or ARG_KNEXT), else NVIDIA's known places
// (/sys/devices/platform/gpu.0/ on R36, /sys/devices/gpu.0/ before). A file that exists but does not hold an
// integer is an error naming it; a board without such files has no mask (an unset field).
struct BoardGating {
  GpuGating gating;
  std::string tpc_source;  // the file read, "" when none
  std::string fbp_source;
};
Result<BoardGating> read_board_gating(const std::filesystem::path& root, const NvpmodelConf* conf, int l4t_major);
// The modes of `conf` that apply live on a board running `board`'s masks (GpuGating::applies_live_on), each by
// name and by id ("MODE_30W", "2"): proto::DeviceFacts::live_modes. A mode whose masks do not parse is left out.
std::vector<std::string> live_mode_keys(const NvpmodelConf& conf, const GpuGating& board);

}  // namespace jetsweep::device
