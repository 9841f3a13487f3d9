// What the parsers produce. Parsers push records into a Sink as they go, so that
// no input is ever held whole in memory; consumers aggregate or stream them out.
#pragma once
#include <cstdint>
#include <string>
#include <string_view>

#include "queue_regs.h"

namespace amdqp {

// One hardware queue slot from /sys/kernel/debug/kfd/hqds.
struct HqdRecord {
    uint32_t node = 0;
    std::string gpu_id; // hex, as kfd prints it
    uint32_t xcc = 0;   // logical XCC instance ("Inst N")
    bool hiq = false;   // the HWS interface queue, not a user queue
    uint32_t mec = 0;   // only printed for the HIQ
    uint32_t pipe = 0;
    uint32_t queue = 0;
    QueueRegs regs;
};

// One MQD (per XCC) of one user queue from /sys/kernel/debug/kfd/mqds.
struct MqdRecord {
    int64_t pid = 0;
    uint64_t pasid = 0;
    std::string gpu_id;
    std::string kind;       // "Compute", "SDMA", ...
    uint32_t queue_ordinal; // n-th queue of this process in the dump
    uint32_t xcc_ordinal;   // n-th MQD of that queue (one per XCC on gfx9.4.3)
    bool has_regs = false;  // SDMA MQDs have a different layout
    QueueRegs regs;
};

// One event line of ftrace text output.
struct TraceEvent {
    std::string_view task;
    int64_t pid = 0;
    int cpu = 0;
    double ts_us = 0;
    std::string_view name;
    std::string_view body;
};

// A HIP runtime hardware queue (AMD_LOG_LEVEL>=3 "Created SWq=... HWq=...").
struct HipQueueRecord {
    int64_t pid = 0;
    uint64_t hwq = 0; // the runtime's hardware queue (HSA queue) address
    int device = 0;   // HIP device index (hipSetDevice)
    uint64_t size = 0;
    int priority = 0;
    double ts_us = 0;
    bool created = true; // false: "Deleting hardware queue"
    int64_t tid = 0;     // runtime thread, when the log tags lines with it
};

// One kernel submission attributed to a queue (HIP log launch or rocprof dispatch).
struct DispatchRecord {
    std::string source; // "hip-log", "rocprof"
    int64_t pid = 0;
    std::string gpu;   // as known in that source
    std::string queue; // queue label (HWq address or rocprof queue-id)
    int64_t tid = 0;   // submitting thread, 0 when unknown
    std::string_view kernel;
    double ts_us = 0;
    double dur_us = 0; // 0 when unknown
};

// One HIP/HSA API call span (rocprof) for the timeline.
struct ApiSpan {
    int64_t pid = 0;
    int64_t tid = 0;
    std::string_view name;
    std::string_view category;
    double ts_us = 0;
    double dur_us = 0;
};

// Outcome of one run in a dual-model workload log.
struct WorkloadResult {
    std::string file;
    std::string scenario; // "baseline", "xsched", ...
    std::string high_model, low_model;
    double high_rate = 0, high_p50_ms = 0, high_p99_ms = 0;
    double low_iter_s = 0, low_img_s = 0;
    int low_batch = 0;
};

class Sink {
public:
    virtual ~Sink() = default;
    virtual void begin_file(const std::string & /*path*/, std::string_view /*format*/) {}
    virtual void hqd(const HqdRecord &) {}
    // An hqds dump's "Device is stopped" for a GPU: it has no HQD rows to show.
    virtual void hqd_device_stopped(uint32_t /*node*/, const std::string & /*gpu_id*/) {}
    virtual void mqd(const MqdRecord &) {}
    virtual void trace_event(const TraceEvent &) {}
    virtual void lost_events(uint64_t /*n*/) {}
    virtual void hip_queue(const HipQueueRecord &) {}
    // A stream was given an existing hardware queue ("Selected queue refCount").
    virtual void hip_queue_used(const HipQueueRecord &) {}
    virtual void dispatch(const DispatchRecord &) {}
    virtual void api_span(const ApiSpan &) {}
    virtual void workload(const WorkloadResult &) {}
    virtual void end_file() {}
};

} // namespace amdqp
