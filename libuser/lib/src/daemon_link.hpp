// SPDX-License-Identifier: MIT
//
// The tagged process's connection to amdqpd (amdqp/activity.h,
// AMDQP_DAEMON_*): the page is registered over it once, and idle->busy
// transitions are announced on it as single bytes. A daemon that is not
// there (or went away) is looked for again at most once a second, so the
// doorbell path never pays a connect(2) per store; a daemon that started
// later finds the page by its /proc scan and the next wake connects.
#ifndef AMDQP_SRC_DAEMON_LINK_HPP
#define AMDQP_SRC_DAEMON_LINK_HPP

namespace amdqp::detail {

// Registers page fd @page_fd with the daemon now (one try, no waiting on
// the daemon beyond the connect). Keeps the connection for wakes.
void register_page(int page_fd) noexcept;

// Wakes the daemon (one non-blocking send on the connection; connects and
// registers this process's page first when there is none and the last try
// is a second old). Never blocks, never throws.
void wake_daemon() noexcept;

}  // namespace amdqp::detail

#endif  // AMDQP_SRC_DAEMON_LINK_HPP
