#include "census.h"

#include <algorithm>
#include <array>

#include "text.h"

namespace amdqp {

namespace {
constexpr std::array<std::string_view, 13> kKfdFunctions = {
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
};

// Calls that (re)build the HWS runlist or talk to MES: the cost amdqp batches.
bool is_runlist_update(std::string_view f) {
    return f == "execute_queues_cpsch" || f == "map_queues_cpsch" || f == "add_queue_mes" ||
           f == "remove_queue_mes";
}

template <class M, class K> bool room(const M &m, const K &k) {
    return m.size() < kMaxEntities || m.find(k) != m.end();
}
} // namespace

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

void Analysis::end_file() {}

void Analysis::hqd(const HqdRecord &r) {
    if (hqds.empty()) { // records pushed without begin_file (tests, fuzzers)
        hqds.emplace_back();
        hqds.back().file = file_;
    }
    if (!hqd_slots_.emplace(r.gpu_id, r.xcc, r.hiq, r.mec, r.pipe, r.queue).second) {
        if (hqds.size() >= kMaxEntities) { // memory stays bounded on any input
            ++dropped;
            return;
        }
        uint32_t next = hqds.back().index + 1;
        hqds.emplace_back();
        hqds.back().file = file_;
        hqds.back().index = next;
        hqd_slots_.clear();
        hqd_slots_.emplace(r.gpu_id, r.xcc, r.hiq, r.mec, r.pipe, r.queue);
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

void Analysis::hip_queue(const HipQueueRecord &q) {
    if (q.created) {
        if (hip_queues.size() >= kMaxEntities) {
            ++dropped;
            return;
        }
        HipQueue h;
        h.file = file_;
        h.pid = q.pid;
        h.hwq = q.hwq;
        h.size = q.size;
        h.priority = q.priority;
        h.created = q.ts_us;
        hip_queues.push_back(h);
        return;
    }
    for (auto it = hip_queues.rbegin(); it != hip_queues.rend(); ++it)
        if (it->hwq == q.hwq && it->file == file_ && it->deleted < 0) {
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
        std::string_view func = next_token(b);
        if (is_kfd_queue_function(func))
            kfd_function(e, func, 'i');
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
                kfd_function(e, func, suffix == "_entry" ? 'b' : 'e');
            return;
        }
    }
}

void Analysis::kfd_function(const TraceEvent &e, std::string_view func, char kind) {
    if (kind == 'i' || kind == 'b') {
        auto c = kfd_calls.find(func);
        if (c != kfd_calls.end())
            ++c->second;
        else
            kfd_calls.emplace(std::string(func), 1);
        if (is_runlist_update(func) && room(runlist_updates_by_pid, e.pid))
            ++runlist_updates_by_pid[e.pid];
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
    if (e.name == "amdqp_queue_register" || e.name == "amdqp_queue_unregister") {
        auto key = std::make_pair(pid, gpu);
        if (!room(amdqp_live, key)) {
            ++dropped;
            return;
        }
        auto &live = amdqp_live[key];
        auto qid = static_cast<uint32_t>(kv_u64(e.body, "queue_id").value_or(0));
        if (e.name == "amdqp_queue_register") {
            ++amdqp_registers;
            if (live.size() < kMaxEntities)
                live.insert(qid);
            auto &mx = amdqp_max_queues[key];
            mx = std::max<uint32_t>(mx, static_cast<uint32_t>(live.size()));
        } else {
            ++amdqp_unregisters;
            live.erase(qid);
            amdqp_max_queues.try_emplace(key, 0);
        }
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
