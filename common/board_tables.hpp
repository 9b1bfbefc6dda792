// A board's own frequency tables as its agent reports them at registration (proto::DeviceFacts::tables), and
// the fleet's tables the controller expands power-mode grids from and checks a run's settings against
// (docs/CAMPAIGNS.md, "Whose frequency tables"). Plain values; any thread.
#pragma once

#include <boost/describe/class.hpp>
#include <boost/json.hpp>
#include <boost/pfr/ops_fields.hpp>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/json_fields.hpp"
#include "common/run_config.hpp"
#include "common/status.hpp"
#include "common/wire_rules.hpp"

namespace jetsweep {

// BoardTables::source: read from the board's sysfs by its agent, or the papers' tables of its class (the BSP the
// papers measured on: simulated boards, and campaigns expanded offline).
inline constexpr std::string_view kTablesFromBoard = "board";
inline constexpr std::string_view kTablesPapersBsp = "papers' BSP";

struct BoardTables {
  std::string source;                             // kTablesFromBoard or kTablesPapersBsp
  int64_t cores = 0;
  std::vector<int64_t> cpu_khz, gpu_hz, emc_hz;   // ascending, positive
  bool operator==(const BoardTables& o) const { return boost::pfr::eq_fields(*this, o); }
};
// Described once: its JSON (on the wire in register, in the API, in the database) derives from this
// (common/described_json.hpp); every member is required.
BOOST_DESCRIBE_STRUCT(BoardTables, (), (source, cores, cpu_khz, gpu_hz, emc_hz))
JS_WIRE_RULES(BoardTables,
              (&BoardTables::source, &BoardTables::cores, &BoardTables::cpu_khz, &BoardTables::gpu_hz,
               &BoardTables::emc_hz),
              ())

boost::json::object to_json(const BoardTables& tables);
// kInvalidArgument naming `where` and the field: an empty table, one not strictly ascending or with a value <= 0,
// cores < 1, an unknown source. What an agent sends and the controller accepts.
Status check_board_tables(const BoardTables& tables, const std::string& where);
// check_board_tables, failing in `r` (the codec's validate step).
void validate(json::FieldReader& r, const BoardTables& tables);
// kInvalidArgument naming `where` and the field: a missing or non-integral entry, or check_board_tables'.
Result<BoardTables> board_tables_from_json(const boost::json::object& o, const std::string& where);
// The papers' tables of a board class (board_class_tables), labelled kTablesPapersBsp.
Result<BoardTables> papers_bsp_tables(std::string_view board_class);

// The tables a run on one device is expanded and checked against, and where they came from.
struct ResolvedTables {
  BoardTables tables;
  // "the tables orin-1 reported (board)", "the values the 2 enrolled agx-orin boards that reported tables share
  // (orin-1, orin-2, board)",
  // "the papers' BSP tables of agx-orin (no enrolled board of the class reported its own)".
  std::string label;
  bool reported = false;   // from enrolled boards: settings are checked against them
};

// The enrolled boards' reported tables: what the controller expands and checks a submitted campaign against.
// Default-constructed (offline, `jetsweep validate`): the papers' BSP tables for every class, settings unchecked.
class FleetTables {
 public:
  struct Board {
    std::string name;
    std::string device_class;
    BoardTables tables;
  };
  FleetTables() = default;
  explicit FleetTables(std::vector<Board> boards);

  // A board's name: its tables. A class or CLASS/*: the values every enrolled board of the class reports (any
  // of them may take a class's run; a CLASS/* run runs on each), or the papers' BSP tables where none of the
  // class reported its own. kInvalidArgument: a device that is neither, or boards with no value in common.
  Result<ResolvedTables> resolve(std::string_view device) const;
  // "" when the run's settings (cores, cpu_khz, gpu_hz, emc_hz, those set) are in the reported tables of every
  // board it may land on (the one it names, or each of its class that reported tables), or when there are none
  // to check against; else which setting is missing and which boards lack it.
  std::string settings_problem(const RunConfig& run) const;
  const std::vector<Board>& boards() const { return boards_; }

 private:
  std::vector<Board> boards_;                                   // by name
  std::map<std::string, ResolvedTables, std::less<>> by_device_;   // board names and classes
  std::map<std::string, std::string, std::less<>> unresolved_;     // class -> why its boards have no common table
};

}  // namespace jetsweep
