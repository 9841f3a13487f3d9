// SPDX-License-Identifier: MIT
//
// The tagging layer's settings, from the environment amdqpctl run (or the
// user) sets: AMDQP_PRIORITY, AMDQP_STREAM_PRIORITY, AMDQP_QUIET.
#ifndef AMDQP_PRELOAD_CONFIG_HPP
#define AMDQP_PRELOAD_CONFIG_HPP

#include <cstdint>
#include <string>

namespace amdqp::preload {

struct Config {
    // The process's priority: AMDQP_PRIORITY, normal (7) if unset.
    std::uint32_t priority = 7;
    // AMDQP_PRIORITY was set to something that is not a priority (then
    // @priority is normal and @problem says so).
    std::string problem;
    // AMDQP_STREAM_PRIORITY=1: low/high HSA queue priorities (HIP stream
    // priorities) tag queues low/high; normal ones get @priority.
    bool stream_priority = false;
};

Config read_config();

// What AMDQP_STREAM_PRIORITY=1 tags a queue of HSA priority @hsa_priority
// (hsa_amd_queue_priority_t) with.
std::uint32_t stream_priority_level(int hsa_priority, std::uint32_t process_priority);

// Writes "@line\n" to stderr unless AMDQP_QUIET is set (not "0") or this
// process printed a line already: the tagging layer says at most one thing.
// Returns whether it printed.
bool warn_once(const std::string& line);
// A fork child may say its own line.
void warn_reset_after_fork();

}  // namespace amdqp::preload

#endif  // AMDQP_PRELOAD_CONFIG_HPP
