// Shared by the device-layer tests: the fake-board names they use, file values read back trimmed, and a
// table-driven check of many board files at once. Single-threaded (the test's thread). C++17.
#pragma once

#include <algorithm>

#include <doctest/doctest.h>

#include <string>
#include <utility>
#include <vector>

#include "agent/device/fs_util.hpp"
#include "tests/device/fake_board.hpp"
#include "tests/device/fake_board_boards.hpp"

namespace jetsweep::device {

using testing::diff_snapshots;
using testing::FakeBoard;
using testing::FakeKind;
using testing::FakeSystemctl;

// The trimmed content of a board file (by its path on the board) or of any file.
inline std::string val(const FakeBoard& fb, const std::string& board_path) { return trim(fb.read(board_path)); }
inline std::string val(const fs::path& p) { return trim(*read_raw(p)); }

// Checks every (board path, expected trimmed content) pair, naming the path of each that differs.
inline void check_files(const FakeBoard& fb, const std::vector<std::pair<std::string, std::string>>& expected) {
  for (const auto& [board_path, value] : expected) {
    CAPTURE(board_path);
    CHECK(val(fb, board_path) == value);
  }
}

// Runs `check(fb, spec)` on a fresh fake board of every kind, every Orin variant included, the board's name
// captured for failures.
inline std::vector<FakeKind> every_fake_kind() {
  std::vector<FakeKind> kinds = testing::all_fake_kinds();
  for (FakeKind k : testing::orin_variant_kinds())
    if (std::find(kinds.begin(), kinds.end(), k) == kinds.end()) kinds.push_back(k);
  return kinds;
}

template <typename Check>
void for_each_fake_board(Check check) {
  for (FakeKind kind : every_fake_kind()) {
    FakeBoard fb(kind);
    CAPTURE(fb.spec().name);
    check(fb, fb.spec());
  }
}

}  // namespace jetsweep::device
