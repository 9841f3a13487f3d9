// SPDX-License-Identifier: MIT
#include "names.hpp"

#include <linux/amdqp.h>

#include <cstdio>

#include <amdqp/amdqp.hpp>

namespace amdqpctl {

std::string backends_name(std::uint32_t bits) {
    std::string out;
    // Appended piece by piece: "," + std::string(word) makes GCC 12 warn
    // (-Wrestrict, a false positive in its inlined string insert) at -O2.
    auto add = [&](const char* word) {
        if (!out.empty())
            out += ',';
        out += word;
    };
    if (bits & AMDQP_BACKEND_SIM)
        add("sim");
    if (bits & AMDQP_BACKEND_KFD)
        add("kfd");
    if (bits & ~static_cast<std::uint32_t>(AMDQP_BACKEND_SIM | AMDQP_BACKEND_KFD))
        add("other");
    return out.empty() ? "none" : out;
}

std::string sched_mode_name(std::uint32_t mode) {
    switch (mode) {
        case AMDQP_SCHED_HWS:
            return "hws";
        case AMDQP_SCHED_MES:
            return "mes";
        default:
            return "unknown";
    }
}

std::string queue_state_name(std::uint32_t state) {
    std::string out = (state & AMDQP_QSTATE_SUSPENDED) ? "suspended" : "running";
    if (state & AMDQP_QSTATE_HELD)
        out += ",held";
    if (state & AMDQP_QSTATE_COOLDOWN)
        out += ",cooldown";
    return out;
}

std::string hex(std::uint64_t value) {
    char buf[24];
    std::snprintf(buf, sizeof(buf), "0x%llx", static_cast<unsigned long long>(value));
    return buf;
}

std::string priority_label(std::uint32_t priority) {
    const std::string name = amdqp::priority_name(static_cast<int>(priority));
    const std::string number = std::to_string(priority);
    return name == number ? number : number + " (" + name + ")";
}

std::string seconds(std::uint64_t ns) {
    char buf[32];
    std::snprintf(buf, sizeof(buf), "%llu.%03llus",
                  static_cast<unsigned long long>(ns / 1000000000),
                  static_cast<unsigned long long>(ns / 1000000 % 1000));
    return buf;
}

}  // namespace amdqpctl
