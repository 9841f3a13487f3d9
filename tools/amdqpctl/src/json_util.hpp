// SPDX-License-Identifier: MIT
//
// JSON shapes shared by several verbs (see amdqpctl.1, JSON OUTPUT).
#ifndef AMDQPCTL_JSON_UTIL_HPP
#define AMDQPCTL_JSON_UTIL_HPP

#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "inventory.hpp"

namespace amdqpctl {

template <typename T>
nlohmann::json or_null(const std::optional<T>& v) {
    return v ? nlohmann::json(*v) : nlohmann::json(nullptr);
}

inline nlohmann::json or_null(const std::string& s) {
    return s.empty() ? nlohmann::json(nullptr) : nlohmann::json(s);
}

nlohmann::json row_json(const QueueRow& r);

}  // namespace amdqpctl

#endif  // AMDQPCTL_JSON_UTIL_HPP
