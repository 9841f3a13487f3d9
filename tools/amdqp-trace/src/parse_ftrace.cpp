// Parser for ftrace text: /sys/kernel/tracing/trace or trace_pipe output and
// `trace-cmd report` output. Handles tracepoint lines ("name: body"), function
// tracer lines ("func <-parent") and kprobe/kretprobe events.
#include "error.h"
#include "parsers.h"
#include "text.h"

namespace amdqp {

namespace {

bool is_ident(std::string_view s) {
    if (s.empty() || s.size() > 128)
        return false;
    for (char c : s) {
        bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                  c == '_' || c == '.' || c == '/';
        if (!ok)
            return false;
    }
    return true;
}

// Finds " [NNN] " (the CPU column): the first bracketed number that is followed,
// after the optional flags column, by "<seconds>:". Task names may contain brackets.
bool find_cpu(std::string_view l, size_t &open, size_t &close, int &cpu) {
    size_t pos = 0;
    while ((pos = l.find('[', pos)) != std::string_view::npos) {
        size_t o = pos++;
        size_t c = l.find(']', o);
        if (c == std::string_view::npos)
            return false;
        if (c == o + 1 || o == 0 || l[o - 1] != ' ' || c - o > 8)
            continue;
        auto v = parse_u64(l.substr(o + 1, c - o - 1));
        if (!v)
            continue;
        std::string_view rest = l.substr(c + 1);
        std::string_view t1 = next_token(rest);
        std::string_view t2 = next_token(rest);
        auto is_ts = [](std::string_view t) {
            return t.size() > 1 && t.back() == ':' &&
                   parse_seconds_us(t.substr(0, t.size() - 1)).has_value();
        };
        if (is_ts(t1) || is_ts(t2)) {
            open = o;
            close = c;
            cpu = static_cast<int>(*v);
            return true;
        }
    }
    return false;
}

class FtraceParser final : public LineParser {
public:
    explicit FtraceParser(Sink &s) : sink_(s) {}

    void line(std::string_view raw, uint64_t lineno) override {
        std::string_view l = trim(raw);
        if (l.empty() || l[0] == '#')
            return; // header and comments
        if (starts_with(l, "CPU:") || starts_with(l, "CPU ")) {
            // "CPU:3 [LOST 123 EVENTS]": the ring buffer overflowed.
            auto p = l.find("[LOST ");
            if (p != std::string_view::npos) {
                std::string_view rest = l.substr(p + 6);
                if (auto n = parse_u64(next_token(rest)))
                    sink_.lost_events(*n);
                return;
            }
            if (l.find("buffer started") != std::string_view::npos || l.ends_with(" is empty") ||
                l.find("data recorded") != std::string_view::npos)
                return; // trace-cmd banners
        }
        if (starts_with(l, "cpus=") || starts_with(l, "version ="))
            return; // trace-cmd report preamble
        size_t o = 0, c = 0;
        int cpu = 0;
        if (!find_cpu(l, o, c, cpu))
            throw ParseError(lineno, "not an ftrace event line (no '[cpu] timestamp:'): '" +
                                         std::string(l.substr(0, 80)) + "'");
        TraceEvent ev;
        ev.cpu = cpu;
        std::string_view taskpid = trim(l.substr(0, o));
        // Optional tgid column: "bash-1234 ( 1234)".
        if (!taskpid.empty() && taskpid.back() == ')') {
            auto paren = taskpid.rfind('(');
            if (paren != std::string_view::npos)
                taskpid = trim(taskpid.substr(0, paren));
        }
        auto dash = taskpid.rfind('-');
        if (dash == std::string_view::npos)
            throw ParseError(lineno, "malformed task-pid column '" +
                                         std::string(taskpid.substr(0, 40)) + "'");
        auto pid = parse_i64(taskpid.substr(dash + 1));
        if (!pid)
            throw ParseError(lineno,
                             "malformed pid in '" + std::string(taskpid.substr(0, 40)) + "'");
        ev.task = taskpid.substr(0, dash);
        ev.pid = *pid;
        std::string_view rest = l.substr(c + 1);
        std::string_view tok = next_token(rest);
        if (tok.empty() || tok.back() != ':' || !parse_seconds_us(tok.substr(0, tok.size() - 1)))
            tok = next_token(rest); // skip the irq/preempt flags column
        auto ts = parse_seconds_us(tok.substr(0, tok.size() - 1));
        if (!ts)
            throw ParseError(lineno, "malformed timestamp");
        ev.ts_us = *ts;
        rest = trim(rest);
        auto colon = rest.find(':');
        auto arrow = rest.find(" <-");
        if (arrow != std::string_view::npos && (colon == std::string_view::npos || colon > arrow)) {
            // function tracer: "func <-parent"
            ev.name = "function";
            ev.body = rest;
        } else {
            if (colon == std::string_view::npos)
                throw ParseError(lineno, "event line without 'name:' after the timestamp");
            ev.name = rest.substr(0, colon);
            ev.body = trim(rest.substr(colon + 1));
            if (!is_ident(ev.name))
                throw ParseError(lineno, "malformed event name '" +
                                             std::string(ev.name.substr(0, 40)) + "'");
        }
        sink_.trace_event(ev);
    }

    void finish(uint64_t) override {}

private:
    Sink &sink_;
};

} // namespace

std::unique_ptr<LineParser> make_ftrace_parser(Sink &s) {
    return std::make_unique<FtraceParser>(s);
}

} // namespace amdqp
