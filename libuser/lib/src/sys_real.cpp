// SPDX-License-Identifier: MIT
#include <fcntl.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <cerrno>

#include <amdqp/sys.hpp>

namespace amdqp {

Sys::~Sys() = default;

namespace {

class RealSys final : public Sys {
  public:
    int open(const char* path, int flags) override {
        int fd;
        do
            fd = ::open(path, flags);
        while (fd < 0 && errno == EINTR);
        return fd < 0 ? -errno : fd;
    }

    // Never retried: the fd is gone even when close reports EINTR.
    int close(int fd) override { return ::close(fd) < 0 ? -errno : 0; }

    // An ioctl that returns EINTR has not acted (the kernel's restart rule),
    // so retrying it is what SA_RESTART would have done.
    int ioctl(int fd, unsigned long request, void* arg) override {
        int ret;
        do
            ret = ::ioctl(fd, request, arg);
        while (ret < 0 && errno == EINTR);
        return ret < 0 ? -errno : ret;
    }

    ssize_t read(int fd, void* buf, std::size_t len) override {
        ssize_t n = ::read(fd, buf, len);
        return n < 0 ? -errno : n;
    }

    int poll(struct pollfd* fds, nfds_t nfds, int timeout_ms) override {
        int n = ::poll(fds, nfds, timeout_ms);
        return n < 0 ? -errno : n;
    }
};

}  // namespace

std::shared_ptr<Sys> real_sys() {
    static const std::shared_ptr<Sys> sys = std::make_shared<RealSys>();
    return sys;
}

}  // namespace amdqp
