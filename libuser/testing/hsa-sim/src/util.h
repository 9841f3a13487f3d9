// SPDX-License-Identifier: MIT
// Small helpers shared by the stand-in runtime: clocks, environment, fds.
#pragma once

#include <unistd.h>

#include <cstdint>
#include <utility>

namespace hsasim {

uint64_t now_ns();  // CLOCK_MONOTONIC, the clock the sim stamps completions with
void sleep_ns(uint64_t ns);

// Unsigned integer from the environment, or def when unset or malformed.
uint64_t env_u64(const char* name, uint64_t def);

// Debug lines on stderr, only with HSA_SIM_VERBOSE=1: a stand-in that talks
// by default would change the output of the programs it runs.
bool verbose();
[[gnu::format(printf, 1, 2)]] void debug(const char* fmt, ...);

class UniqueFd {
  public:
    UniqueFd() = default;
    explicit UniqueFd(int fd) : fd_(fd) {}
    UniqueFd(const UniqueFd&) = delete;
    UniqueFd& operator=(const UniqueFd&) = delete;
    UniqueFd(UniqueFd&& o) noexcept : fd_(std::exchange(o.fd_, -1)) {}
    UniqueFd& operator=(UniqueFd&& o) noexcept {
        reset(std::exchange(o.fd_, -1));
        return *this;
    }
    ~UniqueFd() { reset(); }

    int get() const { return fd_; }
    explicit operator bool() const { return fd_ >= 0; }
    void reset(int fd = -1) {
        if (fd_ >= 0)
            ::close(fd_);
        fd_ = fd;
    }

  private:
    int fd_ = -1;
};

// An mmap'd range, unmapped on destruction.
class Mapping {
  public:
    Mapping() = default;
    Mapping(void* addr, size_t len) : addr_(addr), len_(len) {}
    Mapping(const Mapping&) = delete;
    Mapping& operator=(const Mapping&) = delete;
    Mapping(Mapping&& o) noexcept
        : addr_(std::exchange(o.addr_, nullptr)), len_(std::exchange(o.len_, 0)) {}
    Mapping& operator=(Mapping&& o) noexcept;
    ~Mapping() { reset(); }

    void* get() const { return addr_; }
    size_t size() const { return len_; }
    void reset();
    // Gives the range up without unmapping it (it was mapped over).
    void release() {
        addr_ = nullptr;
        len_ = 0;
    }

  private:
    void* addr_ = nullptr;
    size_t len_ = 0;
};

}  // namespace hsasim
