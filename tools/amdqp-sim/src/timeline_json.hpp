// SPDX-License-Identifier: MIT
// Loader of the kernel timeline JSON of Documentation/experiments.rst (the drivers'
// --profile-dir output and the vendored H200 fixtures).
#ifndef AMDQP_SIM_TIMELINE_JSON_HPP
#define AMDQP_SIM_TIMELINE_JSON_HPP

#include <nlohmann/json.hpp>
#include <string>

#include "timeline.hpp"

namespace amdqp::sim {

// Throws std::runtime_error naming the file and what is wrong. @path may
// be gzip-compressed (.json.gz, as the llm_tp driver writes large ones).
Timeline load_timeline_json(const std::string& path);
// A timeline file's name: .json or .json.gz.
bool is_timeline_file(const std::string& path);
// The file's bytes, gunzipped when it is gzip-compressed.
std::string read_maybe_gzip(const std::string& path);
Timeline parse_timeline_json(const nlohmann::json& j, const std::string& what);

}  // namespace amdqp::sim

#endif
