#include "common/board_tables.hpp"

#include <algorithm>

#include "common/board_classes.hpp"
#include "common/described_json.hpp"
#include "common/json_fields.hpp"
#include "common/text.hpp"

namespace jetsweep {

namespace {

namespace bj = boost::json;

// The three tables of a BoardTables by their key, unit and what the error messages call them.
struct TableField {
  const char* key;
  const char* what;
  std::vector<int64_t> BoardTables::*values;
  int64_t PowerModeRequest::*setting;
};
constexpr TableField kTableFields[] = {{"cpu_khz", "CPU table (kHz)", &BoardTables::cpu_khz, &PowerModeRequest::cpu_khz},
                                       {"gpu_hz", "GPU table (Hz)", &BoardTables::gpu_hz, &PowerModeRequest::gpu_hz},
                                       {"emc_hz", "EMC table (Hz)", &BoardTables::emc_hz, &PowerModeRequest::emc_hz}};

bool contains(const std::vector<int64_t>& v, int64_t x) { return std::binary_search(v.begin(), v.end(), x); }

std::string values_text(const std::vector<int64_t>& v) {
  return join(v, ", ", [](int64_t x) { return std::to_string(x); });
}

}  // namespace

bj::object to_json(const BoardTables& t) { return json::described_to_json(t); }

Status check_board_tables(const BoardTables& t, const std::string& where) {
  if (t.source != kTablesFromBoard && t.source != kTablesPapersBsp)
    return invalid_argument(where + " field 'source': '" + t.source + "' is neither '" + std::string(kTablesFromBoard) +
                            "' nor '" + std::string(kTablesPapersBsp) + "'");
  if (t.cores < 1) return invalid_argument(where + " field 'cores': must be >= 1, got " + std::to_string(t.cores));
  for (const auto& f : kTableFields) {
    const auto& v = t.*f.values;
    if (v.empty()) return invalid_argument(where + " field '" + f.key + "': the table is empty");
    for (size_t i = 0; i < v.size(); ++i)
      if (v[i] <= 0 || (i > 0 && v[i] <= v[i - 1]))
        return invalid_argument(where + " field '" + f.key + "': values must be positive and strictly ascending, " +
                                "found " + std::to_string(v[i]) + " at index " + std::to_string(i));
  }
  return Status::ok();
}

void validate(json::FieldReader& r, const BoardTables& t) {
  if (!r.ok()) return;
  if (Status s = check_board_tables(t, r.where()); !s.is_ok()) r.fail_with(s);
}

Result<BoardTables> board_tables_from_json(const bj::object& o, const std::string& where) {
  json::FieldReader r(o, where);
  BoardTables t;
  json::read_described(r, t);
  validate(r, t);
  if (!r.ok()) return r.status();
  return t;
}

Result<BoardTables> papers_bsp_tables(std::string_view board_class) {
  JS_ASSIGN_OR_RETURN(BoardClassTables c, board_class_tables(board_class));
  return BoardTables{std::string(kTablesPapersBsp), c.cores, c.cpu_khz, c.gpu_hz, c.emc_hz};
}

FleetTables::FleetTables(std::vector<Board> boards) : boards_(std::move(boards)) {
  std::sort(boards_.begin(), boards_.end(), [](const Board& a, const Board& b) { return a.name < b.name; });
  std::map<std::string, std::vector<const Board*>> by_class;
  for (const auto& b : boards_) {
    by_device_[b.name] = {b.tables, "the tables " + b.name + " reported (" + b.tables.source + ")", true};
    by_class[b.device_class].push_back(&b);
  }
  for (const auto& [cls, members] : by_class) {
    BoardTables common = members.front()->tables;
    std::string names;
    for (const Board* b : members) {
      common.cores = std::min(common.cores, b->tables.cores);
      if (b->tables.source != common.source) common.source = std::string(kTablesFromBoard);
      for (const auto& f : kTableFields) {
        auto& v = common.*f.values;
        v.erase(std::remove_if(v.begin(), v.end(), [&](int64_t x) { return !contains(b->tables.*f.values, x); }), v.end());
      }
      names += (names.empty() ? "" : ", ") + b->name;
    }
    for (const auto& f : kTableFields)
      if ((common.*f.values).empty()) {
        std::string each;
        for (const Board* b : members) each += "; " + b->name + ": " + values_text(b->tables.*f.values);
        unresolved_.emplace(cls, "the enrolled " + cls + " boards have no " + f.what + " value in common" + each);
      }
    by_device_[cls] = {common,
                       members.size() == 1 ? "the tables of " + cls + "'s one enrolled board that reported them (" + names +
                                                 ", " + common.source + ")"
                                           : "the values the " + std::to_string(members.size()) + " enrolled " + cls +
                                                 " boards that reported tables share (" + names + ", " + common.source + ")",
                       true};
  }
}

Result<ResolvedTables> FleetTables::resolve(std::string_view device) const {
  const std::string cls = device_target_class(device);
  if (cls.empty() || cls == "host") {
    auto it = by_device_.find(device);
    if (it != by_device_.end() && cls.empty()) return it->second;
    return invalid_argument("'" + std::string(device) + "' is neither a board class nor an enrolled board that " +
                            "reported its frequency tables (board classes: " + join(board_classes()) + ")");
  }
  if (auto bad = unresolved_.find(cls); bad != unresolved_.end()) return invalid_argument(bad->second);
  if (auto it = by_device_.find(cls); it != by_device_.end()) return it->second;
  JS_ASSIGN_OR_RETURN(BoardTables papers, papers_bsp_tables(cls));
  return ResolvedTables{std::move(papers),
                        "the papers' BSP tables of " + cls +
                            (boards_.empty() ? "" : " (no enrolled board of the class reported its own)"),
                        false};
}

std::string FleetTables::settings_problem(const RunConfig& run) const {
  const PowerModeRequest& pm = run.power_mode;
  if (pm.cores == 0 && pm.cpu_khz == 0 && pm.gpu_hz == 0 && pm.emc_hz == 0) return "";
  // The boards the run may land on: the one it names, or every enrolled board of its class that reported
  // tables. None (offline, a class none reported, `any`): nothing to check against.
  const std::string cls = device_target_class(run.device);
  std::vector<const Board*> targets;
  for (const auto& b : boards_)
    if (cls.empty() ? b.name == run.device : b.device_class == cls) targets.push_back(&b);
  if (targets.empty()) return "";
  // Where the tables came from, for the message: resolved (a copy of the tables) only when a setting is refused.
  auto label = [&] {
    auto resolved = resolve(run.device);
    return resolved ? resolved->label : "the enrolled " + cls + " boards' tables";
  };
  auto lacking = [&](auto&& lacks, auto&& describe) {
    std::string out;
    for (const Board* b : targets)
      if (lacks(b->tables)) out += (out.empty() ? "" : "; ") + describe(*b);
    return out;
  };
  if (auto few = lacking([&](const BoardTables& b) { return pm.cores > b.cores; },
                         [](const Board& b) { return b.name + " (" + std::to_string(b.tables.cores) + ")"; });
      !few.empty())
    return "power_mode.cores " + std::to_string(pm.cores) + " exceeds the cores of " + few + " (" + label() + ")";
  for (const auto& f : kTableFields) {
    const int64_t v = pm.*f.setting;
    if (v == 0) continue;
    if (auto without = lacking([&](const BoardTables& b) { return !contains(b.*f.values, v); },
                               [&](const Board& b) { return b.name + "'s: " + values_text(b.tables.*f.values); });
        !without.empty())
      return "power_mode." + std::string(f.key) + " " + std::to_string(v) + " is not in the " + f.what +
             " of every board it may run on (" + label() + "); lacking it: " + without;
  }
  return "";
}

}  // namespace jetsweep
