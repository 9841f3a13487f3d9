// SPDX-License-Identifier: MIT
#include "ceilings.hpp"

#include <algorithm>
#include <cerrno>
#include <cstring>

namespace amdqp::daemon {

CeilingMap ceiling_entries(const std::vector<Rule>& rules, int default_ceiling,
                           const std::vector<Decided>& procs) {
    CeilingMap out;
    auto put = [&out](std::uint32_t kind, std::uint64_t id, int level) {
        auto [it, fresh] = out.try_emplace({kind, id}, level);
        if (!fresh)
            it->second = std::max(it->second, level);
    };
    auto grants = [&](const Rule& r) {
        const auto c = r.ceiling();
        return c && *c > default_ceiling ? c : std::nullopt;
    };
    for (const Rule& r : rules) {
        const auto c = grants(r);
        if (!c || !r.exe.empty() || !r.cgroup.empty() || r.needs_pod())
            continue;
        if (r.uid && !r.gid)
            put(AMDQP_CEIL_UID, *r.uid, *c);
        else if (r.gid && !r.uid)
            put(AMDQP_CEIL_GID, *r.gid, *c);
    }
    for (const Decided& d : procs) {
        if (!d.rule || *d.rule >= rules.size() || !d.facts || !d.facts->cgroup_id)
            continue;
        const Rule& r = rules[*d.rule];
        const auto c = grants(r);
        if (!c || r.uid || r.gid || !r.exe.empty() || (r.cgroup.empty() && !r.needs_pod()))
            continue;
        // The root cgroup holds unrelated processes: never an entry.
        if (d.facts->cgroup == "/")
            continue;
        put(AMDQP_CEIL_CGROUP, d.facts->cgroup_id, *c);
    }
    return out;
}

CeilingTable::Result CeilingTable::sync(Device& dev, const CeilingMap& want, std::string& error) {
    if (unsupported_)
        return Result::unsupported;
    try {
        if (!flushed_) {
            dev.flush_ceilings();
            flushed_ = true;
            pushed_.clear();
        }
    } catch (const Error& e) {
        // No such ioctl (ENOTTY) or op (EINVAL): a module before uapi 1.2.
        if (e.sys_errno() == ENOTTY || e.sys_errno() == EINVAL) {
            unsupported_ = true;
            return Result::unsupported;
        }
        error = std::string("flushing the ceiling table: ") + e.what();
        return Result::failed;
    }
    std::vector<Ceiling> set, clear;
    for (const auto& [k, level] : want) {
        auto it = pushed_.find(k);
        if (it == pushed_.end() || it->second != level)
            set.push_back({k.first, k.second, level, 0});
    }
    for (const auto& [k, level] : pushed_)
        if (!want.contains(k))
            clear.push_back({k.first, k.second, 0, 0});
    if (set.empty() && clear.empty())
        return Result::same;
    bool ok = true;
    try {
        for (const Ceiling& c : dev.clear_ceilings(clear).entries) {
            if (c.error != 0 && c.error != -ENOENT) {
                ok = false;
                error = "clearing ceiling " + std::to_string(c.kind) + ":" + std::to_string(c.id) +
                        ": " + std::strerror(-c.error);
                continue;
            }
            pushed_.erase({c.kind, c.id});
        }
        for (const Ceiling& c : dev.set_ceilings(set).entries) {
            if (c.error != 0) {
                ok = false;
                error = "setting ceiling " + std::to_string(c.kind) + ":" + std::to_string(c.id) +
                        ": " + std::strerror(-c.error);
                continue;
            }
            pushed_[{c.kind, c.id}] = c.level;
        }
    } catch (const Error& e) {
        error = std::string("ceiling table: ") + e.what();
        return Result::failed;
    }
    return ok ? Result::pushed : Result::failed;
}

}  // namespace amdqp::daemon
