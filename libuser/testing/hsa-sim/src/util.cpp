// SPDX-License-Identifier: MIT
#include "util.h"

#include <sys/mman.h>

#include <cerrno>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <ctime>

namespace hsasim {

uint64_t now_ns() {
    timespec ts{};
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return static_cast<uint64_t>(ts.tv_sec) * 1000000000ull + static_cast<uint64_t>(ts.tv_nsec);
}

void sleep_ns(uint64_t ns) {
    timespec ts{static_cast<time_t>(ns / 1000000000ull), static_cast<long>(ns % 1000000000ull)};
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR) {
    }
}

uint64_t env_u64(const char* name, uint64_t def) {
    const char* s = getenv(name);
    if (!s || !*s)
        return def;
    char* end = nullptr;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 10);
    if (errno || *end)
        return def;
    return v;
}

bool verbose() {
    static const bool on = env_u64("HSA_SIM_VERBOSE", 0) != 0;
    return on;
}

void debug(const char* fmt, ...) {
    if (!verbose())
        return;
    va_list ap;
    va_start(ap, fmt);
    fputs("hsa-sim: ", stderr);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
}

Mapping& Mapping::operator=(Mapping&& o) noexcept {
    if (this != &o) {
        reset();
        addr_ = std::exchange(o.addr_, nullptr);
        len_ = std::exchange(o.len_, 0);
    }
    return *this;
}

void Mapping::reset() {
    if (addr_)
        munmap(addr_, len_);
    addr_ = nullptr;
    len_ = 0;
}

}  // namespace hsasim
