// SPDX-License-Identifier: MIT
//
// What a verb needs from its surroundings: where to print, how to reach
// /dev/amdqp, /proc and the activity pages, and how to wait for the user
// to stop it. main() fills it with the real system; tests with fakes.
#ifndef AMDQPCTL_CONTEXT_HPP
#define AMDQPCTL_CONTEXT_HPP

#include <sys/types.h>

#include <functional>
#include <memory>
#include <ostream>
#include <string>

#include <amdqp/amdqp.hpp>

namespace amdqpctl {

enum class WaitResult {
    stop,     // SIGINT, SIGTERM or SIGHUP arrived
    timeout,  // the time given passed
    ready,    // the fd given is readable
};

// Waits for a stop request (a signal in the real tool).
class Waiter {
  public:
    virtual ~Waiter() = default;
    // From now on a stop request is caught instead of ending the process:
    // called before holds are taken, so that none can leak.
    virtual void arm() = 0;
    // Waits up to @timeout_ms (-1: no limit) for a stop request, or for
    // @fd (if >= 0) to become readable.
    virtual WaitResult wait(int fd, int timeout_ms) = 0;
};

struct Context {
    Context(std::ostream& o, std::ostream& e, Waiter& w) : out(o), err(e), waiter(w) {}

    std::ostream& out;
    std::ostream& err;
    Waiter& waiter;
    // nullptr: the kernel's system calls.
    std::shared_ptr<amdqp::Sys> sys;
    std::string device_path = amdqp::default_device_path();
    std::string proc_root = "/proc";
    std::string sys_root = "/sys";
    // amdqpd's socket folder; empty: the library's default
    // ($AMDQP_RUNTIME_DIR, else /run/amdqpd).
    std::string runtime_dir;
    // Which processes' pages count (tests: their own only, since pages are
    // found in every process of the host); empty: all.
    std::function<bool(pid_t)> page_filter;
    // Folders searched for amdqpd ($PATH in the tool).
    std::string daemon_search_path;
};

}  // namespace amdqpctl

#endif  // AMDQPCTL_CONTEXT_HPP
