#include "out/table.h"

#include <algorithm>

#include "out/terminal.h"

namespace gpupin {

void Table::AddRow(std::vector<std::string> cells) {
  cells.resize(columns_.size());
  rows_.push_back({std::move(cells), {}});
}

void Table::AddNote(std::string line) { rows_.push_back({{}, std::move(line)}); }

std::string Table::Render() const {
  std::vector<size_t> widths;
  for (const Column& column : columns_) widths.push_back(DisplayWidth(column.header));
  for (const Row& row : rows_) {
    for (size_t i = 0; i < row.cells.size(); ++i)
      widths[i] = std::max(widths[i], DisplayWidth(row.cells[i]));
  }
  auto render_line = [&](const std::vector<std::string>& cells) {
    std::string line;
    for (size_t i = 0; i < columns_.size(); ++i) {
      const std::string& cell = cells[i];
      std::string padding(widths[i] - DisplayWidth(cell), ' ');
      if (i > 0) line += "  ";
      line += columns_[i].align == Align::kRight ? padding + cell : cell + padding;
    }
    while (!line.empty() && line.back() == ' ') line.pop_back();
    return line + "\n";
  };
  std::vector<std::string> headers;
  for (const Column& column : columns_) headers.push_back(column.header);
  std::string out = render_line(headers);
  for (const Row& row : rows_) out += row.note.empty() ? render_line(row.cells) : row.note + "\n";
  return out;
}

}  // namespace gpupin
