// Aggregation of all parsed records into the facts the reports print: queue
// census per process/GPU/XCC, submissions per queue, suspend/resume and KFD
// map/unmap timelines. Every map is capped so that memory stays bounded.
#pragma once
#include <cstdint>
#include <deque>
#include <limits>
#include <map>
#include <set>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "queue_life.h"
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
    bool stopped = false; // "Device is stopped": KFD showed no HQDs for it
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
    int device = 0;
    uint64_t hwq = 0, size = 0;
    int priority = 0;
    double created = 0, deleted = -1;
};

// Why the HWS runlist was rebuilt: the KFD or amdqp call the update happened in.
struct RunlistKey {
    std::string cause; // "queue create", "amdqp suspend", ... or "unknown"
    int64_t pid = 0;   // task that made the call
    std::string gpu;   // "?" when the trace does not say
    auto operator<=>(const RunlistKey &) const = default;
};

// A process preempted by runlist updates that others made, per cause.
struct CollateralKey {
    int64_t victim = 0;
    std::string gpu;
    std::string cause;
    auto operator<=>(const CollateralKey &) const = default;
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
    void hqd_device_stopped(uint32_t node, const std::string &gpu_id) override;
    void mqd(const MqdRecord &r) override;
    void trace_event(const TraceEvent &e) override;
    void lost_events(uint64_t n) override { lost += n; }
    void hip_queue(const HipQueueRecord &q) override;
    void hip_queue_used(const HipQueueRecord &q) override;
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

    // End of input: runlist updates still waiting for a cause get "unknown".
    void finish();

    // ---- results ----
    std::vector<HqdSnapshot> hqds;
    std::vector<MqdSnapshot> mqds;
    std::vector<HipQueue> hip_queues;
    // HIP hardware queues per (file, pid, device): a log is one run, the same
    // pid in two files is two runs.
    std::map<std::tuple<std::string, int64_t, int>, QueueLife> hip_life;
    // (source, pid, gpu, queue) -> submissions
    std::map<std::tuple<std::string, int64_t, std::string, std::string>, QueueSubmissions> subs;
    uint64_t api_spans = 0;
    std::vector<WorkloadResult> workloads;

    // ftrace
    uint64_t trace_events = 0, lost = 0;
    double trace_first = 0, trace_last = 0;
    std::map<std::string, uint64_t, std::less<>> event_counts;
    // amdqp tracepoints
    std::map<std::pair<int64_t, std::string>, QueueLife> amdqp_queues;    // (pid, gpu)
    std::map<std::pair<int64_t, std::string>, uint32_t> amdqp_max_queues; // peak live
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
    // Calls that rebuild the runlist (execute_queues_cpsch, or map_queues_cpsch
    // not inside one: execute calls map, one update), per calling pid.
    std::map<int64_t, uint64_t> runlist_updates_by_pid;
    // pm_send_runlist: the runlists that reach the HWS firmware, by cause.
    std::map<RunlistKey, uint64_t> runlist_sent;
    uint64_t runlist_sent_total = 0, unmap_packets = 0;
    // Same, when pm_send_runlist is not traced: the runlist-changing calls.
    std::map<RunlistKey, uint64_t> runlist_calls;
    // Processes whose queues were unmapped by runlist updates others made
    // (sent: from pm_send_runlist, else from the runlist-changing calls).
    std::map<CollateralKey, uint64_t> collateral(bool sent) const;
    std::vector<Interval> intervals; // first kMaxKept suspend / kfd spans
    uint64_t dropped = 0;            // records not kept because a cap was hit

private:
    struct PendingUpdate {
        int64_t pid = 0;
        double ts = 0;
        bool sent = false; // pm_send_runlist, else a runlist-changing call
    };
    void keep_interval(Interval iv);
    void kfd_function(const TraceEvent &e, std::string_view func, char kind,
                      std::string_view parent);
    void amdqp_event(const TraceEvent &e);
    std::string kfd_cause(int64_t pid) const;
    void runlist_update(int64_t pid, double ts, bool sent);
    void attribute(const RunlistKey &k, bool sent);
    void settle_pending(double from_ts, const std::string &cause, const std::string &gpu);
    std::string gpu_of(int64_t pid) const;
    // Runlist updates with no KFD caller in sight, oldest first: an amdqp batch
    // that ends later and covers them claims them, the rest become "unknown".
    std::deque<PendingUpdate> pending_;
    // Function-tracer mode has entries only: the last cause call seen per task.
    std::map<int64_t, std::string> last_cause_;
    // Collateral preemptions without a loop over all processes per update:
    // updates per GPU and cause, and for each (pid, GPU) the counts when it got
    // queues (everything after that preempted it), banked when it had none left.
    using CauseCounts = std::map<std::string, uint64_t>;
    struct Exposure {
        bool live = false;
        CauseCounts base[2];
    };
    // The hqds snapshot being filled (made if none), and the start of the next
    // one (false at the cap).
    HqdSnapshot &current_hqds();
    bool next_hqds_snapshot();
    void exposure_changed(int64_t pid, const std::string &gpu, bool live);
    std::map<std::string, CauseCounts> gpu_updates_[2];
    std::map<std::pair<int64_t, std::string>, Exposure> exposure_;
    std::map<CollateralKey, uint64_t> banked_[2], own_[2];
    std::string file_;
    std::string format_;
    // HQD slots (gpu, xcc, hiq, mec, pipe, queue) of the current snapshot: a slot
    // seen again starts the next dump.
    std::set<std::tuple<std::string, uint32_t, bool, uint32_t, uint32_t, uint32_t>> hqd_slots_;
};

// Functions of the KFD device queue manager worth tracing (see ftrace_scripts).
bool is_kfd_queue_function(std::string_view f);
// A function's name without a compiler clone suffix (.isra.N, .constprop.N).
std::string_view base_symbol(std::string_view f);

} // namespace amdqp
