// Frequency tables of the simulated boards: the board-class tables of common/board_classes.hpp (the
// real-board path always reads its tables from the board). Immutable data; any thread.
#pragma once

#include "common/board_classes.hpp"

namespace jetsweep::device {

using SimBoardTables = BoardClassTables;

inline std::vector<std::string> sim_board_classes() { return board_classes(); }
inline Result<SimBoardTables> sim_board_tables(std::string_view board_class) { return board_class_tables(board_class); }

}  // namespace jetsweep::device
