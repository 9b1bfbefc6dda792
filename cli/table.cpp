#include "cli/table.hpp"

#include <algorithm>

namespace jetsweep::cli {

size_t display_width(const std::string& text) {
  size_t n = 0;
  for (unsigned char c : text) n += (c & 0xC0) != 0x80 ? 1 : 0;   // count every byte but continuation bytes
  return n;
}

std::string Table::render() const {
  std::vector<size_t> width(columns_.size());
  for (size_t c = 0; c < columns_.size(); ++c) width[c] = display_width(columns_[c].header);
  for (const auto& line : lines_)
    for (size_t c = 0; c < std::min(line.cells.size(), columns_.size()); ++c)
      width[c] = std::max(width[c], display_width(line.cells[c]));
  auto row = [&](auto cell_of) {
    std::string out;
    for (size_t c = 0; c < columns_.size(); ++c) {
      const std::string cell = cell_of(c);
      const std::string pad(width[c] - display_width(cell), ' ');
      const bool last = c + 1 == columns_.size();
      if (c > 0) out += "  ";
      if (columns_[c].align == Align::kRight) out += pad + cell;
      else out += last ? cell : cell + pad;
    }
    while (!out.empty() && out.back() == ' ') out.pop_back();
    return out + "\n";
  };
  std::string out = row([&](size_t c) { return columns_[c].header; });
  for (const auto& line : lines_) {
    if (line.note) out += line.text + "\n";
    else out += row([&](size_t c) { return c < line.cells.size() ? line.cells[c] : std::string(); });
  }
  return out;
}

}  // namespace jetsweep::cli
