// SPDX-License-Identifier: MIT
#include "activity_proc.hpp"

#include <fcntl.h>
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

std::string activity_dir() {
    const char* dir = std::getenv("AMDQP_RUNTIME_DIR");
    if (dir && *dir)
        return dir;
    return AMDQP_ACT_DIR;
}

std::uint64_t monotonic_ns() noexcept {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return static_cast<std::uint64_t>(ts.tv_sec) * 1000000000u +
           static_cast<std::uint64_t>(ts.tv_nsec);
}

}  // namespace amdqp::detail
