// SPDX-License-Identifier: MIT
//
// A plain text table: columns as wide as their widest cell, two spaces
// apart, the last column unpadded.
#ifndef AMDQPCTL_TABLE_HPP
#define AMDQPCTL_TABLE_HPP

#include <ostream>
#include <string>
#include <vector>

namespace amdqpctl {

class Table {
  public:
    explicit Table(std::vector<std::string> header) : header_(std::move(header)) {}
    void add(std::vector<std::string> row) { rows_.push_back(std::move(row)); }
    bool empty() const noexcept { return rows_.empty(); }
    void print(std::ostream& out) const;

  private:
    std::vector<std::string> header_;
    std::vector<std::vector<std::string>> rows_;
};

}  // namespace amdqpctl

#endif  // AMDQPCTL_TABLE_HPP
