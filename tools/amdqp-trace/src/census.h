// Aggregation of all parsed records into the facts the reports print: queue
// census per process/GPU/XCC, submissions per queue, suspend/resume and KFD
// map/unmap timelines. Every map is capped so that memory stays bounded.
#pragma once
#include <cstdint>
#include <limits>
#include <map>
#include <set>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "records.h"

namespace amdqp {

constexpr size_t kMaxEntities = 1 << 16; // per map: queues, processes, names
constexpr size_t kMaxKept = 256;         // example rows kept for reports

struct Stats {
    uint64_t n = 0;
    double total = 0, min = std::numeric_limits<double>::infinity(), max = 0;
    void add(double v) {
        ++n;
        total += v;
        min = v < min ? v : min;
        max = v > max ? v : max;
    }
    double avg() const { return n ? total / static_cast<double>(n) : 0; }
};

struct XccCount {
    uint32_t active_user = 0;
    uint32_t active_hiq = 0;
    uint32_t slots = 0;
};

struct GpuSnapshot {
    uint32_t node = 0;
    std::map<uint32_t, XccCount> xcc;
    uint32_t active_user() const {
        uint32_t n = 0;
        for (const auto &[k, v] : xcc)
            n += v.active_user;
        return n;
    }
};

// One dump of kfd/hqds. A file may hold several (sampled with `cat >> log` in a
// loop): each is its own snapshot, numbered from 1 within its file.
struct HqdSnapshot {
    std::string file;
    uint32_t index = 1;
    std::map<std::string, GpuSnapshot> gpus;
    std::vector<HqdRecord> active; // active user HQDs (capped)
    uint32_t active_user() const {
        uint32_t n = 0;
        for (const auto &[k, v] : gpus)
            n += v.active_user();
        return n;
    }
};

struct MqdQueue {
    std::string kind;
    uint32_t mqds = 0;        // one per XCC on gfx9.4.3
    uint32_t active_mqds = 0; // cp_hqd_active as saved in the MQD
    QueueRegs first;          // registers of the first MQD
    bool has_regs = false;
};

struct MqdProcess {
    uint64_t pasid = 0;
    std::map<uint32_t, MqdQueue> queues; // by ordinal
};

struct MqdSnapshot {
    std::string file;
    std::map<std::pair<int64_t, std::string>, MqdProcess> procs; // (pid, gpu)
};

struct HipQueue {
    std::string file;
    int64_t pid = 0;
    uint64_t hwq = 0, size = 0;
    int priority = 0;
    double created = 0, deleted = -1;
};

struct QueueSubmissions {
    uint64_t n = 0;
    double first = 0, last = 0, busy_us = 0;
};

struct SuspendState {
    bool suspended = false;
    double since = 0;
    uint32_t count = 0;
};

struct Interval {
    std::string what, gpu;
    double start = 0, dur = 0;
    std::string detail;
};

class Analysis : public Sink {
public:
    void begin_file(const std::string &path, std::string_view format) override;
    void hqd(const HqdRecord &r) override;
    void mqd(const MqdRecord &r) override;
    void trace_event(const TraceEvent &e) override;
    void lost_events(uint64_t n) override { lost += n; }
    void hip_queue(const HipQueueRecord &q) override;
    void dispatch(const DispatchRecord &d) override;
    void api_span(const ApiSpan &a) override;
    void workload(const WorkloadResult &w) override;
    void end_file() override;

    // The hqds snapshot with the most active user HQDs (the census reports it).
    const HqdSnapshot *peak_hqds() const;
    // How many snapshots the file of s holds.
    uint32_t snapshots_in_file(const HqdSnapshot &s) const;
    // The last snapshot of the file of s (dumps in one file are in time order;
    // files of a folder need not be).
    const HqdSnapshot &last_in_file(const HqdSnapshot &s) const;

    // ---- results ----
    std::vector<HqdSnapshot> hqds;
    std::vector<MqdSnapshot> mqds;
    std::vector<HipQueue> hip_queues;
    // (source, pid, gpu, queue) -> submissions
    std::map<std::tuple<std::string, int64_t, std::string, std::string>, QueueSubmissions> subs;
    uint64_t api_spans = 0;
    std::vector<WorkloadResult> workloads;

    // ftrace
    uint64_t trace_events = 0, lost = 0;
    double trace_first = 0, trace_last = 0;
    std::map<std::string, uint64_t, std::less<>> event_counts;
    // amdqp tracepoints
    std::map<std::pair<int64_t, std::string>, std::set<uint32_t>> amdqp_live; // (pid,gpu)->ids
    std::map<std::pair<int64_t, std::string>, uint32_t> amdqp_max_queues;
    uint64_t amdqp_registers = 0, amdqp_unregisters = 0, amdqp_prio_changes = 0,
             amdqp_watchdogs = 0;
    std::map<std::string, SuspendState> suspend_state; // per gpu
    std::map<std::string, Stats> suspended_us;         // per gpu: suspended intervals
    Stats suspend_batch_us, resume_batch_us;           // firmware round trips
    uint64_t suspend_failed = 0, resume_failed = 0;
    std::vector<std::string> amdqp_errors;
    // KFD queue-manager functions
    std::map<std::string, uint64_t, std::less<>> kfd_calls;
    std::map<std::string, Stats, std::less<>> kfd_durations;
    std::map<std::pair<int64_t, std::string>, double> kfd_open; // (pid, func) -> entry ts
    std::map<int64_t, uint64_t> runlist_updates_by_pid;
    std::vector<Interval> intervals; // first kMaxKept suspend / kfd spans
    uint64_t dropped = 0;            // records not kept because a cap was hit

private:
    void keep_interval(Interval iv);
    void kfd_function(const TraceEvent &e, std::string_view func, char kind);
    void amdqp_event(const TraceEvent &e);
    std::string file_;
    std::string format_;
    // HQD slots (gpu, xcc, hiq, mec, pipe, queue) of the current snapshot: a slot
    // seen again starts the next dump.
    std::set<std::tuple<std::string, uint32_t, bool, uint32_t, uint32_t, uint32_t>> hqd_slots_;
};

// Functions of the KFD device queue manager worth tracing (see ftrace_scripts).
bool is_kfd_queue_function(std::string_view f);

} // namespace amdqp
