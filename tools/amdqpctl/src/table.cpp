// SPDX-License-Identifier: MIT
#include "table.hpp"

#include <algorithm>

namespace amdqpctl {

void Table::print(std::ostream& out) const {
    std::vector<std::size_t> width(header_.size(), 0);
    auto measure = [&](const std::vector<std::string>& row) {
        for (std::size_t i = 0; i < row.size() && i < width.size(); i++)
            width[i] = std::max(width[i], row[i].size());
    };
    measure(header_);
    for (const auto& r : rows_)
        measure(r);
    auto emit = [&](const std::vector<std::string>& row) {
        std::string line;
        for (std::size_t i = 0; i < width.size(); i++) {
            const std::string cell = i < row.size() ? row[i] : "";
            line += cell;
            if (i + 1 < width.size())
                line += std::string(width[i] - cell.size() + 2, ' ');
        }
        out << line << '\n';
    };
    emit(header_);
    for (const auto& r : rows_)
        emit(r);
}

}  // namespace amdqpctl
