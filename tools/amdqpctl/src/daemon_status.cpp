// SPDX-License-Identifier: MIT
#include "daemon_status.hpp"

#include <amdqp/activity.hpp>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstring>
#include <fstream>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <utility>

namespace amdqpctl {

namespace {

using json = nlohmann::json;

// The daemon writes a few kilobytes per tagged process: anything this big
// is not its file, and reading it whole could exhaust memory.
constexpr std::size_t kMaxFileBytes = 16u << 20;

class Malformed : public std::runtime_error {
  public:
    using std::runtime_error::runtime_error;
};

class UniqueFd {
  public:
    explicit UniqueFd(int fd) : fd_(fd) {}
    ~UniqueFd() {
        if (fd_ >= 0)
            ::close(fd_);
    }
    UniqueFd(const UniqueFd&) = delete;
    UniqueFd& operator=(const UniqueFd&) = delete;
    int get() const { return fd_; }

  private:
    int fd_;
};

// A value as the message quotes it: short, whatever the file holds.
std::string quoted(const json& v) {
    std::string s = v.dump();
    return s.size() > 40 ? s.substr(0, 37) + "..." : s;
}

const json& member(const json& obj, const std::string& where, const char* key) {
    const std::string name = where.empty() ? key : where + "." + key;
    if (!obj.is_object())
        throw Malformed((where.empty() ? "the file" : where) + ": expected an object, got " +
                        quoted(obj));
    auto it = obj.find(key);
    if (it == obj.end())
        throw Malformed(name + ": missing");
    return *it;
}

std::uint64_t as_u64(const json& v, const std::string& name) {
    if (!v.is_number_unsigned())
        throw Malformed(name + ": expected a non-negative integer, got " + quoted(v));
    return v.get<std::uint64_t>();
}

std::uint32_t as_u32(const json& v, const std::string& name) {
    const std::uint64_t n = as_u64(v, name);
    if (n > UINT32_MAX)
        throw Malformed(name + ": " + std::to_string(n) + " is out of range");
    return static_cast<std::uint32_t>(n);
}

std::vector<std::uint32_t> as_u32_list(const json& v, const std::string& name) {
    if (!v.is_array())
        throw Malformed(name + ": expected an array, got " + quoted(v));
    std::vector<std::uint32_t> out;
    for (std::size_t i = 0; i < v.size(); i++)
        out.push_back(as_u32(v[i], name + "[" + std::to_string(i) + "]"));
    return out;
}

// A share of a GPU: a number in [0, 1].
double as_share(const json& v, const std::string& name) {
    if (!v.is_number() || v.get<double>() < 0 || v.get<double>() > 1)
        throw Malformed(name + ": expected a share in [0, 1], got " + quoted(v));
    return v.get<double>();
}

// A priority level written as an object key ("12").
std::uint32_t parse_level_key(const std::string& key, const std::string& name) {
    std::uint32_t n = 0;
    const auto* end = key.data() + key.size();
    const auto [p, ec] = std::from_chars(key.data(), end, n);
    if (key.empty() || ec != std::errc() || p != end || n > 15)
        throw Malformed(name + ": the key is not a priority level 0-15");
    return n;
}

const json& as_array(const json& v, const std::string& name) {
    if (!v.is_array())
        throw Malformed(name + ": expected an array, got " + quoted(v));
    return v;
}

std::string indexed(const std::string& name, std::size_t i) {
    return name + "[" + std::to_string(i) + "]";
}

// The report of a running daemon, everything but the pid.
void read_report(const json& j, DaemonStatus& st) {
    const json& order = member(j, "", "order");
    if (!order.is_string() || order.get<std::string>().empty())
        throw Malformed("order: expected a policy order name, got " + quoted(order));
    st.order = order.get<std::string>();

    const json& open = member(j, "", "device_open");
    if (!open.is_boolean())
        throw Malformed("device_open: expected true or false, got " + quoted(open));
    st.device_open = open.get<bool>();
    st.processes = as_u64(member(j, "", "processes"), "processes");

    const json& stats = member(j, "", "stats");
    if (!stats.is_object())
        throw Malformed("stats: expected an object, got " + quoted(stats));
    for (const auto& [name, value] : stats.items())
        st.stats[name] = as_u64(value, "stats." + name);

    const json& gpus = as_array(member(j, "", "gpus"), "gpus");
    for (std::size_t i = 0; i < gpus.size(); i++) {
        const std::string where = indexed("gpus", i);
        DaemonGpu g;
        g.gpu = as_u32(member(gpus[i], where, "gpu"), where + ".gpu");
        g.suspend_level = as_u32(member(gpus[i], where, "suspend_level"), where + ".suspend_level");
        // Confinement came later: a daemon without it omits these keys.
        if (gpus[i].contains("confine_level")) {
            g.confine_level =
                as_u32(member(gpus[i], where, "confine_level"), where + ".confine_level");
            g.confine_share =
                as_share(member(gpus[i], where, "confine_share"), where + ".confine_share");
        }
        if (gpus[i].contains("auto_demand")) {
            const json& demand = member(gpus[i], where, "auto_demand");
            if (!demand.is_object())
                throw Malformed(where + ".auto_demand: expected an object, got " + quoted(demand));
            for (const auto& [level, share] : demand.items()) {
                const std::string name = where + ".auto_demand." + level;
                const auto n = parse_level_key(level, name);
                g.auto_demand[n] = as_share(share, name);
            }
        }
        st.gpus.push_back(g);
    }
    std::sort(st.gpus.begin(), st.gpus.end(),
              [](const DaemonGpu& a, const DaemonGpu& b) { return a.gpu < b.gpu; });

    const json& groups = member(j, "", "groups");
    if (!groups.is_object())
        throw Malformed("groups: expected an object, got " + quoted(groups));
    for (const auto& [name, value] : groups.items()) {
        const std::string where = "groups." + name;
        DaemonGroup g;
        g.priority = as_u32(member(value, where, "priority"), where + ".priority");
        g.gpus = as_u32_list(member(value, where, "gpus"), where + ".gpus");
        g.pids = as_u32_list(member(value, where, "pids"), where + ".pids");
        st.groups[name] = std::move(g);
    }

    const json& tagged = as_array(member(j, "", "tagged"), "tagged");
    for (std::size_t i = 0; i < tagged.size(); i++) {
        const std::string where = indexed("tagged", i);
        const json& queues = as_array(member(tagged[i], where, "queues"), where + ".queues");
        for (std::size_t k = 0; k < queues.size(); k++) {
            const std::string qwhere = indexed(where + ".queues", k);
            const std::uint32_t gpu = as_u32(member(queues[k], qwhere, "gpu"), qwhere + ".gpu");
            const json& active = member(queues[k], qwhere, "active");
            if (!active.is_boolean())
                throw Malformed(qwhere + ".active: expected true or false, got " + quoted(active));
            auto g = std::find_if(st.gpus.begin(), st.gpus.end(),
                                  [&](const DaemonGpu& d) { return d.gpu == gpu; });
            // The daemon lists every GPU its queues are on; a queue on
            // another has no suspend level to show next to it.
            if (g == st.gpus.end())
                continue;
            g->queues++;
            g->active_queues += active.get<bool>();
        }
    }
}

DaemonStatus unreadable(const std::string& file, std::string why) {
    DaemonStatus st;
    st.file = file;
    st.liveness = DaemonStatus::Liveness::unknown;
    st.problem = std::move(why);
    return st;
}

}  // namespace

std::string daemon_status_file(const std::string& runtime_dir) {
    return amdqp::activity::socket_path(runtime_dir);
}

DaemonStatus parse_daemon_status(const std::string& file, const std::string& text) {
    json j;
    try {
        j = json::parse(text);
    } catch (const json::parse_error& e) {
        // nlohmann's "[json.exception.parse_error.101] " says nothing to a user.
        std::string why = e.what();
        if (auto end = why.find("] "); why.starts_with("[json.exception") && end != why.npos)
            why.erase(0, end + 2);
        return unreadable(file, "not JSON: " + why);
    }

    DaemonStatus st;
    st.file = file;
    try {
        const std::uint32_t pid = as_u32(member(j, "", "pid"), "pid");
        if (pid == 0)
            throw Malformed("pid: 0 is not a process");
        st.pid = pid;
    } catch (const Malformed& e) {
        return unreadable(file, e.what());
    }
    // The answer came over the socket in a directory only root (or this
    // user) can write: whoever answered is the daemon, whatever its name.
    st.liveness = DaemonStatus::Liveness::running;
    DaemonStatus report = st;
    try {
        read_report(j, report);
    } catch (const Malformed& e) {
        st.problem = e.what();
        return st;
    }
    return report;
}

DaemonStatus read_daemon_status(const std::string& runtime_dir) {
    const std::string file = daemon_status_file(runtime_dir);
    std::string text;
    try {
        text = amdqp::activity::daemon_status(runtime_dir);
    } catch (const amdqp::Error& e) {
        if (e.code() == amdqp::errc::system && e.sys_errno() == ENOENT) {
            DaemonStatus st;
            st.file = file;
            return st;
        }
        return unreadable(file, e.what());
    }
    if (text.size() > kMaxFileBytes)
        return unreadable(file, "larger than 16 MiB");
    return parse_daemon_status(file, text);
}

}  // namespace amdqpctl
