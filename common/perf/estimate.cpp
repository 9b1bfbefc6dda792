#include "common/perf/estimate.hpp"

#include <algorithm>
#include <array>
#include <set>

#include "common/board_classes.hpp"

namespace jetsweep::perf {

Result<double> RunTimeModel::run_seconds(const RunConfig& run, const std::string& board_class) {
  auto it = classes_.find(board_class);
  if (it == classes_.end()) {
    auto model = SimModel::nominal(board_class);
    auto board = SimBoard::open(board_class);
    Result<ClassModel> m = !model ? Result<ClassModel>(model.status())
                           : !board ? Result<ClassModel>(board.status())
                                    : Result<ClassModel>(ClassModel{std::move(model).value(), std::move(board).value()});
    it = classes_.emplace(board_class, std::move(m)).first;
  }
  if (!it->second) return it->second.status();
  const ClassModel& c = it->second.value();
  JS_ASSIGN_OR_RETURN(Settings mode, c.board.resolve(run));
  JS_ASSIGN_OR_RETURN(EpochModel first, c.model.epoch(run, mode, 0, run.drop_caches));
  double seconds = first.e2e_s();
  if (run.epochs > 1) {
    JS_ASSIGN_OR_RETURN(EpochModel later, c.model.epoch(run, mode, 1, false));
    seconds += static_cast<double>(run.epochs - 1) * later.e2e_s();
  }
  return seconds;
}

}  // namespace jetsweep::perf

namespace jetsweep::perf {
namespace {

// Match keys, most specific first: class|model|dataset|bs|mode, class|model|dataset|bs, class|model|dataset,
// model|dataset.
constexpr size_t kLevels = 4;
using MatchKeys = std::array<std::string, kLevels>;

MatchKeys keys_of(const std::string& cls, const std::string& model, const std::string& dataset,
                  const std::string& bs, const std::string& mode) {
  return {cls + "|" + model + "|" + dataset + "|" + bs + "|" + mode, cls + "|" + model + "|" + dataset + "|" + bs,
          cls + "|" + model + "|" + dataset, model + "|" + dataset};
}

struct EpochSum {
  double seconds = 0;
  int64_t epochs = 0;
};
using MatchTables = std::array<std::map<std::string, EpochSum>, kLevels>;

MatchTables match_tables(const std::vector<MeasuredEpochs>& measured) {
  MatchTables tables;
  for (const auto& m : measured) {
    const auto keys = keys_of(m.board_class, m.model, m.dataset, m.batch_size, m.power_mode);
    for (size_t l = 0; l < kLevels; ++l) {
      tables[l][keys[l]].seconds += m.sum_e2e_s;
      tables[l][keys[l]].epochs += m.epochs;
    }
  }
  return tables;
}

// The runs going to one device target: a class, CLASS/*, a named board, or "any".
struct PerTarget {
  std::string board_class;   // "" for any
  bool every_board = false;  // CLASS/*: one copy per board, in parallel
  int64_t runs = 0;
  double seconds = 0;        // training time of one copy of each run
  int64_t unmatched = 0;
};

// Adds `run` to its target, timed by the most specific measurement, else the papers' model; counts the source.
void add_run(const RunConfig& run, const EstimateInputs& in, const MatchTables& tables, RunTimeModel& model,
             std::map<std::string, PerTarget>& per_target, api::EstimateSources& from) {
  std::string cls = device_target_class(run.device);
  const bool named = cls.empty() && run.device != "any";
  if (named) {
    auto it = in.class_of_agent.find(run.device);
    cls = it == in.class_of_agent.end() ? "" : it->second;
  }
  auto& t = per_target[named || is_every_instance(run.device) ? run.device : cls.empty() ? "any" : cls];
  t.board_class = cls;
  t.every_board = is_every_instance(run.device);
  ++t.runs;
  const auto keys = keys_of(cls, run.model, run.dataset, std::to_string(run.batch_size), power_mode_key(run));
  int64_t* matched_at[kLevels] = {&from.same_class_model_dataset_batch_mode, &from.same_class_model_dataset_batch,
                                  &from.same_class_model_dataset, &from.same_model_dataset_any_class};
  for (size_t level = cls.empty() ? 3 : 0; level < kLevels; ++level) {
    auto it = tables[level].find(keys[level]);
    if (it == tables[level].end() || it->second.epochs == 0) continue;
    t.seconds += static_cast<double>(run.epochs) * it->second.seconds / static_cast<double>(it->second.epochs);
    ++*matched_at[level];
    return;
  }
  if (!cls.empty() && cls != "host") {
    if (auto s = model.run_seconds(run, cls)) {
      t.seconds += s.value();
      ++from.papers_model;
      return;
    }
  }
  ++t.unmatched;
  ++from.without_measurement;
}

int64_t boards_of(const EstimateInputs& in, const std::string& cls) {
  auto it = in.enrolled_boards.find(cls);
  return it == in.enrolled_boards.end() ? 0 : it->second;
}

}  // namespace

std::string power_mode_key(const RunConfig& run) {
  auto part = [](int64_t v) { return v > 0 ? std::to_string(v) : std::string(); };
  // A base mode is part of the configuration (its cores, clocks and GPU gating under the settings).
  const PowerModeRequest& pm = run.power_mode;
  return pm.name + "/" + part(pm.cores) + "/" + part(pm.cpu_khz) + "/" + part(pm.gpu_hz) + "/" + part(pm.emc_hz) +
         (run.base_mode.empty() ? "" : "@" + run.base_mode);
}

FleetTables fleet_tables(const std::vector<BoardGatingFacts>& boards) {
  std::vector<FleetTables::Board> reported;
  for (const auto& b : boards)
    if (b.tables) reported.push_back({b.name, b.device_class, *b.tables});
  return FleetTables(std::move(reported));
}

std::vector<std::string> gating_refusals(const Campaign& campaign, const EstimateInputs& in) {
  std::map<std::pair<std::string, std::string>, int64_t> wanted;   // (class, mode) -> runs
  for (const auto& run : campaign.runs) {
    const std::string cls = device_target_class(run.device);
    if (!run.gating_mode().empty() && !cls.empty() && cls != "host") ++wanted[{cls, run.gating_mode()}];
  }
  std::vector<std::string> out;
  for (const auto& [key, runs] : wanted) {
    const auto& [cls, mode] = key;
    int64_t boards = 0;
    bool runnable = false;
    std::set<std::string> booted;   // "orin-1: MODE_30W": the modes (by name) each board runs as booted
    for (const auto& b : in.gating) {
      if (b.device_class != cls) continue;
      ++boards;
      const bool live = std::find(b.live_modes.begin(), b.live_modes.end(), mode) != b.live_modes.end();
      runnable = runnable || b.may_reboot || b.live_modes.empty() || live;
      std::string names;
      for (const auto& m : b.live_modes)
        if (m.find_first_not_of("0123456789") != std::string::npos) names += (names.empty() ? "" : ", ") + m;
      if (!names.empty()) booted.insert(b.name + ": " + names);
    }
    if (boards == 0 || runnable) continue;
    std::string masks, id;
    if (auto cal = class_calibration(cls)) {
      for (const auto& m : cal->modes)
        if (m.name == mode || std::to_string(m.id) == mode) {
          const ModeMasks* mm = cal->masks_of(m.id);
          masks = mm ? " (" + mm->to_string() + " in NVIDIA's conf)" : "";
          id = std::to_string(m.id);
        }
    }
    std::string where;
    for (const auto& b : booted) where += (where.empty() ? "" : "; ") + b;
    out.push_back(cls + ": " + std::to_string(runs) + " run(s) of nvpmodel mode " + mode + masks + " cannot run: " +
                  "the " + std::to_string(boards) + " enrolled board(s) booted with other GPU masks (modes they run as "
                  "booted: " + where +
                  ") and none may reboot; start an agent with --allow-reboot (it runs `nvpmodel -m " +
                  (id.empty() ? "ID" : id) + "` and reboots), or boot a board in that mode");
  }
  return out;
}

api::CampaignEstimate estimate_campaign(const Campaign& campaign, const EstimateInputs& in, RunTimeModel& model) {
  const MatchTables tables = match_tables(in.measured);
  api::CampaignEstimate out;
  out.campaign = campaign.name;
  std::map<std::string, PerTarget> per_target;
  for (const auto& run : campaign.runs) add_run(run, in, tables, model, per_target, out.runs_estimated_from);
  int64_t all_boards = 0;
  for (const auto& [cls, n] : in.enrolled_boards) all_boards += n;
  // Per class: runs for the class or for one of its named boards share its boards; CLASS/* runs occupy
  // every board at once; runs for any board spread over the whole fleet.
  std::map<std::string, double> class_shared, class_each;
  double named_max = 0, any_seconds = 0;
  for (const auto& [target, t] : per_target) {
    const bool is_named = in.class_of_agent.count(target) > 0;
    const int64_t n = target == "any" ? all_boards : is_named ? 1 : boards_of(in, t.board_class);
    const int64_t copies = t.every_board ? n : 1;
    api::EstimateTarget x;
    x.device = target;
    x.runs = t.runs * copies;
    x.runs_without_measurement = t.unmatched * copies;
    x.run_seconds = t.seconds * static_cast<double>(copies);
    x.boards = n;
    if (n > 0) x.wall_s = t.every_board ? t.seconds : t.seconds / static_cast<double>(n);
    out.runs += x.runs;
    if (target == "any") any_seconds += t.seconds;
    else if (t.every_board) class_each[t.board_class] += t.seconds;
    else class_shared[t.board_class] += t.seconds;
    if (is_named) named_max = std::max(named_max, t.seconds);
    out.per_device.push_back(std::move(x));
  }
  double wall = named_max;
  for (const auto& [cls, each] : class_each) wall = std::max(wall, each);
  for (const auto& [cls, shared] : class_shared) {
    const int64_t n = boards_of(in, cls);
    if (n > 0) wall = std::max(wall, shared / static_cast<double>(n) + (class_each.count(cls) ? class_each.at(cls) : 0.0));
  }
  if (all_boards > 0) wall += any_seconds / static_cast<double>(all_boards);
  out.estimated_wall_s = wall;
  out.gating_refused = gating_refusals(campaign, in);
  out.mode_tables = campaign.mode_tables;
  return out;
}

}  // namespace jetsweep::perf
