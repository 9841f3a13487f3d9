// SPDX-License-Identifier: MIT
//
// What amdqpd last said about itself and whether it still runs. The daemon
// rewrites <runtime dir>/amdqpd.status.json every half second and removes
// it when it stops cleanly; a file left behind names a daemon that died.
#ifndef AMDQPCTL_DAEMON_STATUS_HPP
#define AMDQPCTL_DAEMON_STATUS_HPP

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace amdqpctl {

struct DaemonGpu {
    std::uint32_t gpu = 0;
    // Queues with a priority below this are suspended on the GPU (0: none).
    std::uint32_t suspend_level = 0;
    std::uint32_t queues = 0;  // tagged queues the daemon steers there
    std::uint32_t active_queues = 0;
};

struct DaemonGroup {
    std::uint32_t priority = 0;
    std::vector<std::uint32_t> gpus;
    std::vector<std::uint32_t> pids;
};

struct DaemonStatus {
    enum class Liveness {
        no_file,  // not running (or not writing where amdqpctl looks)
        running,  // the pid the file names is an amdqpd
        stale,    // the pid the file names is gone or is something else
        unknown,  // the file names no pid amdqpctl could read
    };

    std::string file;
    Liveness liveness = Liveness::no_file;
    std::optional<std::uint32_t> pid;
    // Why the file could not be used (what follows "status file
    // unreadable: "); empty when it could.
    std::string problem;

    // What a running daemon reported; left empty for any other liveness,
    // since a dead daemon's suspend levels describe nothing now.
    std::string order;
    bool device_open = false;
    std::uint64_t processes = 0;
    std::vector<DaemonGpu> gpus;  // sorted by gpu
    std::map<std::string, DaemonGroup> groups;
    std::map<std::string, std::uint64_t> stats;

    bool reported() const { return liveness == Liveness::running && problem.empty(); }
};

std::string daemon_status_file(const std::string& runtime_dir);

// Reads the status file in @runtime_dir and checks the pid it names under
// @proc_root. Never throws for what the file holds: problems end up in
// DaemonStatus::problem.
DaemonStatus read_daemon_status(const std::string& runtime_dir, const std::string& proc_root);

// The same for a status file's text that is already read (@file only
// names it).
DaemonStatus parse_daemon_status(const std::string& file, const std::string& text,
                                 const std::string& proc_root);

}  // namespace amdqpctl

#endif  // AMDQPCTL_DAEMON_STATUS_HPP
