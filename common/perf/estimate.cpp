#include "common/perf/estimate.hpp"

namespace jetsweep::sim {

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

}  // namespace jetsweep::sim
