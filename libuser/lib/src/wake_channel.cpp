// SPDX-License-Identifier: MIT
// The controller's end of the wake channel (amdqp/activity.hpp).
#include <fcntl.h>
#include <linux/futex.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <climits>
#include <cstring>
#include <ctime>

#include <amdqp/activity.hpp>

namespace amdqp::activity {

namespace {

[[noreturn]] void fail(const std::string& path, const char* what, int err) {
    throw Error(errc::system, "amdqp: wake channel " + path + ": " + what + ": " +
                                  std::strerror(err) + " (is the directory writable?)");
}

// Opens the file if it is ours and usable, -1 (errno set) otherwise.
int open_own(const std::string& path) {
    int fd = ::open(path.c_str(), O_RDWR | O_CLOEXEC | O_NOFOLLOW);
    if (fd < 0)
        return -1;
    struct stat st;
    if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_uid == geteuid())
        return fd;
    ::close(fd);
    errno = EEXIST;
    return -1;
}

}  // namespace

WakeChannel WakeChannel::create(const std::string& dir) {
    const std::string path = dir + "/" AMDQP_ACT_WAKE_NAME;
    int fd = open_own(path);
    if (fd < 0 && errno != ENOENT) {
        // Someone else's, a symlink (ELOOP), a fifo: never use it, replace it.
        if (::unlink(path.c_str()) < 0 && errno != ENOENT)
            fail(path, "cannot replace a file of another owner", errno);
    }
    if (fd < 0) {
        fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0666);
        if (fd < 0)
            fail(path, "create", errno);
    }
    // Every user's processes ring it: world-writable whatever the umask.
    struct stat st;
    if (fchmod(fd, 0666) < 0 || fstat(fd, &st) < 0 ||
        (st.st_size < AMDQP_ACT_PAGE_SIZE && ftruncate(fd, AMDQP_ACT_PAGE_SIZE) < 0)) {
        int err = errno;
        ::close(fd);
        fail(path, "set up", err);
    }
    void* map = mmap(nullptr, AMDQP_ACT_PAGE_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    int err = errno;
    ::close(fd);
    if (map == MAP_FAILED)
        fail(path, "mmap", err);
    return WakeChannel(path, static_cast<std::uint32_t*>(map));
}

WakeChannel::WakeChannel(WakeChannel&& other) noexcept
    : path_(std::move(other.path_)), word_(std::exchange(other.word_, nullptr)) {}

WakeChannel& WakeChannel::operator=(WakeChannel&& other) noexcept {
    if (this != &other) {
        if (word_)
            munmap(word_, AMDQP_ACT_PAGE_SIZE);
        path_ = std::move(other.path_);
        word_ = std::exchange(other.word_, nullptr);
    }
    return *this;
}

WakeChannel::~WakeChannel() {
    // The file stays: processes keep it mapped for the next controller.
    if (word_)
        munmap(word_, AMDQP_ACT_PAGE_SIZE);
}

std::uint32_t WakeChannel::value() const noexcept {
    return std::atomic_ref<std::uint32_t>(*word_).load(std::memory_order_acquire);
}

bool WakeChannel::wait(std::uint32_t seen, std::chrono::nanoseconds timeout) const noexcept {
    if (value() != seen)
        return true;
    if (timeout.count() <= 0)
        return false;
    struct timespec ts = {static_cast<time_t>(timeout.count() / 1'000'000'000),
                          static_cast<long>(timeout.count() % 1'000'000'000)};
    syscall(SYS_futex, word_, FUTEX_WAIT, seen, &ts, nullptr, 0);
    return value() != seen;
}

void WakeChannel::wake() noexcept {
    std::atomic_ref<std::uint32_t>(*word_).fetch_add(1, std::memory_order_release);
    syscall(SYS_futex, word_, FUTEX_WAKE, INT_MAX, nullptr, nullptr, 0);
}

}  // namespace amdqp::activity
