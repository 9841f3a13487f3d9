// SPDX-License-Identifier: MIT
// Scenario files (JSON, or TOML with the same keys): README.md documents
// every key. Timeline paths are relative to the file.
#ifndef AMDQP_SIM_SCENARIO_FILE_HPP
#define AMDQP_SIM_SCENARIO_FILE_HPP

#include <nlohmann/json.hpp>
#include <string>

#include "scenario.hpp"

namespace amdqp::sim {

Scenario load_scenario(const std::string& path);  // .toml or JSON; throws std::runtime_error
Scenario parse_scenario(const nlohmann::json& j, const std::string& base_dir);

// Shared by the scenario files and the command line.
void apply_device_keys(const nlohmann::json& j, DeviceParams& d);
void apply_daemon_keys(const nlohmann::json& j, DaemonParams& d);

}  // namespace amdqp::sim

#endif
