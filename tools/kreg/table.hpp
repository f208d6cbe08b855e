#pragma once
// A plain text table with aligned columns.

#include <iosfwd>
#include <string>
#include <vector>

namespace kreg::cli {

class Table {
 public:
  explicit Table(std::vector<std::string> header) : header_(std::move(header)) {}
  void add(std::vector<std::string> row) { rows_.push_back(std::move(row)); }
  void print(std::ostream& out) const;

 private:
  std::vector<std::string> header_;
  std::vector<std::vector<std::string>> rows_;
};

std::string fixed(double value, int decimals);

}  // namespace kreg::cli
