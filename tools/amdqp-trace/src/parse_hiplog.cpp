// Parser for HIP runtime logs (AMD_LOG_LEVEL=3 on stderr):
//   ":3:rocdevice.cpp            :3048: 6306223714 us:  Created SWq=... HWq=..."
// Lines that are not runtime log lines are the application's own output and are
// skipped, except "Process ID: N" which some test programs print (pid fallback).
#include <unordered_map>

#include "error.h"
#include "parsers.h"
#include "text.h"

namespace amdqp {

namespace {

constexpr size_t kMaxStreams = 1 << 16; // cap per-file state

std::optional<uint64_t> hex_after(std::string_view s, std::string_view key) {
    auto p = s.find(key);
    if (p == std::string_view::npos)
        return std::nullopt;
    std::string_view rest = s.substr(p + key.size());
    if (!starts_with(rest, "0x"))
        return std::nullopt;
    size_t n = 2;
    while (n < rest.size() && std::isxdigit(static_cast<unsigned char>(rest[n])))
        ++n;
    return parse_u64(rest.substr(0, n), 16);
}

std::optional<uint64_t> dec_after(std::string_view s, std::string_view key) {
    auto p = s.find(key);
    if (p == std::string_view::npos)
        return std::nullopt;
    std::string_view rest = s.substr(p + key.size());
    size_t n = 0;
    while (n < rest.size() && rest[n] >= '0' && rest[n] <= '9')
        ++n;
    return parse_u64(rest.substr(0, n));
}

// A log can hold several processes: their lines interleave when the ranks of
// one job share stderr (runtimes that tag lines with "[pid:N tid:T]"), or follow
// each other when runs are appended to one file. Streams, the queue a new stream
// is given and the current device are per process (and per thread: hipSetDevice
// and the stream of the last API call are thread state), so they are kept apart.
struct StreamInfo {
    uint64_t hwq = 0;
    int device = 0;
};

struct ThreadState {
    int device = 0;
    uint64_t cur_stream = 0;
    uint64_t pending_hwq = 0; // queue chosen for the stream being created
};

struct ProcState {
    std::unordered_map<uint64_t, StreamInfo> streams;
    std::unordered_map<uint64_t, int> hwq_device;
    std::unordered_map<int64_t, ThreadState> threads;
};

class HipLogParser final : public LineParser {
public:
    explicit HipLogParser(Sink &s) : sink_(s) {}

    void line(std::string_view raw, uint64_t lineno) override {
        std::string_view l = trim(raw);
        if (l.size() < 3 || l[0] != ':' || l[1] < '0' || l[1] > '9' || l[2] != ':') {
            other_line(l);
            return;
        }
        // ":L:file.cpp <pad>:LINE<pad>: TS us: message"
        std::string_view rest = l.substr(3);
        auto c1 = rest.find(':');
        if (c1 == std::string_view::npos)
            throw ParseError(lineno, "malformed HIP log line (no source location)");
        rest = rest.substr(c1 + 1);
        auto c2 = rest.find(':');
        if (c2 == std::string_view::npos || !parse_u64(trim(rest.substr(0, c2))))
            throw ParseError(lineno, "malformed HIP log line (bad source line number)");
        rest = rest.substr(c2 + 1);
        auto us = rest.find(" us:");
        if (us == std::string_view::npos)
            throw ParseError(lineno, "malformed HIP log line (no 'NNN us:' timestamp)");
        auto ts = parse_u64(trim(rest.substr(0, us)));
        if (!ts)
            throw ParseError(lineno, "malformed HIP log timestamp");
        ts_ = static_cast<double>(*ts);
        std::string_view msg = trim(rest.substr(us + 4));
        tid_ = 0;
        if (starts_with(msg, "[pid:")) { // newer runtimes tag lines with pid/tid
            if (auto p = dec_after(msg, "[pid:"))
                pid_ = static_cast<int64_t>(*p);
            if (auto t = hex_after(msg, "tid:"))
                tid_ = static_cast<int64_t>(*t);
            else if (auto t2 = dec_after(msg, "tid:"))
                tid_ = static_cast<int64_t>(*t2);
            auto close = msg.find(']');
            msg = close == std::string_view::npos ? msg : trim(msg.substr(close + 1));
        }
        if (msg.find("Initalizing runtime stack") != std::string_view::npos ||
            msg.find("Initializing runtime stack") != std::string_view::npos)
            new_process();
        message(msg);
    }

    void finish(uint64_t) override {}

private:
    void other_line(std::string_view l) {
        // Header written by ftrace_scripts/amdqp-capture, or the app's own banner.
        if (starts_with(l, "# amdqp-capture") || starts_with(l, "Process ID:")) {
            auto p = starts_with(l, "#") ? dec_after(l, "pid=") : dec_after(l, "Process ID: ");
            if (!p) {
                std::string_view r = l.substr(11);
                p = parse_u64(trim(r));
            }
            if (p)
                set_untagged_pid(static_cast<int64_t>(*p));
        }
    }

    // Lines without a pid tag belong to the process the log last named. Until
    // its pid is printed, its state is kept under 0 and moves over then.
    void set_untagged_pid(int64_t pid) {
        if (pid == pid_)
            return;
        if (pid_ == 0 && procs_.count(0) && !procs_.count(pid)) {
            procs_[pid] = std::move(procs_[0]);
            procs_.erase(0);
        }
        pid_ = pid;
    }

    // The runtime of another run of the program starts (logs appended to one
    // file): without pid tags its lines must not join the previous process.
    void new_process() {
        if (tid_ != 0)
            return; // tagged lines say which process they are
        procs_.erase(0);
        if (pid_ != 0)
            procs_.erase(pid_);
        pid_ = 0;
    }

    ProcState &proc() {
        auto it = procs_.find(pid_);
        if (it != procs_.end())
            return it->second;
        if (procs_.size() >= kMaxStreams)
            procs_.clear(); // bounded state; a log with this many processes is not sane
        return procs_[pid_];
    }

    ThreadState &thread(ProcState &p) {
        if (p.threads.size() >= kMaxStreams && !p.threads.count(tid_))
            p.threads.clear();
        return p.threads[tid_];
    }

    std::string queue_label(const ProcState &p, uint64_t stream) const {
        auto it = p.streams.find(stream);
        if (it != p.streams.end())
            return hex(it->second.hwq);
        return stream == 0 ? "null-stream" : "stream " + hex(stream);
    }

    void queue_event(ProcState &p, ThreadState &t, uint64_t hwq, bool created, bool reused,
                     std::string_view m) {
        HipQueueRecord q;
        q.pid = pid_;
        q.tid = tid_;
        q.hwq = hwq;
        auto known = p.hwq_device.find(hwq);
        // A queue lives on the device it was created on, whatever the thread's
        // current device is when it is reused or deleted.
        q.device = created || known == p.hwq_device.end() ? t.device : known->second;
        if (created && p.hwq_device.size() < kMaxStreams)
            p.hwq_device[hwq] = t.device;
        q.size = created ? dec_after(m, "with size ").value_or(0) : 0;
        q.priority = created ? static_cast<int>(dec_after(m, "with priority ").value_or(0)) : 0;
        q.ts_us = ts_;
        q.created = created;
        if (reused)
            sink_.hip_queue_used(q);
        else
            sink_.hip_queue(q);
    }

    void message(std::string_view m) {
        ProcState &p = proc();
        ThreadState &t = thread(p);
        if (m.find("Created SWq=") != std::string_view::npos) {
            uint64_t hwq = hex_after(m, "HWq=").value_or(0);
            t.pending_hwq = hwq;
            queue_event(p, t, hwq, true, false, m);
            return;
        }
        if (starts_with(m, "Selected queue refCount:") ||
            starts_with(m, "acquireQueue refCount:")) {
            auto h = hex_after(m, "refCount: ");
            if (!h)
                h = hex_after(m, "refCount:");
            if (h) {
                t.pending_hwq = *h;
                queue_event(p, t, *h, false, true, m);
            }
            return;
        }
        if (starts_with(m, "Deleting hardware queue")) {
            uint64_t hwq = hex_after(m, "queue ").value_or(0);
            queue_event(p, t, hwq, false, false, m);
            p.hwq_device.erase(hwq);
            return;
        }
        if (starts_with(m, "hipStreamCreate") &&
            m.find("Returned hipSuccess") != std::string_view::npos) {
            auto s = hex_after(m, "stream:");
            if (s && t.pending_hwq && p.streams.size() < kMaxStreams) {
                auto d = p.hwq_device.find(t.pending_hwq);
                p.streams[*s] = {t.pending_hwq, d == p.hwq_device.end() ? t.device : d->second};
            }
            t.pending_hwq = 0;
            return;
        }
        if (starts_with(m, "ShaderName :") || starts_with(m, "ShaderName:")) {
            DispatchRecord d;
            d.source = "hip-log";
            d.pid = pid_;
            d.tid = tid_;
            auto st = p.streams.find(t.cur_stream);
            // A kernel runs on its stream's device, not on the thread's current one.
            int dev = st == p.streams.end() ? t.device : st->second.device;
            d.gpu = "dev" + std::to_string(dev);
            d.queue = queue_label(p, t.cur_stream);
            d.kernel = trim(m.substr(m.find(':') + 1));
            d.ts_us = ts_;
            sink_.dispatch(d);
            return;
        }
        // API entry lines look like "\x1b[32m hipLaunchKernel ( ..., stream:0x... ) \x1b[0m".
        auto open = m.find(" ( ");
        if (open != std::string_view::npos) {
            std::string_view api = trim(m.substr(0, open));
            if (auto esc = api.rfind(' '); esc != std::string_view::npos)
                api = api.substr(esc + 1);
            if (api == "hipSetDevice") {
                if (auto d = dec_after(m, " ( "); d && *d < 1u << 16)
                    t.device = static_cast<int>(*d);
            }
            if (m.find("stream:") != std::string_view::npos)
                t.cur_stream = hex_after(m, "stream:").value_or(0);
            else if (api.find("Launch") != std::string_view::npos)
                t.cur_stream = 0; // launch on the null stream
        }
    }

    Sink &sink_;
    int64_t pid_ = 0, tid_ = 0;
    double ts_ = 0;
    std::unordered_map<int64_t, ProcState> procs_;
};

} // namespace

std::unique_ptr<LineParser> make_hiplog_parser(Sink &s) {
    return std::make_unique<HipLogParser>(s);
}

} // namespace amdqp
