// SPDX-License-Identifier: MIT
//
// What the rules match a tagged process on, read from /proc and the
// cgroup tree: identities the process cannot choose (its uid and groups,
// its cgroup, the Kubernetes pod that cgroup belongs to). Nothing here
// comes from the process's activity page but its AMDQP_GROUP, which only
// ever joins processes of one tenant (decide()).
#ifndef AMDQPD_PROCESS_FACTS_HPP
#define AMDQPD_PROCESS_FACTS_HPP

#include <sys/types.h>

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "config_file.hpp"

namespace amdqp::daemon {

// A pod's facts the rules match (from the kubelet or the API server).
struct PodInfo {
    std::string uid;
    std::string namespace_;
    std::string name;
    std::string priority_class;  // spec.priorityClassName, "" if none
    std::map<std::string, std::string> labels;
};

struct ProcessFacts {
    pid_t pid = 0;
    std::uint32_t uid = 0;  // real uid, as ps shows
    std::uint32_t euid = 0;
    std::vector<std::uint32_t> gids;  // real, effective and supplementary groups
    std::string exe;                  // "" if unreadable
    std::string cgroup;               // cgroup v2 path ("0::" line), "" if unknown
    std::uint64_t cgroup_id = 0;  // its directory's inode (the kernel's cgroup id), 0 if unknown
    std::string pod_uid;          // from a kubepods cgroup, "" if none
    std::optional<PodInfo> pod;   // filled by the controller when it knows the pod
    std::string comm;
};

// Reads /proc/PID (@proc_root for tests) and the cgroup's id under
// @cgroup_root; nullopt when the process is gone.
std::optional<ProcessFacts> read_process_facts(pid_t pid, const std::string& proc_root = "/proc",
                                               const std::string& cgroup_root = "/sys/fs/cgroup");

// The pod UID in a kubepods cgroup path, for both cgroup drivers:
//   systemd:  /kubepods.slice/kubepods-burstable.slice/
//             kubepods-burstable-pod<uid, '-' as '_'>.slice/cri-containerd-<id>.scope
//   cgroupfs: /kubepods/burstable/pod<uid>/<container id>
// (guaranteed pods have no QoS level). "" when @cgroup is no pod's.
std::string pod_uid_of_cgroup(const std::string& cgroup);

// What the rules and the page say about a process.
struct Verdict {
    std::optional<int> priority;  // a rule's level, overriding what its queues declared
    int ceiling = 0;              // the most any of its queues may have
    std::string group;            // "" = its own unit
    std::string rule;             // "file:line" of the rule that matched, "" = the default
    std::optional<std::size_t> rule_index;  // into the rules
};

// The first rule of @rules that matches @f decides its level or ceiling
// (@default_ceiling when none does). The group comes from that rule, else
// the page's AMDQP_GROUP (@page_group) scoped to the process's pod or uid
// (one tenant cannot join another's group), else the cgroup with
// GroupBy::kCgroup (not the root cgroup: unrelated processes share it).
Verdict decide(const std::vector<Rule>& rules, GroupBy group_by, const ProcessFacts& f,
               const std::string& page_group, int default_ceiling);

// A queue's priority for the policy: the rule's level, else what the
// kernel holds (@kernel_priority) up to the ceiling.
int effective_priority(const Verdict& v, std::uint32_t kernel_priority);

}  // namespace amdqp::daemon

#endif
