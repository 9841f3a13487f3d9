#include "census.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>

#include "text.h"

namespace amdqp {

namespace {
constexpr std::array<std::string_view, 18> kKfdFunctions = {
    "create_queue_cpsch",
    "destroy_queue_cpsch",
    "execute_queues_cpsch",
    "map_queues_cpsch",
    "unmap_queues_cpsch",
    "pm_send_runlist",
    "pm_send_unmap_queue",
    "add_queue_mes",
    "remove_queue_mes",
    "suspend_queues",
    "resume_queues",
    "evict_process_queues_cpsch",
    "restore_process_queues_cpsch",
    "process_termination_cpsch",
    "update_queue",
    // kfd-glue (patches/): the amdqp backend's entry points into KFD
    "kfd_qctl_suspend",
    "kfd_qctl_resume",
    "kfd_dqm_ctl_update",
};

// The KFD/amdqp call a runlist update is made for, by the function it runs in.
std::string_view cause_of(std::string_view f) {
    static constexpr std::pair<std::string_view, std::string_view> kCauses[] = {
        {"create_queue_cpsch", "queue create"},
        {"destroy_queue_cpsch", "queue destroy"},
        {"update_queue", "queue update"},
        {"evict_process_queues_cpsch", "eviction"},
        {"restore_process_queues_cpsch", "restore after eviction"},
        {"process_termination_cpsch", "process exit"},
        {"suspend_queues", "debugger suspend"},
        {"resume_queues", "debugger resume"},
        {"kfd_qctl_suspend", "amdqp suspend"},
        {"kfd_qctl_resume", "amdqp resume"},
        {"kfd_dqm_ctl_update", "amdqp suspend/resume"},
    };
    for (const auto &[fn, cause] : kCauses)
        if (fn == f)
            return cause;
    return {};
}

// An update pending this long without an amdqp batch claiming it never will be
// (the preemption timeout bounds a batch at about 9 s).
constexpr double kPendingWindowUs = 20e6;
constexpr size_t kMaxPending = 4096;

template <class M, class K> bool room(const M &m, const K &k) {
    return m.size() < kMaxEntities || m.find(k) != m.end();
}
} // namespace

std::string_view base_symbol(std::string_view f) {
    // Compiler clones of static functions (the function tracer names them
    // as they are in kallsyms): map_queues_cpsch.isra.0 is map_queues_cpsch.
    const auto dot = f.find('.');
    if (dot != std::string_view::npos) {
        const std::string_view rest = f.substr(dot);
        if (rest.starts_with(".isra") || rest.starts_with(".constprop"))
            return f.substr(0, dot);
    }
    return f;
}

bool is_kfd_queue_function(std::string_view f) {
    return std::find(kKfdFunctions.begin(), kKfdFunctions.end(), f) != kKfdFunctions.end();
}

void Analysis::begin_file(const std::string &path, std::string_view format) {
    file_ = path;
    format_ = std::string(format);
    hqd_slots_.clear();
    if (format == "kfd-hqds") {
        hqds.emplace_back();
        hqds.back().file = path;
    } else if (format == "kfd-mqds") {
        mqds.emplace_back();
        mqds.back().file = path;
    }
}

void Analysis::end_file() {
    finish();
}

void Analysis::finish() {
    settle_pending(std::numeric_limits<double>::infinity(), "unknown", "?");
}

HqdSnapshot &Analysis::current_hqds() {
    if (hqds.empty()) { // records pushed without begin_file (tests, fuzzers)
        hqds.emplace_back();
        hqds.back().file = file_;
    }
    return hqds.back();
}

bool Analysis::next_hqds_snapshot() {
    if (hqds.size() >= kMaxEntities) { // memory stays bounded on any input
        ++dropped;
        return false;
    }
    uint32_t next = hqds.back().index + 1;
    hqds.emplace_back();
    hqds.back().file = file_;
    hqds.back().index = next;
    hqd_slots_.clear();
    return true;
}

void Analysis::hqd_device_stopped(uint32_t node, const std::string &gpu_id) {
    // A GPU already in this dump, stopped or with HQD rows, starts the next one.
    if (current_hqds().gpus.count(gpu_id) && !next_hqds_snapshot())
        return;
    HqdSnapshot &s = hqds.back();
    if (!room(s.gpus, gpu_id)) {
        ++dropped;
        return;
    }
    GpuSnapshot &g = s.gpus[gpu_id];
    g.node = node;
    g.stopped = true;
}

void Analysis::hqd(const HqdRecord &r) {
    auto slot = std::make_tuple(r.gpu_id, r.xcc, r.hiq, r.mec, r.pipe, r.queue);
    auto gpu = current_hqds().gpus.find(r.gpu_id);
    // A slot seen again, or rows of a GPU this dump called stopped: the next dump.
    bool was_stopped = gpu != hqds.back().gpus.end() && gpu->second.stopped;
    if (!hqd_slots_.insert(slot).second || was_stopped) {
        if (!next_hqds_snapshot())
            return;
        hqd_slots_.insert(slot);
    }
    HqdSnapshot &s = hqds.back();
    if (!room(s.gpus, r.gpu_id)) {
        ++dropped;
        return;
    }
    GpuSnapshot &g = s.gpus[r.gpu_id];
    g.node = r.node;
    if (!room(g.xcc, r.xcc)) {
        ++dropped;
        return;
    }
    XccCount &x = g.xcc[r.xcc];
    ++x.slots;
    if (!r.regs.active)
        return;
    if (r.hiq) {
        ++x.active_hiq;
        return;
    }
    ++x.active_user;
    if (s.active.size() < kMaxEntities)
        s.active.push_back(r);
    else
        ++dropped;
}

void Analysis::mqd(const MqdRecord &r) {
    if (mqds.empty()) {
        mqds.emplace_back();
        mqds.back().file = file_;
    }
    MqdSnapshot &s = mqds.back();
    auto key = std::make_pair(r.pid, r.gpu_id);
    if (!room(s.procs, key)) {
        ++dropped;
        return;
    }
    MqdProcess &p = s.procs[key];
    p.pasid = r.pasid;
    if (!room(p.queues, r.queue_ordinal)) {
        ++dropped;
        return;
    }
    MqdQueue &q = p.queues[r.queue_ordinal];
    q.kind = r.kind;
    if (!r.has_regs)
        return;
    if (q.mqds == 0) {
        q.first = r.regs;
        q.has_regs = true;
    }
    ++q.mqds;
    if (r.regs.active)
        ++q.active_mqds;
}

void Analysis::hip_queue_used(const HipQueueRecord &q) {
    auto key = std::make_tuple(file_, q.pid, q.device);
    if (room(hip_life, key))
        hip_life[key].touch(q.hwq);
    else
        ++dropped;
}

void Analysis::hip_queue(const HipQueueRecord &q) {
    auto key = std::make_tuple(file_, q.pid, q.device);
    if (!room(hip_life, key)) {
        ++dropped;
        return;
    }
    QueueLife &life = hip_life[key];
    if (q.created) {
        life.create(q.hwq);
        if (hip_queues.size() >= kMaxEntities) {
            ++dropped;
            return;
        }
        HipQueue h;
        h.file = file_;
        h.pid = q.pid;
        h.device = q.device;
        h.hwq = q.hwq;
        h.size = q.size;
        h.priority = q.priority;
        h.created = q.ts_us;
        hip_queues.push_back(h);
        return;
    }
    life.destroy(q.hwq);
    for (auto it = hip_queues.rbegin(); it != hip_queues.rend(); ++it)
        if (it->hwq == q.hwq && it->file == file_ && it->pid == q.pid && it->deleted < 0) {
            it->deleted = q.ts_us;
            break;
        }
}

void Analysis::dispatch(const DispatchRecord &d) {
    auto key = std::make_tuple(d.source, d.pid, d.gpu, d.queue);
    if (!room(subs, key)) {
        ++dropped;
        return;
    }
    QueueSubmissions &s = subs[key];
    if (s.n == 0)
        s.first = d.ts_us;
    s.first = std::min(s.first, d.ts_us);
    s.last = std::max(s.last, d.ts_us + d.dur_us);
    s.busy_us += d.dur_us;
    ++s.n;
}

void Analysis::api_span(const ApiSpan &) {
    ++api_spans;
}

void Analysis::workload(const WorkloadResult &w) {
    if (workloads.size() >= kMaxKept) {
        ++dropped;
        return;
    }
    workloads.push_back(w);
    workloads.back().file = file_;
}

void Analysis::keep_interval(Interval iv) {
    if (intervals.size() < kMaxKept)
        intervals.push_back(std::move(iv));
}

void Analysis::trace_event(const TraceEvent &e) {
    if (trace_events == 0)
        trace_first = e.ts_us;
    ++trace_events;
    trace_first = std::min(trace_first, e.ts_us);
    trace_last = std::max(trace_last, e.ts_us);
    auto it = event_counts.find(e.name);
    if (it != event_counts.end())
        ++it->second;
    else if (event_counts.size() < kMaxEntities)
        event_counts.emplace(std::string(e.name), 1);
    if (e.name == "function") {
        // "func <-parent" (trace) or "func <-- parent" (trace-cmd report)
        std::string_view b = e.body;
        std::string_view func = base_symbol(next_token(b));
        std::string_view arrow = next_token(b); // "<-parent" or "<--" "parent"
        std::string_view parent = base_symbol(arrow.size() > 2 ? arrow.substr(2) : next_token(b));
        if (is_kfd_queue_function(func))
            kfd_function(e, func, 'i', parent);
        return;
    }
    if (starts_with(e.name, "amdqp_")) {
        amdqp_event(e);
        return;
    }
    // kprobe pairs placed by amdqp-capture: <func>_entry / <func>_exit
    for (std::string_view suffix : {std::string_view("_entry"), std::string_view("_exit")}) {
        if (e.name.size() > suffix.size() &&
            e.name.substr(e.name.size() - suffix.size()) == suffix) {
            std::string_view func = e.name.substr(0, e.name.size() - suffix.size());
            if (is_kfd_queue_function(func))
                kfd_function(e, func, suffix == "_entry" ? 'b' : 'e', {});
            return;
        }
    }
}

std::string Analysis::kfd_cause(int64_t pid) const {
    // The innermost open call of this task that says why (kprobe entry/exit
    // pairs), else the last such call the function tracer showed for it.
    std::string_view best;
    double best_ts = -std::numeric_limits<double>::infinity();
    for (auto it = kfd_open.lower_bound({pid, std::string()});
         it != kfd_open.end() && it->first.first == pid; ++it) {
        std::string_view c = cause_of(it->first.second);
        if (!c.empty() && it->second >= best_ts) {
            best = c;
            best_ts = it->second;
        }
    }
    if (!best.empty())
        return std::string(best);
    auto l = last_cause_.find(pid);
    return l == last_cause_.end() ? std::string() : l->second;
}

std::string Analysis::gpu_of(int64_t pid) const {
    // KFD probes do not name the device; a task with queues on one GPU only
    // can only have rebuilt that GPU's runlist.
    std::string gpu;
    for (auto it = amdqp_queues.lower_bound({pid, std::string()});
         it != amdqp_queues.end() && it->first.first == pid; ++it) {
        if (!gpu.empty())
            return "?";
        gpu = it->first.second;
    }
    return gpu.empty() ? "?" : gpu;
}

void Analysis::attribute(const RunlistKey &k, bool sent) {
    auto &m = sent ? runlist_sent : runlist_calls;
    if (room(m, k))
        ++m[k];
    else
        ++dropped;
    if (sent)
        ++runlist_sent_total;
    if (k.gpu == "?")
        return;
    // Under HWS a new runlist unmaps every queue of the device and maps the
    // new list: every process with queues there is preempted, except by its own.
    auto &g = gpu_updates_[sent];
    if (room(g, k.gpu) && g[k.gpu].size() < kMaxKept)
        ++g[k.gpu][k.cause];
    auto e = exposure_.find({k.pid, k.gpu});
    if (e != exposure_.end() && e->second.live) {
        CollateralKey own{k.pid, k.gpu, k.cause};
        if (room(own_[sent], own))
            ++own_[sent][own];
    }
}

void Analysis::exposure_changed(int64_t pid, const std::string &gpu, bool live) {
    if (!room(exposure_, std::make_pair(pid, gpu)))
        return;
    Exposure &e = exposure_[{pid, gpu}];
    if (e.live == live)
        return;
    e.live = live;
    for (int sent = 0; sent < 2; ++sent) {
        const CauseCounts &now = gpu_updates_[sent][gpu];
        if (live) {
            e.base[sent] = now;
            continue;
        }
        for (const auto &[cause, n] : now) {
            CollateralKey k{pid, gpu, cause};
            uint64_t d = n - e.base[sent][cause];
            if (d && room(banked_[sent], k))
                banked_[sent][k] += d;
        }
    }
}

std::map<CollateralKey, uint64_t> Analysis::collateral(bool sent) const {
    std::map<CollateralKey, uint64_t> out = banked_[sent];
    for (const auto &[key, e] : exposure_) {
        if (!e.live)
            continue;
        auto g = gpu_updates_[sent].find(key.second);
        if (g == gpu_updates_[sent].end())
            continue;
        for (const auto &[cause, n] : g->second) {
            auto b = e.base[sent].find(cause);
            uint64_t d = n - (b == e.base[sent].end() ? 0 : b->second);
            if (d)
                out[{key.first, key.second, cause}] += d;
        }
    }
    for (const auto &[k, n] : own_[sent]) {
        auto it = out.find(k);
        if (it == out.end())
            continue;
        it->second -= std::min(it->second, n);
        if (it->second == 0)
            out.erase(it);
    }
    return out;
}

void Analysis::settle_pending(double from_ts, const std::string &cause, const std::string &gpu) {
    // Claim the pending updates from from_ts on (the newest ones, at the back).
    std::vector<PendingUpdate> claimed;
    while (!pending_.empty() && pending_.back().ts >= from_ts) {
        claimed.push_back(pending_.back());
        pending_.pop_back();
    }
    for (auto it = claimed.rbegin(); it != claimed.rend(); ++it)
        attribute({cause, it->pid, gpu == "?" ? gpu_of(it->pid) : gpu}, it->sent);
    if (std::isinf(from_ts)) {
        while (!pending_.empty()) {
            attribute({"unknown", pending_.front().pid, gpu_of(pending_.front().pid)},
                      pending_.front().sent);
            pending_.pop_front();
        }
    }
}

void Analysis::runlist_update(int64_t pid, double ts, bool sent) {
    std::string cause = kfd_cause(pid);
    if (!cause.empty()) {
        attribute({cause, pid, gpu_of(pid)}, sent);
        return;
    }
    // No KFD caller: amdqp's reconcile work reports its batch only after the
    // backend call returns, so wait for it.
    while (!pending_.empty() &&
           (pending_.size() >= kMaxPending || pending_.front().ts < ts - kPendingWindowUs)) {
        attribute({"unknown", pending_.front().pid, gpu_of(pending_.front().pid)},
                  pending_.front().sent);
        pending_.pop_front();
    }
    pending_.push_back({pid, ts, sent});
}

void Analysis::kfd_function(const TraceEvent &e, std::string_view func, char kind,
                            std::string_view parent) {
    if (kind == 'i' || kind == 'b') {
        auto c = kfd_calls.find(func);
        if (c != kfd_calls.end())
            ++c->second;
        else
            kfd_calls.emplace(std::string(func), 1);
        if (kind == 'i' && !cause_of(func).empty() && room(last_cause_, e.pid))
            last_cause_[e.pid] = std::string(cause_of(func));
        // execute_queues_cpsch calls map_queues_cpsch: one runlist update, not two.
        bool in_execute = parent == "execute_queues_cpsch" ||
                          (kind == 'b' && kfd_open.count({e.pid, "execute_queues_cpsch"}));
        if (func == "execute_queues_cpsch" || (func == "map_queues_cpsch" && !in_execute)) {
            if (room(runlist_updates_by_pid, e.pid))
                ++runlist_updates_by_pid[e.pid];
            runlist_update(e.pid, e.ts_us, false);
        } else if (func == "pm_send_runlist") {
            runlist_update(e.pid, e.ts_us, true);
        } else if (func == "pm_send_unmap_queue") {
            ++unmap_packets;
        }
    }
    if (kind == 'b') {
        auto key = std::make_pair(e.pid, std::string(func));
        if (room(kfd_open, key))
            kfd_open[key] = e.ts_us;
        else
            ++dropped;
    } else if (kind == 'e') {
        auto it = kfd_open.find(std::make_pair(e.pid, std::string(func)));
        if (it == kfd_open.end())
            return; // return without a recorded entry (capture started mid-call)
        double dur = e.ts_us - it->second;
        kfd_durations[std::string(func)].add(dur);
        keep_interval({std::string(func), "pid " + std::to_string(e.pid), it->second, dur, ""});
        kfd_open.erase(it);
    }
}

void Analysis::amdqp_event(const TraceEvent &e) {
    std::string gpu = kv_u64(e.body, "gpu_id") ? gpu_hex(*kv_u64(e.body, "gpu_id")) : "?";
    int64_t pid = 0;
    if (auto p = kv_get(e.body, "pid"))
        pid = parse_i64(*p).value_or(0);
    auto qid = kv_u64(e.body, "queue_id");
    if (qid && pid != 0 && gpu != "?") {
        // Every event that names a queue shows it exists: a capture that starts
        // while queues are up sees some of them only being unregistered.
        auto key = std::make_pair(pid, gpu);
        if (!room(amdqp_queues, key)) {
            ++dropped;
            return;
        }
        QueueLife &life = amdqp_queues[key];
        if (e.name == "amdqp_queue_register") {
            life.create(*qid);
        } else if (e.name == "amdqp_queue_unregister") {
            life.destroy(*qid);
        } else {
            life.touch(*qid);
        }
        amdqp_max_queues[key] = life.peak();
        exposure_changed(pid, gpu, life.live() > 0);
    }
    if (e.name == "amdqp_queue_register") {
        ++amdqp_registers;
    } else if (e.name == "amdqp_queue_unregister") {
        ++amdqp_unregisters;
    } else if (e.name == "amdqp_priority_change") {
        ++amdqp_prio_changes;
    } else if (e.name == "amdqp_suspend_batch" || e.name == "amdqp_resume_batch") {
        bool suspend = e.name == "amdqp_suspend_batch";
        double lat_us = static_cast<double>(kv_u64(e.body, "latency_ns").value_or(0)) / 1000.0;
        uint64_t failed = kv_u64(e.body, "failed").value_or(0);
        auto count = static_cast<uint32_t>(kv_u64(e.body, "count").value_or(0));
        (suspend ? suspend_batch_us : resume_batch_us).add(lat_us);
        (suspend ? suspend_failed : resume_failed) += failed;
        if (!room(suspend_state, gpu)) {
            ++dropped;
            return;
        }
        // The runlist updates this batch made happened during its latency.
        settle_pending(e.ts_us - lat_us - 1.0, suspend ? "amdqp suspend" : "amdqp resume", gpu);
        SuspendState &st = suspend_state[gpu];
        if (suspend && !st.suspended) {
            st.suspended = true;
            st.since = e.ts_us;
            st.count = count;
        } else if (!suspend && st.suspended) {
            double dur = e.ts_us - st.since;
            suspended_us[gpu].add(dur);
            keep_interval({"suspended", gpu, st.since, dur, std::to_string(st.count) + " queues"});
            st.suspended = false;
        }
    } else if (e.name == "amdqp_error") {
        if (amdqp_errors.size() < kMaxKept)
            amdqp_errors.push_back(std::string(e.body));
    } else if (e.name == "amdqp_watchdog") {
        ++amdqp_watchdogs;
    }
}

uint32_t Analysis::snapshots_in_file(const HqdSnapshot &s) const {
    uint32_t n = 0;
    for (const auto &o : hqds)
        if (o.file == s.file)
            n = std::max(n, o.index);
    return n;
}

const HqdSnapshot &Analysis::last_in_file(const HqdSnapshot &s) const {
    const HqdSnapshot *last = &s;
    for (const auto &o : hqds)
        if (o.file == s.file && o.index > last->index)
            last = &o;
    return *last;
}

const HqdSnapshot *Analysis::peak_hqds() const {
    const HqdSnapshot *best = nullptr;
    for (const auto &s : hqds)
        if (!best || s.active_user() > best->active_user())
            best = &s;
    return best;
}

} // namespace amdqp
