// SPDX-License-Identifier: MIT
#include "config.hpp"

#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdlib>
#include <cstring>

#include <amdqp/amdqp.hpp>

namespace amdqp::preload {

namespace {

std::atomic<bool> g_warned{false};

// AMDQP_* are read with secure_getenv(3): in a process that gained
// privilege at exec (setuid, file capabilities: AT_SECURE) the invoking
// user's environment must not steer it, and it keeps its defaults.
bool env_flag(const char* name) {
    const char* v = ::secure_getenv(name);
    return v && *v && std::strcmp(v, "0") != 0;
}

}  // namespace

Config read_config() {
    Config c;
    c.priority = priority_normal;
    if (const char* text = ::secure_getenv("AMDQP_PRIORITY"); text && *text) {
        if (auto p = try_parse_priority(text))
            c.priority = static_cast<std::uint32_t>(*p);
        else
            c.problem = std::string("amdqp: AMDQP_PRIORITY='") + text +
                        "' is not a priority (use high, normal, low or 0..15); using normal";
    }
    c.stream_priority = env_flag("AMDQP_STREAM_PRIORITY");
    return c;
}

std::uint32_t stream_priority_level(int hsa_priority, std::uint32_t process_priority) {
    switch (hsa_priority) {
        case 0:  // HSA_AMD_QUEUE_PRIORITY_LOW
            return priority_low;
        case 2:  // HSA_AMD_QUEUE_PRIORITY_HIGH
            return priority_high;
        default:
            return process_priority;
    }
}

bool warn_once(const std::string& line) {
    if (env_flag("AMDQP_QUIET"))
        return false;
    if (g_warned.exchange(true))
        return false;
    std::string out = line + "\n";
    const char* p = out.data();
    std::size_t left = out.size();
    while (left) {
        ssize_t n = ::write(STDERR_FILENO, p, left);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            break;
        p += n;
        left -= static_cast<std::size_t>(n);
    }
    return true;
}

void warn_reset_after_fork() {
    g_warned.store(false);
}

}  // namespace amdqp::preload
