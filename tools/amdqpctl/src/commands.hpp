// SPDX-License-Identifier: MIT
//
// The verbs. Each returns the exit status, prints its results on
// ctx.out and one line per problem on ctx.err, and throws CtlError (or
// amdqp::Error) for what ends it early; run_cli() turns those into a line
// and a status.
#ifndef AMDQPCTL_COMMANDS_HPP
#define AMDQPCTL_COMMANDS_HPP

#include <optional>
#include <string>
#include <vector>

#include "context.hpp"

namespace amdqpctl {

struct ListOptions {
    bool json = false;
    std::vector<std::string> pids;  // filter; empty: all
    std::vector<std::string> gpus;  // filter; empty: all
};
int cmd_list(Context& ctx, const ListOptions& opt);

struct PriorityOptions {
    std::vector<std::string> args;  // [PID] LEVEL
    std::vector<std::string> queues;
    std::string cgroup;
    bool json = false;
};
int cmd_priority(Context& ctx, const PriorityOptions& opt);

struct HoldOptions {
    std::vector<std::string> pids;
    std::vector<std::string> queues;
    std::string below;  // empty: not given
    std::vector<std::string> gpus;
    std::optional<double> for_seconds;  // suspend only
    double ack_timeout = 5.0;           // cooperative acknowledgement, seconds
    double lease = 2.0;                 // suspend only: cooperative lease, seconds
    unsigned grace_us = 0;
    bool json = false;
};
int cmd_suspend(Context& ctx, const HoldOptions& opt);
int cmd_resume(Context& ctx, const HoldOptions& opt);

struct ConfineOptions {
    std::string below;                 // LEVEL, required
    std::vector<std::string> gpus;     // empty: every GPU that can be confined
    std::optional<unsigned> cus;       // keep the first N CUs of every XCC
    std::optional<unsigned> first_cu;  // with --cus: start at this CU (default 0)
    std::vector<std::string> masks;    // or: the mask words, XCC 0's first
    std::optional<double> for_seconds;
    unsigned grace_us = 0;
    bool json = false;
};
int cmd_confine(Context& ctx, const ConfineOptions& opt);

struct WatchOptions {
    bool json = false;
    std::vector<std::string> types;  // event type names; empty: all
    std::optional<unsigned long> count;
    std::optional<double> for_seconds;
};
int cmd_watch(Context& ctx, const WatchOptions& opt);

struct StatsOptions {
    bool json = false;
};
int cmd_stats(Context& ctx, const StatsOptions& opt);

struct StatusOptions {
    bool json = false;
};
int cmd_status(Context& ctx, const StatusOptions& opt);

struct CeilingOptions {
    std::string action;                // set, clear, list, flush
    std::optional<std::string> level;  // set only
    std::vector<std::string> uids;
    std::vector<std::string> gids;
    std::vector<std::string> cgroups;
    bool json = false;
};
int cmd_ceiling(Context& ctx, const CeilingOptions& opt);

}  // namespace amdqpctl

#endif  // AMDQPCTL_COMMANDS_HPP
