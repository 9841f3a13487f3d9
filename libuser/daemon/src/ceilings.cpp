// SPDX-License-Identifier: MIT
#include "ceilings.hpp"

#include <algorithm>
#include <cerrno>
#include <cstring>

#include <amdqp/sys.hpp>

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

namespace {

int ceilings_call(Device& dev, std::uint32_t op, std::vector<amdqp_ceiling>& entries) {
    amdqp_ceilings req{};
    req.entries = reinterpret_cast<std::uintptr_t>(entries.data());
    req.count = static_cast<std::uint32_t>(entries.size());
    req.entry_size = sizeof(amdqp_ceiling);
    req.op = op;
    return dev.sys()->ioctl(dev.fd(), AMDQP_IOC_CEILINGS, &req);
}

amdqp_ceiling entry(const CeilingKey& k, int level) {
    amdqp_ceiling e{};
    e.kind = k.first;
    e.id = k.second;
    e.level = static_cast<std::uint32_t>(level);
    return e;
}

}  // namespace

CeilingTable::Result CeilingTable::sync(Device& dev, const CeilingMap& want, std::string& error) {
    if (unsupported_)
        return Result::unsupported;
    std::vector<amdqp_ceiling> none;
    if (!flushed_) {
        const int r = ceilings_call(dev, AMDQP_CEIL_OP_FLUSH, none);
        if (r == -ENOTTY || r == -EINVAL) {
            unsupported_ = true;
            return Result::unsupported;
        }
        if (r < 0) {
            error = std::string("flushing the ceiling table: ") + std::strerror(-r);
            return Result::failed;
        }
        flushed_ = true;
        pushed_.clear();
    }
    std::vector<amdqp_ceiling> set, clear;
    for (const auto& [k, level] : want) {
        auto it = pushed_.find(k);
        if (it == pushed_.end() || it->second != level)
            set.push_back(entry(k, level));
    }
    for (const auto& [k, level] : pushed_)
        if (!want.contains(k))
            clear.push_back(entry(k, 0));
    if (set.empty() && clear.empty())
        return Result::same;
    bool ok = true;
    auto run = [&](std::uint32_t op, std::vector<amdqp_ceiling>& v) {
        for (std::size_t i = 0; i < v.size(); i += AMDQP_MAX_BATCH) {
            std::vector<amdqp_ceiling> part(
                v.begin() + static_cast<std::ptrdiff_t>(i),
                v.begin() + static_cast<std::ptrdiff_t>(std::min(v.size(), i + AMDQP_MAX_BATCH)));
            const int r = ceilings_call(dev, op, part);
            if (r < 0) {
                ok = false;
                error = std::string("ceiling table: ") + std::strerror(-r);
                continue;
            }
            for (const amdqp_ceiling& e : part) {
                const CeilingKey k{e.kind, e.id};
                if (e.result != 0 && !(op == AMDQP_CEIL_OP_CLEAR && e.result == -ENOENT)) {
                    ok = false;
                    error = "ceiling entry " + std::to_string(e.kind) + ":" + std::to_string(e.id) +
                            ": " + std::strerror(-e.result);
                    continue;
                }
                if (op == AMDQP_CEIL_OP_SET)
                    pushed_[k] = static_cast<int>(e.level);
                else
                    pushed_.erase(k);
            }
        }
    };
    run(AMDQP_CEIL_OP_CLEAR, clear);
    run(AMDQP_CEIL_OP_SET, set);
    return ok ? Result::pushed : Result::failed;
}

}  // namespace amdqp::daemon
