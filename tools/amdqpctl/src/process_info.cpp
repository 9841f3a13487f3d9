// SPDX-License-Identifier: MIT
#include "process_info.hpp"

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <fstream>
#include <system_error>

#include "exit_status.hpp"
#include "queue_ref.hpp"

namespace amdqpctl {

namespace fs = std::filesystem;

namespace {

std::string first_line(const std::string& path) {
    std::ifstream in(path);
    std::string line;
    std::getline(in, line);
    return line;
}

bool is_hex_id(std::string_view s) {
    return s.size() == 64 && std::all_of(s.begin(), s.end(), [](unsigned char c) {
               return std::isdigit(c) || (c >= 'a' && c <= 'f');
           });
}

}  // namespace

std::string container_of_cgroup(const std::string& cgroup) {
    // Any path component holding a 64-hex run: ".../docker-<id>.scope",
    // "/docker/<id>", ".../cri-containerd-<id>.scope", "crio-<id>", ...
    std::size_t start = 0;
    while (start <= cgroup.size()) {
        std::size_t end = cgroup.find('/', start);
        if (end == std::string::npos)
            end = cgroup.size();
        std::string_view part(cgroup.data() + start, end - start);
        for (std::size_t i = 0; i + 64 <= part.size(); i++) {
            const bool starts = i == 0 || !std::isxdigit(static_cast<unsigned char>(part[i - 1]));
            const bool ends =
                i + 64 == part.size() || !std::isxdigit(static_cast<unsigned char>(part[i + 64]));
            if (starts && ends && is_hex_id(part.substr(i, 64)))
                return std::string(part.substr(i, 12));
        }
        start = end + 1;
    }
    return {};
}

ProcessInfo read_process_info(const std::string& proc_root, std::uint32_t pid) {
    ProcessInfo info;
    const std::string dir = proc_root + "/" + std::to_string(pid);
    info.comm = first_line(dir + "/comm");
    std::ifstream in(dir + "/cgroup");
    std::string line, first;
    while (std::getline(in, line)) {
        // "hierarchy-id:controllers:path"; cgroup v2 is "0::path".
        auto c1 = line.find(':');
        auto c2 = c1 == std::string::npos ? c1 : line.find(':', c1 + 1);
        if (c2 == std::string::npos)
            continue;
        std::string path = line.substr(c2 + 1);
        if (line.compare(0, c2 + 1, "0::") == 0) {
            info.cgroup = path;
            break;
        }
        if (first.empty())
            first = path;
    }
    if (info.cgroup.empty())
        info.cgroup = first;
    info.container = container_of_cgroup(info.cgroup);
    return info;
}

std::string cgroup_folder(const std::string& sys_root, const std::string& path) {
    const std::string mount = sys_root + "/fs/cgroup";
    if (path.starts_with(mount + "/") || path == mount)
        return path;
    std::string rel = path;
    while (rel.starts_with("/"))
        rel.erase(0, 1);
    return rel.empty() ? mount : mount + "/" + rel;
}

std::vector<std::uint32_t> cgroup_pids(const std::string& folder) {
    std::error_code ec;
    if (!fs::exists(folder + "/cgroup.procs", ec))
        throw CtlError(exit_error, "no cgroup at " + folder +
                                       " (give a path under /sys/fs/cgroup, or the path "
                                       "/proc/PID/cgroup shows)");
    std::vector<std::uint32_t> pids;
    auto add_procs = [&](const fs::path& dir) {
        std::ifstream in(dir / "cgroup.procs");
        std::string line;
        while (std::getline(in, line))
            if (auto pid = parse_u32(line))
                pids.push_back(*pid);
    };
    add_procs(folder);
    for (auto it = fs::recursive_directory_iterator(
             folder, fs::directory_options::skip_permission_denied, ec);
         !ec && it != fs::recursive_directory_iterator(); it.increment(ec)) {
        if (it->is_directory(ec) && !it->is_symlink(ec))
            add_procs(it->path());
    }
    std::sort(pids.begin(), pids.end());
    pids.erase(std::unique(pids.begin(), pids.end()), pids.end());
    return pids;
}

}  // namespace amdqpctl
