// SPDX-License-Identifier: MIT
//
// What /proc and the cgroup tree say about a process: its name, cgroup and
// container, and which processes a cgroup holds.
#ifndef AMDQPCTL_PROCESS_INFO_HPP
#define AMDQPCTL_PROCESS_INFO_HPP

#include <cstdint>
#include <string>
#include <vector>

namespace amdqpctl {

struct ProcessInfo {
    std::string comm;       // /proc/PID/comm; empty when the process is gone
    std::string cgroup;     // cgroup v2 path ("0::" line), else the first hierarchy's
    std::string container;  // short (12 hex) container id found in the cgroup, or empty
};

ProcessInfo read_process_info(const std::string& proc_root, std::uint32_t pid);

// The container id in a cgroup path (docker, containerd, CRI-O, podman,
// kubepods name their cgroups after the 64-hex id), first 12 digits.
std::string container_of_cgroup(const std::string& cgroup);

// The cgroup folder for what a user typed: a path under
// SYS_ROOT/fs/cgroup, or a cgroup path as /proc/PID/cgroup shows it.
std::string cgroup_folder(const std::string& sys_root, const std::string& path);
// Pids in the cgroup folder and all its descendants, sorted, unique.
// Throws CtlError when the folder is not a cgroup.
std::vector<std::uint32_t> cgroup_pids(const std::string& folder);

}  // namespace amdqpctl

#endif  // AMDQPCTL_PROCESS_INFO_HPP
