// SPDX-License-Identifier: MIT
#include "process_facts.hpp"

#include <fnmatch.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <fstream>
#include <sstream>

#include <amdqp/amdqp.hpp>

namespace amdqp::daemon {

std::optional<ProcessFacts> read_process_facts(pid_t pid, const std::string& proc_root,
                                               const std::string& cgroup_root) {
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
            is >> f.uid >> f.euid;
            have_uid = true;
        } else if (line.starts_with("Gid:") || line.starts_with("Groups:")) {
            std::istringstream is(line.substr(line.find(':') + 1));
            // Gid: real, effective, saved, fs; Groups: the supplementary ones.
            for (std::uint32_t g; is >> g;)
                if (std::find(f.gids.begin(), f.gids.end(), g) == f.gids.end())
                    f.gids.push_back(g);
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
    if (!f.cgroup.empty()) {
        struct stat st;
        if (::stat((cgroup_root + f.cgroup).c_str(), &st) == 0 && S_ISDIR(st.st_mode))
            f.cgroup_id = st.st_ino;
        f.pod_uid = pod_uid_of_cgroup(f.cgroup);
    }
    return f;
}

namespace {

bool is_uid_char(char c) {
    return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || c == '-' || c == '_';
}

// A pod UID is 36 characters of hex and dashes (underscores in systemd
// unit names).
std::string pod_uid_in(const std::string& component, std::size_t from) {
    std::string uid;
    for (std::size_t i = from; i < component.size() && is_uid_char(component[i]); ++i)
        uid += component[i] == '_' ? '-' : component[i];
    if (uid.size() != 36 || std::count(uid.begin(), uid.end(), '-') != 4)
        return {};
    return uid;
}

}  // namespace

std::string pod_uid_of_cgroup(const std::string& cgroup) {
    // Only below a kubepods top level: a tenant may name its own cgroups
    // (systemd-run --user, a delegated subtree) "pod<uid>".
    // Read from inside a cgroup namespace (amdqpd in a pod), another
    // process's path is relative to the reader's: "/../../" up to the
    // common ancestor, then down. Then the first component below must be
    // one kubelet makes (a QoS level or a pod).
    std::istringstream is(cgroup);
    std::string comp;
    bool first = true;
    bool relative = false;
    while (std::getline(is, comp, '/')) {
        if (comp.empty())
            continue;
        if (first && comp == "..") {
            relative = true;
            continue;
        }
        if (first) {
            first = false;
            const bool root = comp == "kubepods" || comp == "kubepods.slice";
            const bool below = relative && (comp.starts_with("kubepods-") || comp == "burstable" ||
                                            comp == "besteffort" || comp.starts_with("pod"));
            if (!root && !below)
                return {};
            if (root || comp == "burstable" || comp == "besteffort")
                continue;
        }
        if (comp.ends_with(".slice")) {
            // kubepods-<qos>-pod<uid>.slice or kubepods-pod<uid>.slice
            const auto at = comp.rfind("-pod");
            if (at != std::string::npos && comp.starts_with("kubepods-")) {
                std::string uid = pod_uid_in(comp, at + 4);
                if (!uid.empty() && at + 4 + 36 + 6 == comp.size())
                    return uid;
            }
        } else if (comp.starts_with("pod")) {
            std::string uid = pod_uid_in(comp, 3);
            if (!uid.empty() && comp.size() == 3 + 36)
                return uid;
        }
    }
    return {};
}

namespace {

// Paths are matched with FNM_PATHNAME: '*' stays inside one component, so
// "/system.slice/*.service" does not also match a tenant's cgroup below it.
bool glob_path(const std::string& pattern, const std::string& text) {
    return pattern.empty() || fnmatch(pattern.c_str(), text.c_str(), FNM_PATHNAME) == 0;
}

bool matches(const Rule& r, const ProcessFacts& f) {
    if (r.uid && *r.uid != f.uid)
        return false;
    if (r.gid && std::find(f.gids.begin(), f.gids.end(), *r.gid) == f.gids.end())
        return false;
    if (!r.cgroup.empty() && (f.cgroup.empty() || !glob_path(r.cgroup, f.cgroup)))
        return false;
    if (!r.exe.empty() && (f.exe.empty() || !glob_path(r.exe, f.exe)))
        return false;
    if (r.needs_pod()) {
        if (!f.pod)
            return false;
        if (!r.k8s_priority_class.empty() && r.k8s_priority_class != f.pod->priority_class)
            return false;
        if (!r.k8s_namespace.empty() &&
            fnmatch(r.k8s_namespace.c_str(), f.pod->namespace_.c_str(), 0) != 0)
            return false;
        if (!r.k8s_label.empty()) {
            const auto eq = r.k8s_label.find('=');
            auto it = f.pod->labels.find(r.k8s_label.substr(0, eq));
            if (it == f.pod->labels.end() || it->second != r.k8s_label.substr(eq + 1))
                return false;
        }
    }
    return true;
}

}  // namespace

Verdict decide(const std::vector<Rule>& rules, GroupBy group_by, const ProcessFacts& f,
               const std::string& page_group, int default_ceiling) {
    Verdict v;
    v.ceiling = default_ceiling;
    for (std::size_t i = 0; i < rules.size(); ++i) {
        const Rule& r = rules[i];
        if (!matches(r, f))
            continue;
        v.rule_index = i;
        v.priority = r.priority;
        if (auto c = r.ceiling())
            v.ceiling = *c;
        if (r.group)
            v.group = *r.group;
        v.rule = r.where;
        break;
    }
    if (v.group.empty() && !page_group.empty()) {
        // The page is the tenant's: its group name joins only the tenant's
        // own processes (its pod, else its uid).
        v.group = (f.pod_uid.empty() ? "uid:" + std::to_string(f.uid) : "pod:" + f.pod_uid) + "/" +
                  page_group;
    }
    if (v.group.empty() && group_by == GroupBy::kCgroup && !f.cgroup.empty() && f.cgroup != "/")
        v.group = "cgroup:" + f.cgroup;
    return v;
}

int effective_priority(const Verdict& v, std::uint32_t kernel_priority) {
    if (v.priority)
        return *v.priority;
    const auto k = static_cast<int>(std::min<std::uint32_t>(kernel_priority, priority_max));
    return std::min(k, v.ceiling);
}

}  // namespace amdqp::daemon
