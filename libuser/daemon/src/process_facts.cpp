// SPDX-License-Identifier: MIT
#include "process_facts.hpp"

#include <fnmatch.h>
#include <unistd.h>

#include <fstream>
#include <sstream>

namespace amdqp::daemon {

std::optional<ProcessFacts> read_process_facts(pid_t pid, const std::string& proc_root) {
    const std::string dir = proc_root + "/" + std::to_string(pid);
    ProcessFacts f;
    f.pid = pid;
    std::ifstream status(dir + "/status");
    if (!status)
        return std::nullopt;
    bool have_uid = false;
    for (std::string line; std::getline(status, line);) {
        if (line.starts_with("Uid:")) {
            std::istringstream is(line.substr(4));
            is >> f.uid;  // real uid, as ps shows
            have_uid = true;
        } else if (line.starts_with("Name:")) {
            std::istringstream is(line.substr(5));
            is >> f.comm;
        }
    }
    if (!have_uid)
        return std::nullopt;
    char buf[4096];
    ssize_t n = ::readlink((dir + "/exe").c_str(), buf, sizeof(buf) - 1);
    if (n > 0)
        f.exe.assign(buf, static_cast<std::size_t>(n));
    std::ifstream cg(dir + "/cgroup");
    for (std::string line; std::getline(cg, line);) {
        if (line.starts_with("0::")) {
            f.cgroup = line.substr(3);
            break;
        }
    }
    return f;
}

namespace {

bool glob(const std::string& pattern, const std::string& text) {
    return pattern.empty() || fnmatch(pattern.c_str(), text.c_str(), 0) == 0;
}

bool matches(const Rule& r, const ProcessFacts& f) {
    if (r.uid && *r.uid != f.uid)
        return false;
    if (!r.cgroup.empty() && (f.cgroup.empty() || !glob(r.cgroup, f.cgroup)))
        return false;
    if (!r.exe.empty() && (f.exe.empty() || !glob(r.exe, f.exe)))
        return false;
    return true;
}

}  // namespace

Verdict decide(const std::vector<Rule>& rules, GroupBy group_by, const ProcessFacts& f,
               const std::string& page_group) {
    Verdict v;
    for (const Rule& r : rules) {
        if (!matches(r, f))
            continue;
        v.priority = r.priority;
        if (r.group)
            v.group = *r.group;
        v.rule = r.where;
        break;
    }
    if (v.group.empty() && !page_group.empty())
        v.group = page_group;
    if (v.group.empty() && group_by == GroupBy::kCgroup && !f.cgroup.empty() && f.cgroup != "/")
        v.group = "cgroup:" + f.cgroup;
    return v;
}

}  // namespace amdqp::daemon
