// SPDX-License-Identifier: MIT
//
// What the activity page's writer and readers learn about a process from
// /proc: its start time (tells a reused pid apart) and whether it still maps
// a given file (tells an exec'd image, which lost its mappings, apart).
#ifndef AMDQP_SRC_ACTIVITY_PROC_HPP
#define AMDQP_SRC_ACTIVITY_PROC_HPP

#include <sys/types.h>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace amdqp::detail {

// Field 22 of /proc/PID/stat (clock ticks after boot); nullopt when the
// process is gone or the file cannot be parsed. @pid 0: this process.
std::optional<std::uint64_t> proc_start_time(pid_t pid);

// Parses the text of a /proc/PID/stat file.
std::optional<std::uint64_t> parse_start_time(std::string_view stat);

// Whether @ns_pid is one of PID's pids in the pid namespaces it is in (the
// NSpid line of /proc/PID/status: a process in a container writes the pid
// it sees, its innermost one, into its page). @pid 0: this process.
bool proc_has_ns_pid(pid_t pid, std::uint32_t ns_pid);

// Whether the text of a /proc/PID/status file lists @ns_pid on NSpid.
bool status_text_has_ns_pid(std::string_view status, std::uint32_t ns_pid);

// Whether /proc/PID/maps has a mapping of the file (@dev, @ino); nullopt
// when the maps cannot be read (process gone, no ptrace read access).
// @pid 0: this process.
std::optional<bool> proc_maps_file(pid_t pid, dev_t dev, ino_t ino);

// Whether the text of a maps file has a mapping of (@dev, @ino).
bool maps_text_has_file(std::string_view maps, dev_t dev, ino_t ino);

// Whole contents of a small file (/proc files report size 0); nullopt on
// error, errno kept.
std::optional<std::string> read_small_file(const std::string& path);

// The numbers N of PID's open files whose /proc/PID/fd/N link names an
// activity page (AMDQP_ACT_MEMFD_LINK); empty when the process is gone or
// its fd directory cannot be read (another user's process). @pid 0: this
// process.
std::vector<int> page_fds(pid_t pid);

// Why @fd cannot be a page (a positive errno-like code and a reason), or 0:
// a regular file with F_SEAL_SHRINK and F_SEAL_GROW set whose size is at
// least a header and at most @max_bytes. @size gets the size.
int check_page_fd(int fd, std::size_t max_bytes, std::size_t* size, const char** why);

// Maps @len bytes of @fd shared at an address aligned to @len (a power of
// two), so that the page a slot lies in is found by masking its address.
// nullptr (errno set) on failure.
void* map_aligned(int fd, std::size_t len, int prot);

// CLOCK_MONOTONIC in ns.
std::uint64_t monotonic_ns() noexcept;

}  // namespace amdqp::detail

#endif  // AMDQP_SRC_ACTIVITY_PROC_HPP
