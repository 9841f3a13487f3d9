// SPDX-License-Identifier: MIT
#include <cctype>
#include <string>

#include <amdqp/amdqp.hpp>

namespace amdqp {

namespace {

bool equals_nocase(std::string_view a, std::string_view b) {
    if (a.size() != b.size())
        return false;
    for (std::size_t i = 0; i < a.size(); i++)
        if (std::tolower(static_cast<unsigned char>(a[i])) != b[i])
            return false;
    return true;
}

}  // namespace

std::optional<int> try_parse_priority(std::string_view text) noexcept {
    if (equals_nocase(text, "high"))
        return priority_high;
    if (equals_nocase(text, "normal"))
        return priority_normal;
    if (equals_nocase(text, "low"))
        return priority_low;
    // Digits only: "+3", " 3" or "3x" are more likely typos than intent.
    if (text.empty() || text.size() > 2)
        return std::nullopt;
    int value = 0;
    for (char c : text) {
        if (c < '0' || c > '9')
            return std::nullopt;
        value = value * 10 + (c - '0');
    }
    if (value > priority_max)
        return std::nullopt;
    return value;
}

int parse_priority(std::string_view text) {
    if (auto p = try_parse_priority(text))
        return *p;
    throw Error(errc::invalid,
                "amdqp: bad priority '" + std::string(text) +
                    "': use high (12), normal (7), low (2) or a number 0..15 (15 highest)",
                0);
}

std::string priority_name(int priority) {
    switch (priority) {
        case priority_high:
            return "high";
        case priority_normal:
            return "normal";
        case priority_low:
            return "low";
        default:
            return std::to_string(priority);
    }
}

}  // namespace amdqp
