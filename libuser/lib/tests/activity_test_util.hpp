// SPDX-License-Identifier: MIT
//
// Helpers of the activity page tests: a temporary page directory and
// hand-made pages (valid ones for other pids, broken ones).
#ifndef AMDQP_TESTS_ACTIVITY_TEST_UTIL_HPP
#define AMDQP_TESTS_ACTIVITY_TEST_UTIL_HPP

#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <string>

#include <amdqp/activity.h>

namespace amdqp_test {

// A fresh directory, removed with its contents.
class TempDir {
  public:
    TempDir() {
        char tmpl[] = "/tmp/amdqp-act-test.XXXXXX";
        const char* dir = mkdtemp(tmpl);
        path_ = dir ? dir : "";
    }
    ~TempDir() {
        // Only its maker removes it, not a forked child that exits.
        if (getpid() != owner_)
            return;
        std::error_code ec;
        std::filesystem::remove_all(path_, ec);
    }
    TempDir(const TempDir&) = delete;
    TempDir& operator=(const TempDir&) = delete;
    const std::string& path() const { return path_; }
    std::string page(pid_t pid) const { return path_ + "/amdqp-act." + std::to_string(pid); }

  private:
    std::string path_;
    pid_t owner_ = getpid();
};

// A header as a writer of this version makes it.
inline amdqp_act_page valid_page(pid_t pid, std::uint64_t start_time) {
    amdqp_act_page p;
    std::memset(&p, 0, sizeof(p));
    p.hdr.magic = AMDQP_ACT_MAGIC;
    p.hdr.version = AMDQP_ACT_VERSION;
    p.hdr.version_minor = AMDQP_ACT_VERSION_MINOR;
    p.hdr.size = sizeof(amdqp_act_page);
    p.hdr.slot_size = sizeof(amdqp_act_slot);
    p.hdr.max_slots = AMDQP_ACT_MAX_SLOTS;
    p.hdr.pid = static_cast<std::uint32_t>(pid);
    p.hdr.start_time = start_time;
    p.hdr.priority = 7;
    return p;
}

// Writes @len bytes of @p to @path (mode 0600).
inline bool write_page(const std::string& path, const void* p, std::size_t len) {
    int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    if (fd < 0)
        return false;
    bool ok = ::write(fd, p, len) == static_cast<ssize_t>(len);
    ::close(fd);
    return ok;
}

// A pid that belonged to a process which has exited (and was reaped).
inline pid_t dead_pid() {
    pid_t pid = fork();
    if (pid == 0)
        _exit(0);
    int status;
    waitpid(pid, &status, 0);
    return pid;
}

// A page held by this process as a writer holds one (a memfd named
// amdqp-act), with the bytes given: hand-made pages, valid or hostile.
// @seal false leaves it unsealed (a hostile writer could).
class MemPage {
  public:
    MemPage() = default;
    MemPage(const void* p, std::size_t len, bool seal = true) { set(p, len, seal); }
    ~MemPage() { reset(); }
    MemPage(const MemPage&) = delete;
    MemPage& operator=(const MemPage&) = delete;
    bool set(const void* p, std::size_t len, bool seal = true) {
        reset();
        fd_ = memfd_create(AMDQP_ACT_MEMFD_NAME, MFD_CLOEXEC | MFD_ALLOW_SEALING);
        if (fd_ < 0 || ftruncate(fd_, static_cast<off_t>(len)) < 0 ||
            pwrite(fd_, p, len, 0) != static_cast<ssize_t>(len))
            return false;
        return !seal || fcntl(fd_, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW) == 0;
    }
    void reset() {
        if (fd_ >= 0)
            ::close(fd_);
        fd_ = -1;
    }
    int fd() const { return fd_; }
    std::string path() const {
        return "/proc/" + std::to_string(getpid()) + "/fd/" + std::to_string(fd_);
    }

  private:
    int fd_ = -1;
};

// A forked child of a test, killed and reaped when the test ends whatever
// fails first (a paused orphan holds ctest's output open until its
// timeout); reap() does it earlier. With wait_for() the child is not
// killed: the process it waits for (pid 1 of a namespace it made, say) is,
// and the child, having reaped it, exits on its own.
class Child {
  public:
    explicit Child(pid_t pid) : pid_(pid) {}
    ~Child() { reap(); }
    Child(const Child&) = delete;
    Child& operator=(const Child&) = delete;
    void wait_for(pid_t pid) { made_ = pid; }
    void reap() {
        if (pid_ <= 0)
            return;
        ::kill(made_ > 1 ? made_ : pid_, SIGKILL);
        ::waitpid(pid_, nullptr, 0);
        pid_ = 0;
    }

  private:
    pid_t pid_;
    pid_t made_ = 0;
};

}  // namespace amdqp_test

#endif  // AMDQP_TESTS_ACTIVITY_TEST_UTIL_HPP
