#include "perfetto.h"

#include <cstdio>

#include "census.h"
#include "json.h"
#include "text.h"

namespace amdqp {

namespace {
constexpr int64_t kGpuPidBase = 1'000'000'000; // pseudo processes for per-GPU tracks

std::string num(double v) {
    char b[40];
    std::snprintf(b, sizeof b, "%.3f", v);
    return b;
}
} // namespace

PerfettoWriter::PerfettoWriter(std::ostream &os) : os_(os) {
    os_ << "{\"displayTimeUnit\":\"ns\",\"traceEvents\":[\n";
}

PerfettoWriter::~PerfettoWriter() {
    close();
}

void PerfettoWriter::close() {
    if (closed_)
        return;
    closed_ = true;
    os_ << "\n]}\n";
    os_.flush();
}

void PerfettoWriter::emit(const std::string &json) {
    if (events_++)
        os_ << ",\n";
    os_ << json;
}

int64_t PerfettoWriter::gpu_track(const std::string &gpu) {
    auto it = gpu_pids_.find(gpu);
    if (it != gpu_pids_.end())
        return it->second;
    if (gpu_pids_.size() >= kMaxEntities)
        return kGpuPidBase;
    int64_t pid = kGpuPidBase + static_cast<int64_t>(gpu_pids_.size()) + 1;
    gpu_pids_.emplace(gpu, pid);
    emit("{\"ph\":\"M\",\"name\":\"process_name\",\"pid\":" + std::to_string(pid) +
         ",\"args\":{\"name\":" + json_str("GPU " + gpu + " (amdqp)") + "}}");
    return pid;
}

int64_t PerfettoWriter::queue_track(int64_t pid, const std::string &queue) {
    auto key = std::make_pair(pid, queue);
    auto it = queue_tids_.find(key);
    if (it != queue_tids_.end())
        return it->second;
    if (queue_tids_.size() >= kMaxEntities)
        return 0;
    // Synthetic thread ids, one per queue, far above real tids.
    int64_t tid = 2'000'000'000 + static_cast<int64_t>(queue_tids_.size());
    queue_tids_.emplace(key, tid);
    emit("{\"ph\":\"M\",\"name\":\"thread_name\",\"pid\":" + std::to_string(pid) + ",\"tid\":" +
         std::to_string(tid) + ",\"args\":{\"name\":" + json_str("queue " + queue) + "}}");
    return tid;
}

void PerfettoWriter::trace_event(const TraceEvent &e) {
    std::string pid = std::to_string(e.pid);
    std::string ts = num(e.ts_us);
    if (e.name == "amdqp_suspend_batch" || e.name == "amdqp_resume_batch") {
        auto id = kv_u64(e.body, "gpu_id");
        std::string gpu = id ? gpu_hex(*id) : "?";
        int64_t gp = gpu_track(gpu);
        bool s = e.name == "amdqp_suspend_batch";
        // Suspended time is the span between a suspend batch and the next resume.
        emit(std::string("{\"ph\":\"") + (s ? "B" : "E") +
             "\",\"name\":\"suspended\",\"cat\":\"amdqp\",\"pid\":" + std::to_string(gp) +
             ",\"tid\":1,\"ts\":" + ts + ",\"args\":{\"event\":" + json_str(e.body) + "}}");
        return;
    }
    std::string_view n = e.name;
    for (std::string_view suffix : {std::string_view("_entry"), std::string_view("_exit")})
        if (n.size() > suffix.size() && n.substr(n.size() - suffix.size()) == suffix &&
            is_kfd_queue_function(n.substr(0, n.size() - suffix.size()))) {
            emit(std::string("{\"ph\":\"") + (suffix == "_entry" ? "B" : "E") +
                 "\",\"name\":" + json_str(n.substr(0, n.size() - suffix.size())) +
                 ",\"cat\":\"kfd\",\"pid\":" + pid + ",\"tid\":" + pid + ",\"ts\":" + ts + "}");
            return;
        }
    std::string name(e.name);
    if (e.name == "function") {
        std::string_view b = e.body;
        name = std::string(next_token(b));
    }
    emit("{\"ph\":\"i\",\"s\":\"t\",\"name\":" + json_str(name) + ",\"cat\":\"ftrace\",\"pid\":" +
         pid + ",\"tid\":" + pid + ",\"ts\":" + ts + ",\"args\":{\"task\":" + json_str(e.task) +
         ",\"cpu\":" + std::to_string(e.cpu) + ",\"body\":" + json_str(e.body) + "}}");
}

void PerfettoWriter::hip_queue(const HipQueueRecord &q) {
    std::string label = hex(q.hwq);
    int64_t tid = queue_track(q.pid, "dev" + std::to_string(q.device) + " " + label);
    emit(std::string("{\"ph\":\"i\",\"s\":\"t\",\"name\":") +
         json_str(q.created ? "HW queue created" : "HW queue deleted") +
         ",\"cat\":\"hip\",\"pid\":" + std::to_string(q.pid) + ",\"tid\":" + std::to_string(tid) +
         ",\"ts\":" + num(q.ts_us) + ",\"args\":{\"hwq\":" + json_str(label) + ",\"size\":" +
         std::to_string(q.size) + ",\"priority\":" + std::to_string(q.priority) + "}}");
}

void PerfettoWriter::dispatch(const DispatchRecord &d) {
    int64_t tid = queue_track(d.pid, d.gpu + " " + d.queue);
    std::string common = ",\"name\":" + json_str(d.kernel) + ",\"cat\":" + json_str(d.source) +
                         ",\"pid\":" + std::to_string(d.pid) + ",\"tid\":" + std::to_string(tid) +
                         ",\"ts\":" + num(d.ts_us);
    if (d.dur_us > 0)
        emit("{\"ph\":\"X\"" + common + ",\"dur\":" + num(d.dur_us) + "}");
    else
        emit("{\"ph\":\"i\",\"s\":\"t\"" + common + "}");
}

void PerfettoWriter::api_span(const ApiSpan &a) {
    emit("{\"ph\":\"X\",\"name\":" + json_str(a.name) + ",\"cat\":" + json_str(a.category) +
         ",\"pid\":" + std::to_string(a.pid) + ",\"tid\":" + std::to_string(a.tid) +
         ",\"ts\":" + num(a.ts_us) + ",\"dur\":" + num(a.dur_us) + "}");
}

} // namespace amdqp
