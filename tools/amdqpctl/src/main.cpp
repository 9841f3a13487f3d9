// SPDX-License-Identifier: MIT
//
// amdqpctl: the command-line tool. Everything but the real system's
// plumbing (signals, paths of this installation) is in the core library.
#include <poll.h>
#include <signal.h>
#include <sys/signalfd.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <filesystem>
#include <iostream>

#include "cli.hpp"
#include "context.hpp"

namespace {

// SIGINT, SIGTERM and SIGHUP end a hold or a watch: blocked and read from
// a signalfd, so that they end it cleanly instead of killing the process.
class SignalWaiter : public amdqpctl::Waiter {
  public:
    SignalWaiter() {
        sigemptyset(&stop_);
        sigaddset(&stop_, SIGINT);
        sigaddset(&stop_, SIGTERM);
        sigaddset(&stop_, SIGHUP);
    }
    // The signals stay blocked: amdqpctl is exiting, and unblocking would
    // let a second Ctrl-C kill it with a status other than the verb's.
    ~SignalWaiter() override {
        if (fd_ >= 0)
            ::close(fd_);
    }
    SignalWaiter(const SignalWaiter&) = delete;
    SignalWaiter& operator=(const SignalWaiter&) = delete;

    void arm() override {
        if (fd_ >= 0)
            return;
        sigprocmask(SIG_BLOCK, &stop_, nullptr);
        fd_ = signalfd(-1, &stop_, SFD_CLOEXEC);
    }

    amdqpctl::WaitResult wait(int fd, int timeout_ms) override {
        arm();
        struct pollfd fds[2] = {{fd_, POLLIN, 0}, {fd, POLLIN, 0}};
        const nfds_t n = fd >= 0 ? 2 : 1;
        for (;;) {
            int r = ::poll(fds, n, timeout_ms);
            if (r < 0 && errno == EINTR)
                continue;
            if (r <= 0)
                return amdqpctl::WaitResult::timeout;
            if (fds[0].revents) {
                // Consumed, or it would stay pending and strike later.
                struct signalfd_siginfo info;
                [[maybe_unused]] ssize_t n = ::read(fd_, &info, sizeof(info));
                return amdqpctl::WaitResult::stop;
            }
            return amdqpctl::WaitResult::ready;
        }
    }

  private:
    sigset_t stop_;
    int fd_ = -1;
};

std::string exe_dir() {
    std::error_code ec;
    auto exe = std::filesystem::read_symlink("/proc/self/exe", ec);
    return ec ? std::string() : exe.parent_path().string();
}

}  // namespace

int main(int argc, char** argv) {
    SignalWaiter waiter;
    amdqpctl::Context ctx{std::cout, std::cerr, waiter};
    // amdqpd installs into sbin, which a user's $PATH often lacks.
    if (const char* path = std::getenv("PATH"))
        ctx.daemon_search_path = std::string(path) + ":";
    ctx.daemon_search_path += "/usr/local/sbin:/usr/sbin:/sbin";

    amdqpctl::PreloadSearch where;
    where.exe_dir = exe_dir();
    where.build_dir = AMDQPCTL_BUILD_DIR;
    where.build_preload = AMDQPCTL_BUILD_PRELOAD;
    where.libdir_rel = AMDQPCTL_LIBDIR;
    where.install_preload = AMDQPCTL_INSTALL_PRELOAD;

    std::vector<std::string> args(argv, argv + argc);
    return amdqpctl::run_cli(args, ctx, where, AMDQPCTL_VERSION);
}
