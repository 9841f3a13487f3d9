// SPDX-License-Identifier: MIT
#include "activity_proc.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <time.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <cstdlib>

#include <amdqp/activity.h>

namespace amdqp::detail {

namespace {

std::string proc_path(pid_t pid, const char* leaf) {
    return pid == 0 ? std::string("/proc/self/") + leaf
                    : "/proc/" + std::to_string(pid) + "/" + leaf;
}

// Next space-separated field of @s from @pos; empty at the end.
std::string_view next_field(std::string_view s, std::size_t& pos) {
    while (pos < s.size() && s[pos] == ' ')
        pos++;
    std::size_t start = pos;
    while (pos < s.size() && s[pos] != ' ')
        pos++;
    return s.substr(start, pos - start);
}

template <typename T>
bool parse_number(std::string_view s, T& out, int base = 10) {
    if (s.empty())
        return false;
    auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), out, base);
    return ec == std::errc() && end == s.data() + s.size();
}

}  // namespace

std::optional<std::string> read_small_file(const std::string& path) {
    int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return std::nullopt;
    std::string text;
    char buf[4096];
    for (;;) {
        ssize_t n = ::read(fd, buf, sizeof(buf));
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0) {
            int err = errno;
            ::close(fd);
            errno = err;
            return std::nullopt;
        }
        if (n == 0)
            break;
        text.append(buf, static_cast<std::size_t>(n));
    }
    ::close(fd);
    return text;
}

std::optional<std::uint64_t> parse_start_time(std::string_view stat) {
    // "pid (comm) state ppid ...": comm may hold spaces and parentheses,
    // so fields are counted from the last ')'; starttime is field 22.
    std::size_t close = stat.rfind(')');
    if (close == std::string_view::npos)
        return std::nullopt;
    std::size_t pos = close + 1;
    std::string_view field;
    for (int n = 3; n <= 22; n++) {
        field = next_field(stat, pos);
        if (field.empty())
            return std::nullopt;
    }
    std::uint64_t value;
    if (!parse_number(field, value))
        return std::nullopt;
    return value;
}

bool status_text_has_ns_pid(std::string_view status, std::uint32_t ns_pid) {
    constexpr std::string_view key = "NSpid:";
    while (!status.empty()) {
        const std::size_t eol = std::min(status.find('\n'), status.size());
        std::string_view line = status.substr(0, eol);
        status.remove_prefix(std::min(eol + 1, status.size()));
        if (!line.starts_with(key))
            continue;
        line.remove_prefix(key.size());
        while (!line.empty()) {
            const std::size_t b = line.find_first_not_of(" \t");
            if (b == std::string_view::npos)
                break;
            line.remove_prefix(b);
            const std::size_t e = std::min(line.find_first_of(" \t"), line.size());
            std::uint64_t v = 0;
            if (parse_number(line.substr(0, e), v) && v == ns_pid)
                return true;
            line.remove_prefix(e);
        }
        return false;
    }
    return false;
}

bool proc_has_ns_pid(pid_t pid, std::uint32_t ns_pid) {
    auto text = read_small_file(proc_path(pid, "status"));
    return text && status_text_has_ns_pid(*text, ns_pid);
}

std::optional<std::uint64_t> proc_start_time(pid_t pid) {
    auto text = read_small_file(proc_path(pid, "stat"));
    if (!text)
        return std::nullopt;
    return parse_start_time(*text);
}

bool maps_text_has_file(std::string_view maps, dev_t dev, ino_t ino) {
    std::size_t line_start = 0;
    while (line_start < maps.size()) {
        std::size_t line_end = maps.find('\n', line_start);
        if (line_end == std::string_view::npos)
            line_end = maps.size();
        std::string_view line = maps.substr(line_start, line_end - line_start);
        line_start = line_end + 1;

        // address perms offset dev inode [path]
        std::size_t pos = 0;
        next_field(line, pos);
        next_field(line, pos);
        next_field(line, pos);
        std::string_view dev_field = next_field(line, pos);
        std::string_view ino_field = next_field(line, pos);
        std::size_t colon = dev_field.find(':');
        if (colon == std::string_view::npos)
            continue;
        unsigned int maj, min;
        std::uint64_t inode;
        if (!parse_number(dev_field.substr(0, colon), maj, 16) ||
            !parse_number(dev_field.substr(colon + 1), min, 16) || !parse_number(ino_field, inode))
            continue;
        if (inode == static_cast<std::uint64_t>(ino) && maj == major(dev) && min == minor(dev))
            return true;
    }
    return false;
}

std::optional<bool> proc_maps_file(pid_t pid, dev_t dev, ino_t ino) {
    auto text = read_small_file(proc_path(pid, "maps"));
    if (!text)
        return std::nullopt;
    return maps_text_has_file(*text, dev, ino);
}

std::vector<int> page_fds(pid_t pid) {
    std::vector<int> out;
    const std::string dir = proc_path(pid, "fd");
    DIR* d = opendir(dir.c_str());
    if (!d)
        return out;
    constexpr std::string_view want = AMDQP_ACT_MEMFD_LINK;
    char link[sizeof(AMDQP_ACT_MEMFD_LINK) + 1];
    while (struct dirent* e = readdir(d)) {
        int n = 0;
        std::string_view name = e->d_name;
        if (!parse_number(name, n) || n < 0)
            continue;
        ssize_t len = readlinkat(dirfd(d), e->d_name, link, sizeof(link));
        if (len == static_cast<ssize_t>(want.size()) &&
            std::string_view(link, static_cast<std::size_t>(len)) == want)
            out.push_back(n);
    }
    closedir(d);
    return out;
}

int check_page_fd(int fd, std::size_t max_bytes, std::size_t* size, const char** why) {
    struct stat st;
    if (fstat(fd, &st) < 0) {
        *why = "fstat";
        return errno;
    }
    if (!S_ISREG(st.st_mode)) {
        *why = "not a regular file";
        return EINVAL;
    }
    // Sealed against shrinking, a mapping of it can never fault (SIGBUS);
    // sealed against growing, its size is the one checked here for good.
    int seals = fcntl(fd, F_GET_SEALS);
    if (seals < 0 || (seals & (F_SEAL_SHRINK | F_SEAL_GROW)) != (F_SEAL_SHRINK | F_SEAL_GROW)) {
        *why = "not sealed against shrinking and growing";
        return EPERM;
    }
    if (st.st_size < static_cast<off_t>(sizeof(amdqp_act_header)) ||
        static_cast<std::uint64_t>(st.st_size) > max_bytes) {
        *why = "size out of bounds";
        return EMSGSIZE;
    }
    *size = static_cast<std::size_t>(st.st_size);
    return 0;
}

void* map_aligned(int fd, std::size_t len, int prot) {
    // Reserve twice the length, then put the file at the aligned address
    // inside and give back the rest.
    void* area =
        mmap(nullptr, 2 * len, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (area == MAP_FAILED)
        return nullptr;
    const auto start = reinterpret_cast<std::uintptr_t>(area);
    const std::uintptr_t aligned = (start + len - 1) & ~(std::uintptr_t{len} - 1);
    void* p = mmap(reinterpret_cast<void*>(aligned), len, prot, MAP_SHARED | MAP_FIXED, fd, 0);
    if (p == MAP_FAILED) {
        int err = errno;
        munmap(area, 2 * len);
        errno = err;
        return nullptr;
    }
    if (aligned > start)
        munmap(area, aligned - start);
    const std::uintptr_t end = start + 2 * len;
    if (aligned + len < end)
        munmap(reinterpret_cast<void*>(aligned + len), end - (aligned + len));
    return p;
}

std::uint64_t monotonic_ns() noexcept {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return static_cast<std::uint64_t>(ts.tv_sec) * 1000000000u +
           static_cast<std::uint64_t>(ts.tv_nsec);
}

}  // namespace amdqp::detail
