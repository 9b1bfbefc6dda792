// The campaign's named modes (and base modes) that need a board booted with other GPU masks than its default mode's.
#include <map>
#include <set>

#include "common/board_classes.hpp"
#include "common/campaign.hpp"
#include "common/perf/calibration.hpp"

namespace jetsweep {

std::vector<std::string> gating_notes(const Campaign& c) {
  struct PerClass {
    int64_t runs = 0;
    std::set<std::string> modes;  // "MAXN (TPC_PG_MASK 0, nvpmodel -m 0)"
    std::string booted;           // "MODE_30W (TPC_PG_MASK 240)"
  };
  std::map<std::string, PerClass> per_class;
  for (const auto& r : c.runs) {
    const std::string cls = device_target_class(r.device);
    const std::string& name = r.gating_mode();
    if (name.empty() || cls.empty() || cls == "host") continue;
    auto cal = perf::class_calibration(cls);
    if (!cal) continue;
    const perf::NamedMode* mode = nullptr;
    const perf::NamedMode* def = nullptr;
    for (const auto& m : cal->modes) {
      if (m.name == name || std::to_string(m.id) == name) mode = &m;
      if (m.id == cal->default_mode_id) def = &m;
    }
    const perf::ModeMasks* want = mode ? cal->masks_of(mode->id) : nullptr;
    const perf::ModeMasks* booted = cal->masks_of(cal->default_mode_id);
    if (!want || !booted || !def) continue;
    if (want->tpc_pg_mask == booted->tpc_pg_mask && want->fbp_pg_mask == booted->fbp_pg_mask) continue;
    PerClass& p = per_class[cls];
    ++p.runs;
    p.modes.insert(mode->name + " (" + want->to_string() + ", nvpmodel -m " + std::to_string(mode->id) + ")");
    p.booted = def->name + " (" + booted->to_string() + ")";
  }
  std::vector<std::string> out;
  for (const auto& [cls, p] : per_class) {
    std::string modes;
    for (const auto& m : p.modes) modes += (modes.empty() ? "" : ", ") + m;
    out.push_back(cls + ": " + std::to_string(p.runs) + " run(s) name modes (or base modes) that gate the GPU unlike "
                  "the default mode " + p.booted + ": " + modes + ". A board booted in its default mode reboots into "
                  "them if its agent has --allow-reboot (fewest reboots first), else refuses them (simulated boards "
                  "too; validate --estimate checks the enrolled boards)");
  }
  return out;
}

}  // namespace jetsweep
