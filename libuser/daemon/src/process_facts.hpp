// SPDX-License-Identifier: MIT
//
// What the rules match a tagged process on, read from /proc.
#ifndef AMDQPD_PROCESS_FACTS_HPP
#define AMDQPD_PROCESS_FACTS_HPP

#include <sys/types.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "config_file.hpp"

namespace amdqp::daemon {

struct ProcessFacts {
    pid_t pid = 0;
    std::uint32_t uid = 0;
    std::string exe;     // "" if unreadable
    std::string cgroup;  // cgroup v2 path ("0::" line), "" if unknown
    std::string comm;
};

// Reads /proc/PID (@proc_root for tests); nullopt when the process is gone.
std::optional<ProcessFacts> read_process_facts(pid_t pid, const std::string& proc_root = "/proc");

// What the rules and the page say about a process.
struct Verdict {
    std::optional<int> priority;  // a rule's, overriding the process's own tag
    std::string group;            // "" = its own unit
    std::string rule;             // "file:line" of the rule that matched
};

// The first rule of @rules that matches @f decides; the group falls back to
// the page's AMDQP_GROUP (@page_group), then to the cgroup with
// GroupBy::kCgroup (not the root cgroup: unrelated processes share it).
Verdict decide(const std::vector<Rule>& rules, GroupBy group_by, const ProcessFacts& f,
               const std::string& page_group);

}  // namespace amdqp::daemon

#endif
