// The Orin module variants as NVIDIA ships them, identified by the device-tree module number
// (/proc/device-tree/compatible "nvidia,p3701-0004"): name, core count, default nvpmodel mode and each mode's
// id, name, cores online, GPU masks and clock caps, as NVIDIA's nvpmodel_p37xx_yyyy.conf files define them
// (facts: shared/reference/NVPMODEL.md). Used to tell a board's /etc/nvpmodel.conf from NVIDIA's and to name the
// variant in probe, doctor and the agent's facts. Immutable data; any thread.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "agent/device/board.hpp"
#include "agent/device/nvpmodel.hpp"

namespace jetsweep::device {

// One nvpmodel mode as NVIDIA's file for a variant defines it.
struct VariantMode {
  int id = 0;
  std::string name;
  // The rest is known only where NVIDIA's file is in our references (not for JetPack 6.2's Super modes).
  bool settings_known = true;
  int cores_online = 0;
  std::optional<int64_t> tpc_pg_mask, fbp_pg_mask;
  int64_t cpu_max_khz = -1;  // every online cluster's MAX_FREQ; -1 = no cap
  int64_t gpu_max_hz = -1;   // -1 = no cap
  int64_t emc_max_hz = 0;    // 0 = no cap
};

// One module variant: its module numbers, cores, default mode and NVIDIA's modes for it.
struct ModuleVariant {
  std::string name;                // "AGX Orin 32GB"
  std::vector<std::string> parts;  // module numbers: "p3701-0004"
  Module module = Module::kUnknown;
  int cores = 0;
  std::optional<int> default_mode;  // PM_CONFIG DEFAULT, where known
  std::string source;               // NVIDIA's file the facts come from
  std::vector<VariantMode> modes;
  const VariantMode* find(int id) const;
};

// Every variant in the table (one entry per NVIDIA file).
const std::vector<ModuleVariant>& module_variants();

// The variant of a module number ("p3701-0004"); JetPack 6.2's Super files for an Orin Nano are told apart by
// `conf` naming a MAXN_SUPER mode. nullptr for a module number not in the table.
const ModuleVariant* find_module_variant(std::string_view module_part, const NvpmodelConf* conf);

// Where `conf` differs from NVIDIA's file for `variant`: a missing mode, another name, cores, masks or caps, another
// default; each difference one line naming conf.source:line. Modes the conf adds (custom modes) are not
// differences. Empty = the board's modes are NVIDIA's.
std::vector<std::string> differences_from_nvidia(const NvpmodelConf& conf, const ModuleVariant& variant);

}  // namespace jetsweep::device
