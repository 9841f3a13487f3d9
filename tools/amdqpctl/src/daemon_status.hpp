// SPDX-License-Identifier: MIT
//
// What amdqpd says about itself, asked over its socket (<runtime dir>/
// amdqpd.sock, amdqp/activity.hpp: daemon_status). The directory must be
// root's (or this user's) and writable by its owner only, or amdqpctl does
// not ask; the daemon shows a caller other users' processes only when the
// caller is root or has CAP_SYS_ADMIN.
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
    // Queues below this are confined to confine_share of its CUs (0: none;
    // a daemon older than confinement reports neither).
    std::uint32_t confine_level = 0;
    double confine_share = 0;
    // Levels set to cu_demand "auto": the demand the daemon holds (a
    // share of the GPU, 0: none known yet), by level.
    std::map<std::uint32_t, double> auto_demand;
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
        no_file,  // not running: no socket (or nobody listens on it)
        running,  // it answered
        stale,    // (unused: kept for the JSON's "state" names)
        unknown,  // the answer, or asking, failed (see problem)
    };

    std::string file;  // the socket
    Liveness liveness = Liveness::no_file;
    std::optional<std::uint32_t> pid;
    // Why the status could not be had (what follows "status
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

// The socket in @runtime_dir.
std::string daemon_status_file(const std::string& runtime_dir);

// Asks the daemon listening in @runtime_dir. Never throws: problems end up
// in DaemonStatus::problem.
DaemonStatus read_daemon_status(const std::string& runtime_dir);

// The same for an answer that is already read (@file only names where).
DaemonStatus parse_daemon_status(const std::string& file, const std::string& text);

}  // namespace amdqpctl

#endif  // AMDQPCTL_DAEMON_STATUS_HPP
