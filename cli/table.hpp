// A text table with aligned columns (the CLI's listings: campaigns, agents, comparisons). Widths come from the
// widest cell of each column (counted in UTF-8 code points); the last column is not padded. Pure; any thread.
#pragma once

#include <string>
#include <utility>
#include <vector>

namespace jetsweep::cli {

class Table {
 public:
  enum class Align { kLeft, kRight };
  struct Column {
    std::string header;
    Align align = Align::kLeft;
  };
  explicit Table(std::vector<Column> columns) : columns_(std::move(columns)) {}

  // One row (as many cells as columns; missing cells are empty).
  void add_row(std::vector<std::string> cells) { lines_.push_back({false, std::move(cells), {}}); }
  // A line printed as it is after the rows added so far ("    NOT READY: ..."), outside the columns.
  void add_note(std::string text) { lines_.push_back({true, {}, std::move(text)}); }
  bool empty() const { return lines_.empty(); }
  // The header and the lines, each ending in "\n"; two spaces between columns.
  std::string render() const;

 private:
  struct Line {
    bool note = false;
    std::vector<std::string> cells;
    std::string text;
  };
  std::vector<Column> columns_;
  std::vector<Line> lines_;
};

// The display width of UTF-8 `text` (code points; each taken as one column).
size_t display_width(const std::string& text);

}  // namespace jetsweep::cli
