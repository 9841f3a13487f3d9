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
        if (starts_with(msg, "[pid:")) { // newer runtimes tag lines with pid/tid
            if (auto p = dec_after(msg, "[pid:"))
                pid_ = static_cast<int64_t>(*p);
            auto close = msg.find(']');
            msg = close == std::string_view::npos ? msg : trim(msg.substr(close + 1));
        }
        message(msg, lineno);
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
            if (p && pid_ == 0)
                pid_ = static_cast<int64_t>(*p);
        }
    }

    std::string queue_label(uint64_t stream) const {
        auto it = stream_hwq_.find(stream);
        if (it != stream_hwq_.end())
            return hex(it->second);
        return stream == 0 ? "null-stream" : "stream " + hex(stream);
    }

    void message(std::string_view m, uint64_t) {
        if (m.find("Created SWq=") != std::string_view::npos) {
            HipQueueRecord q;
            q.pid = pid_;
            q.hwq = hex_after(m, "HWq=").value_or(0);
            q.device = device_;
            q.size = dec_after(m, "with size ").value_or(0);
            q.priority = static_cast<int>(dec_after(m, "with priority ").value_or(0));
            q.ts_us = ts_;
            q.created = true;
            pending_hwq_ = q.hwq;
            sink_.hip_queue(q);
            return;
        }
        if (starts_with(m, "Selected queue refCount:") ||
            starts_with(m, "acquireQueue refCount:")) {
            if (auto h = hex_after(m, "refCount:"))
                pending_hwq_ = *h;
            else if (auto h2 = hex_after(m, "refCount: "))
                pending_hwq_ = *h2;
            return;
        }
        if (starts_with(m, "Deleting hardware queue")) {
            HipQueueRecord q;
            q.pid = pid_;
            q.hwq = hex_after(m, "queue ").value_or(0);
            q.device = device_;
            q.ts_us = ts_;
            q.created = false;
            sink_.hip_queue(q);
            return;
        }
        if (starts_with(m, "hipStreamCreate") &&
            m.find("Returned hipSuccess") != std::string_view::npos) {
            auto s = hex_after(m, "stream:");
            if (s && pending_hwq_ && stream_hwq_.size() < kMaxStreams)
                stream_hwq_[*s] = pending_hwq_;
            pending_hwq_ = 0;
            return;
        }
        if (starts_with(m, "ShaderName :") || starts_with(m, "ShaderName:")) {
            DispatchRecord d;
            d.source = "hip-log";
            d.pid = pid_;
            d.gpu = "dev" + std::to_string(device_);
            d.queue = queue_label(cur_stream_);
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
                if (auto d = dec_after(m, " ( "))
                    device_ = static_cast<int>(*d);
            }
            if (m.find("stream:") != std::string_view::npos)
                cur_stream_ = hex_after(m, "stream:").value_or(0);
            else if (api.find("Launch") != std::string_view::npos)
                cur_stream_ = 0; // launch on the null stream
        }
    }

    Sink &sink_;
    int64_t pid_ = 0;
    int device_ = 0;
    double ts_ = 0;
    uint64_t pending_hwq_ = 0;
    uint64_t cur_stream_ = 0;
    std::unordered_map<uint64_t, uint64_t> stream_hwq_;
};

} // namespace

std::unique_ptr<LineParser> make_hiplog_parser(Sink &s) {
    return std::make_unique<HipLogParser>(s);
}

} // namespace amdqp
