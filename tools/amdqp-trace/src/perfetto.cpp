#include "perfetto.h"

#include <algorithm>
#include <cmath>

#include "census.h"
#include "text.h"

namespace amdqp {

namespace {
constexpr int64_t kGpuPidBase = 1'000'000'000; // pseudo processes for per-GPU tracks

// Microseconds with nanosecond resolution, as the trace clocks have.
double us(double v) {
    return std::round(v * 1000.0) / 1000.0;
}

bool kfd_probe(std::string_view n, std::string_view &func, bool &entry) {
    for (std::string_view suffix : {std::string_view("_entry"), std::string_view("_exit")})
        if (n.size() > suffix.size() && n.substr(n.size() - suffix.size()) == suffix &&
            is_kfd_queue_function(n.substr(0, n.size() - suffix.size()))) {
            func = n.substr(0, n.size() - suffix.size());
            entry = suffix == "_entry";
            return true;
        }
    return false;
}
} // namespace

PerfettoWriter::PerfettoWriter(std::ostream &os, TimelineOptions opt)
    : os_(os), opt_(std::move(opt)) {
    os_ << "{\"displayTimeUnit\":\"ns\",\"traceEvents\":[\n";
}

PerfettoWriter::~PerfettoWriter() {
    close();
}

double PerfettoWriter::start_edge() const {
    double edge = file_first_.value_or(0);
    if (opt_.from_us) {
        double from =
            opt_.from_relative && first_seen_ ? *first_seen_ + *opt_.from_us : *opt_.from_us;
        edge = std::max(edge, from);
    }
    return edge;
}

double PerfettoWriter::end_edge() const {
    double edge = file_last_;
    if (opt_.to_us) {
        double to = opt_.to_relative && first_seen_ ? *first_seen_ + *opt_.to_us : *opt_.to_us;
        edge = std::min(edge, to);
    }
    return edge;
}

void PerfettoWriter::begin_file(const std::string &, std::string_view) {
    close_spans();
    file_first_.reset();
    file_last_ = 0;
}

void PerfettoWriter::end_file() {
    close_spans();
}

void PerfettoWriter::close_spans() {
    // A span still open ran to the end of the capture (or of the window).
    for (const auto &[span, st] : open_)
        for (uint32_t i = 0; i < st.first; ++i) {
            const auto &[pid, tid, name] = span;
            Json ev;
            ev["ph"] = "E";
            ev["name"] = name;
            ev["cat"] = st.second;
            ev["pid"] = pid;
            ev["tid"] = tid;
            ev["ts"] = us(end_edge());
            ev["args"] = {{"amdqp_closed", "still open at the end of the capture or window"}};
            ++closed_spans_;
            emit(ev, true);
        }
    open_.clear();
}

void PerfettoWriter::close() {
    if (closed_)
        return;
    close_spans();
    closed_ = true;
    os_ << "\n]";
    if (truncated_)
        os_ << ",\"otherData\":{\"amdqp_truncated\":"
            << json_dump("output reached --max-size; later events left out") << "}";
    os_ << "}\n";
    os_.flush();
}

bool PerfettoWriter::wanted(const char *cls, double ts) {
    if (!first_seen_)
        first_seen_ = ts;
    if (!file_first_)
        file_first_ = ts;
    file_last_ = std::max(file_last_, ts);
    if (!opt_.only.empty() && !opt_.only.count(cls))
        return false;
    if (opt_.from_us) {
        double from = opt_.from_relative ? *first_seen_ + *opt_.from_us : *opt_.from_us;
        if (ts < from)
            return false;
    }
    if (opt_.to_us) {
        double to = opt_.to_relative ? *first_seen_ + *opt_.to_us : *opt_.to_us;
        if (ts > to) {
            after_window_ = true;
            return false;
        }
    }
    return !truncated_;
}

bool PerfettoWriter::emit(const Json &ev, bool force) {
    std::string line = json_dump(ev);
    if (!force && opt_.max_bytes && bytes_ + line.size() + 2 > opt_.max_bytes) {
        truncated_ = true;
        return false;
    }
    if (events_++) {
        os_ << ",\n";
        bytes_ += 2;
    }
    os_ << line;
    bytes_ += line.size();
    return true;
}

void PerfettoWriter::begin(const Span &s, const std::string &cat, double ts, Json args) {
    auto it = open_.find(s);
    if (it == open_.end()) {
        if (open_.size() >= kMaxEntities)
            return;
        it = open_.emplace(s, std::make_pair(0u, cat)).first;
    }
    ++it->second.first;
    const auto &[pid, tid, name] = s;
    Json ev;
    ev["ph"] = "B";
    ev["name"] = name;
    ev["cat"] = cat;
    ev["pid"] = pid;
    ev["tid"] = tid;
    ev["ts"] = us(ts);
    if (!args.is_null())
        ev["args"] = std::move(args);
    if (!emit(ev))
        --it->second.first; // over --max-size: never begun, so never closed
}

void PerfettoWriter::end(const Span &s, const std::string &cat, double ts, Json args) {
    const auto &[pid, tid, name] = s;
    auto it = open_.find(s);
    if (it == open_.end() || it->second.first == 0) {
        // The span began before the capture (or the window): it starts at the edge.
        Json b;
        b["ph"] = "B";
        b["name"] = name;
        b["cat"] = cat;
        b["pid"] = pid;
        b["tid"] = tid;
        b["ts"] = us(std::min(start_edge(), ts));
        b["args"] = {{"amdqp_closed", "begun before the capture or window"}};
        ++closed_spans_;
        emit(b);
    } else {
        --it->second.first;
    }
    Json ev;
    ev["ph"] = "E";
    ev["name"] = name;
    ev["cat"] = cat;
    ev["pid"] = pid;
    ev["tid"] = tid;
    ev["ts"] = us(ts);
    if (!args.is_null())
        ev["args"] = std::move(args);
    emit(ev);
}

int64_t PerfettoWriter::gpu_track(const std::string &gpu) {
    auto it = gpu_pids_.find(gpu);
    if (it != gpu_pids_.end())
        return it->second;
    if (gpu_pids_.size() >= kMaxEntities)
        return kGpuPidBase;
    int64_t pid = kGpuPidBase + static_cast<int64_t>(gpu_pids_.size()) + 1;
    gpu_pids_.emplace(gpu, pid);
    Json ev;
    ev["ph"] = "M";
    ev["name"] = "process_name";
    ev["pid"] = pid;
    ev["args"] = {{"name", "GPU " + gpu + " (amdqp)"}};
    emit(ev, true);
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
    Json ev;
    ev["ph"] = "M";
    ev["name"] = "thread_name";
    ev["pid"] = pid;
    ev["tid"] = tid;
    ev["args"] = {{"name", "queue " + queue}};
    emit(ev, true);
    return tid;
}

void PerfettoWriter::trace_event(const TraceEvent &e) {
    if (e.name == "amdqp_suspend_batch" || e.name == "amdqp_resume_batch") {
        if (!wanted("amdqp", e.ts_us))
            return;
        auto id = kv_u64(e.body, "gpu_id");
        int64_t gp = gpu_track(id ? gpu_hex(*id) : "?");
        Span s{gp, 1, "suspended"};
        Json args = {{"event", std::string(e.body)}};
        // Suspended time is the span between a suspend batch and the next resume;
        // another suspend of a suspended GPU does not open a second one.
        if (e.name == "amdqp_resume_batch")
            end(s, "amdqp", e.ts_us, std::move(args));
        else if (auto it = open_.find(s); it == open_.end() || it->second.first == 0)
            begin(s, "amdqp", e.ts_us, std::move(args));
        return;
    }
    std::string_view func;
    bool entry = false;
    if (kfd_probe(e.name, func, entry)) {
        if (!wanted("kfd", e.ts_us))
            return;
        Span s{e.pid, e.pid, std::string(func)};
        if (entry)
            begin(s, "kfd", e.ts_us);
        else
            end(s, "kfd", e.ts_us);
        return;
    }
    std::string name(e.name);
    const char *cls = starts_with(e.name, "amdqp_") ? "amdqp" : "ftrace";
    if (e.name == "function") {
        std::string_view b = e.body;
        name = std::string(next_token(b));
        if (is_kfd_queue_function(name))
            cls = "kfd";
    }
    if (!wanted(cls, e.ts_us))
        return;
    Json ev;
    ev["ph"] = "i";
    ev["s"] = "t";
    ev["name"] = name;
    ev["cat"] = cls == std::string_view("kfd") ? "kfd" : "ftrace";
    ev["pid"] = e.pid;
    ev["tid"] = e.pid;
    ev["ts"] = us(e.ts_us);
    ev["args"] = {{"task", std::string(e.task)}, {"cpu", e.cpu}, {"body", std::string(e.body)}};
    emit(ev);
}

void PerfettoWriter::hip_queue(const HipQueueRecord &q) {
    if (!wanted("hip", q.ts_us))
        return;
    std::string label = hex(q.hwq);
    int64_t tid = queue_track(q.pid, "dev" + std::to_string(q.device) + " " + label);
    Json ev;
    ev["ph"] = "i";
    ev["s"] = "t";
    ev["name"] = q.created ? "HW queue created" : "HW queue deleted";
    ev["cat"] = "hip";
    ev["pid"] = q.pid;
    ev["tid"] = tid;
    ev["ts"] = us(q.ts_us);
    ev["args"] = {{"hwq", label}, {"size", q.size}, {"priority", q.priority}};
    emit(ev);
}

void PerfettoWriter::dispatch(const DispatchRecord &d) {
    if (!wanted("dispatch", d.ts_us))
        return;
    int64_t tid = queue_track(d.pid, d.gpu + " " + d.queue);
    Json ev;
    ev["ph"] = d.dur_us > 0 ? "X" : "i";
    if (d.dur_us <= 0)
        ev["s"] = "t";
    ev["name"] = std::string(d.kernel);
    ev["cat"] = d.source;
    ev["pid"] = d.pid;
    ev["tid"] = tid;
    ev["ts"] = us(d.ts_us);
    if (d.dur_us > 0)
        ev["dur"] = us(d.dur_us);
    emit(ev);
}

void PerfettoWriter::api_span(const ApiSpan &a) {
    if (!wanted("api", a.ts_us))
        return;
    Json ev;
    ev["ph"] = "X";
    ev["name"] = std::string(a.name);
    ev["cat"] = std::string(a.category);
    ev["pid"] = a.pid;
    ev["tid"] = a.tid;
    ev["ts"] = us(a.ts_us);
    ev["dur"] = us(a.dur_us);
    emit(ev);
}

} // namespace amdqp
