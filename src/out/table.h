// Aligned text tables: columns padded to the widest cell, numbers aligned to
// the right. Cells may carry colour; widths ignore escape codes.
#pragma once

#include <string>
#include <vector>

namespace gpupin {

enum class Align { kLeft, kRight };

struct Column {
  std::string header;
  Align align = Align::kLeft;
};

class Table {
 public:
  explicit Table(std::vector<Column> columns) : columns_(std::move(columns)) {}
  void AddRow(std::vector<std::string> cells);
  // A line printed as is between rows (e.g. a MIG instance under its GPU).
  void AddNote(std::string line);
  // Rows separated by two spaces, no trailing spaces, each line ending in '\n'.
  std::string Render() const;

 private:
  struct Row {
    std::vector<std::string> cells;
    std::string note;
  };
  std::vector<Column> columns_;
  std::vector<Row> rows_;
};

}  // namespace gpupin
