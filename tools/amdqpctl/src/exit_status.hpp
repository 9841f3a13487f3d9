// SPDX-License-Identifier: MIT
//
// amdqpctl's exit statuses (documented in amdqpctl.1) and the errors that
// carry one.
#ifndef AMDQPCTL_EXIT_STATUS_HPP
#define AMDQPCTL_EXIT_STATUS_HPP

#include <stdexcept>
#include <string>

#include <amdqp/amdqp.hpp>

namespace amdqpctl {

inline constexpr int exit_ok = 0;
inline constexpr int exit_error = 1;
inline constexpr int exit_usage = 2;
inline constexpr int exit_unavailable = 3;  // no /dev/amdqp (module not loaded)
inline constexpr int exit_permission = 4;
// `run`, as env(1) and the shells report a command that cannot start.
inline constexpr int exit_cannot_execute = 126;
inline constexpr int exit_not_found = 127;

int exit_status_for(amdqp::errc code) noexcept;

// A failure with its message (one line, no trailing newline) and status.
class CtlError : public std::runtime_error {
  public:
    CtlError(int status, const std::string& message)
        : std::runtime_error(message), status_(status) {}
    int status() const noexcept { return status_; }

  private:
    int status_;
};

// Bad command line input: exit status 2.
class UsageError : public CtlError {
  public:
    explicit UsageError(const std::string& message) : CtlError(exit_usage, message) {}
};

}  // namespace amdqpctl

#endif  // AMDQPCTL_EXIT_STATUS_HPP
