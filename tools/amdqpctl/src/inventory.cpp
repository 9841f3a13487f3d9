// SPDX-License-Identifier: MIT
#include "inventory.hpp"

#include <algorithm>
#include <map>
#include <set>
#include <tuple>
#include <utility>

#include "exit_status.hpp"
#include "names.hpp"

namespace amdqpctl {

namespace act = amdqp::activity;

const TaggedProcess* Sources::find_tagged(std::uint32_t pid) const {
    for (const auto& t : tagged)
        if (static_cast<std::uint32_t>(t.page.pid()) == pid)
            return &t;
    return nullptr;
}

void Sources::throw_device_error() const {
    if (device_error)
        throw CtlError(exit_status_for(device_error->code()), device_error->what());
    throw CtlError(exit_error, "amdqp: no device");
}

Sources open_sources(const Context& ctx, act::Page::Access access) {
    Sources src;
    try {
        src.device.emplace(amdqp::Device::open(ctx.device_path, ctx.sys));
    } catch (const amdqp::Error& e) {
        src.device_error = e;
    }
    act::ScanOptions scan;
    scan.access = access;
    for (auto& page : act::scan(scan).pages) {
        if (ctx.page_filter && !ctx.page_filter(page.pid()))
            continue;
        try {
            act::Snapshot snap = page.snapshot();
            src.tagged.push_back({std::move(page), std::move(snap)});
        } catch (const act::PageError&) {
            // Gone or rewritten between the scan and now: not a tagged
            // process any more.
        }
    }
    return src;
}

std::string mechanism_name(std::uint32_t mechanism) {
    switch (mechanism) {
        case AMDQP_ACT_MECH_AMDQP:
            return "amdqp";
        case AMDQP_ACT_MECH_COOP:
            return "coop";
        default:
            return "none";
    }
}

std::string coop_state_name(std::uint32_t state) {
    switch (state) {
        case AMDQP_ACT_COOP_RUNNING:
            return "running";
        case AMDQP_ACT_COOP_SUSPENDED:
            return "suspended";
        case AMDQP_ACT_COOP_FAILED:
            return "failed";
        default:
            return "unknown";
    }
}

std::vector<QueueRow> collect_rows(const Context& ctx, Sources& src) {
    std::vector<QueueRow> rows;
    std::map<std::uint32_t, ProcessInfo> procs;
    auto proc = [&](std::uint32_t pid) -> const ProcessInfo& {
        auto it = procs.find(pid);
        if (it == procs.end())
            it = procs.emplace(pid, read_process_info(ctx.proc_root, pid)).first;
        return it->second;
    };

    std::set<std::pair<std::uint32_t, std::uint64_t>> seen;  // (pid, ring VA)
    if (src.device) {
        const bool ceilings = (src.device->version().features & AMDQP_FEATURE_CEILING) != 0;
        for (const auto& q : src.device->queues()) {
            QueueRow r;
            r.pid = q.pid;
            r.proc = proc(q.pid);
            r.gpu_id = q.gpu_id;
            r.queue_id = q.queue_id;
            r.ring_va = q.ring_va;
            r.priority = q.priority;
            r.state = queue_state_name(q.state);
            r.suspended = q.suspended();
            r.suspended_ns = q.suspended_ns;
            r.holders = q.holders;
            if (ceilings) {
                r.requested = q.requested;
                r.ceiling = q.ceiling;
            }
            r.mechanism = "amdqp";
            if (const auto* t = src.find_tagged(q.pid))
                r.group = t->snap.group();
            seen.emplace(q.pid, q.ring_va);
            rows.push_back(std::move(r));
        }
    }
    for (const auto& t : src.tagged) {
        const auto pid = static_cast<std::uint32_t>(t.page.pid());
        for (const auto& s : t.snap.slots) {
            if (seen.contains({pid, s.ring_va}))
                continue;
            QueueRow r;
            r.pid = pid;
            r.proc = proc(pid);
            r.gpu_id = s.gpu_id;
            r.queue_id = s.queue_id;
            r.ring_va = s.ring_va;
            r.priority = s.priority;
            r.mechanism = mechanism_name(s.mechanism);
            if (s.mechanism == AMDQP_ACT_MECH_COOP) {
                r.state = coop_state_name(t.snap.header.coop_state);
                r.suspended = t.snap.header.coop_state == AMDQP_ACT_COOP_SUSPENDED;
            } else {
                // amdqp.ko should know it but this reader does not see it
                // (no /dev/amdqp access), or nothing controls it.
                r.state = "unknown";
            }
            r.group = t.snap.group();
            rows.push_back(std::move(r));
        }
    }
    std::sort(rows.begin(), rows.end(), [](const QueueRow& a, const QueueRow& b) {
        return std::tuple(a.pid, a.gpu_id, a.queue_id.value_or(UINT32_MAX), a.ring_va) <
               std::tuple(b.pid, b.gpu_id, b.queue_id.value_or(UINT32_MAX), b.ring_va);
    });
    return rows;
}

}  // namespace amdqpctl
