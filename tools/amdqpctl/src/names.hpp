// SPDX-License-Identifier: MIT
//
// Words and units amdqpctl prints (the same in tables and JSON).
#ifndef AMDQPCTL_NAMES_HPP
#define AMDQPCTL_NAMES_HPP

#include <cstdint>
#include <string>

namespace amdqpctl {

// "sim", "kfd", "sim,kfd"; "none" for 0.
std::string backends_name(std::uint32_t bits);
// "hws", "mes", "unknown"
std::string sched_mode_name(std::uint32_t mode);
// AMDQP_QSTATE_* bits: "running", "suspended", "suspended,held", "running,cooldown"
std::string queue_state_name(std::uint32_t state);
// "0x7f0000001000"
std::string hex(std::uint64_t value);
// "12 (high)", "9"
std::string priority_label(std::uint32_t priority);
// Seconds with millisecond precision: "0.000s", "12.345s".
std::string seconds(std::uint64_t ns);

}  // namespace amdqpctl

#endif  // AMDQPCTL_NAMES_HPP
