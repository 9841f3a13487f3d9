// SPDX-License-Identifier: MIT
//
// The system calls libamdqp makes, behind an interface, so that tests (and
// tools' tests) can swap /dev/amdqp for an in-memory model. Product code
// uses real_sys().
#ifndef AMDQP_SYS_HPP
#define AMDQP_SYS_HPP

#include <poll.h>
#include <sys/types.h>

#include <cstddef>
#include <memory>

#include <amdqp/export.h>

namespace amdqp {

// Every call returns its result, or -errno on failure (never sets errno).
class AMDQP_API Sys {
  public:
    virtual ~Sys();
    virtual int open(const char* path, int flags) = 0;
    virtual int close(int fd) = 0;
    virtual int ioctl(int fd, unsigned long request, void* arg) = 0;
    virtual ssize_t read(int fd, void* buf, std::size_t len) = 0;
    virtual int poll(struct pollfd* fds, nfds_t nfds, int timeout_ms) = 0;
};

// The kernel's system calls (retrying EINTR where that is safe).
AMDQP_API std::shared_ptr<Sys> real_sys();

}  // namespace amdqp

#endif  // AMDQP_SYS_HPP
