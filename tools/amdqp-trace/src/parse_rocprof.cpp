// Parser for rocprof Chrome-trace JSON ({"traceEvents":[...]} or a bare array)
// and for rocprofv3's own JSON ({"rocprofiler-sdk-tool":[{"metadata":...,
// "agents":[...],"kernel_symbols":[...],"buffer_records":{"kernel_dispatch":[...]}}]}).
// A small incremental JSON reader: it validates the whole document but keeps only
// the scalars of the event being read (and of its "args"), so memory stays bounded
// however long the trace is.
#include <cctype>
#include <cmath>
#include <cstdlib>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "error.h"
#include "parsers.h"
#include "text.h"

namespace amdqp {

namespace {

constexpr size_t kMaxString = 1 << 20; // longest JSON string we accept
constexpr size_t kMaxDepth = 64;
constexpr size_t kMaxFields = 256; // fields kept per event; the rest are skipped
constexpr size_t kMaxPidNames = 4096;

constexpr size_t kMaxKernelName = 4096;
constexpr size_t kMaxSymbols = 1 << 16;

// The rocprofv3 objects whose scalars are collected, by their parent's path.
enum class V3Rec { None, Metadata, Agent, Symbol, Dispatch };

class RocprofParser final : public LineParser {
public:
    RocprofParser(Sink &s, bool v3) : sink_(s), v3_(v3) {}

    void source_name(std::string_view name) override { name_pid_ = rocprof_pid_from_name(name); }

    void line(std::string_view l, uint64_t lineno) override {
        lineno_ = lineno;
        for (char c : l)
            feed(c);
        feed('\n');
    }

    void line_part(std::string_view chunk, uint64_t lineno) override {
        lineno_ = lineno;
        for (char c : chunk)
            feed(c);
    }

    void finish(uint64_t lineno) override {
        lineno_ = lineno ? lineno : 1;
        if (st_ == St::Num)
            end_number();
        else if (st_ == St::Lit)
            end_literal();
        if (!done_)
            fail(seen_any_ ? "truncated JSON document (unexpected end of file)"
                           : "empty JSON document");
    }

private:
    enum class Ctx { Obj, Arr };
    enum class St { Value, Str, StrEsc, StrU, Num, Lit, AfterValue, Key, Colon };

    [[noreturn]] void fail(const std::string &m) { throw ParseError(lineno_, m); }

    void feed(char c) {
        switch (st_) {
        case St::Str:
            if (c == '"')
                end_string();
            else if (c == '\\')
                st_ = St::StrEsc;
            else if (static_cast<unsigned char>(c) < 0x20)
                fail("control character inside a JSON string");
            else
                put(c);
            return;
        case St::StrEsc:
            if (c == 'u') {
                st_ = St::StrU;
                uleft_ = 4;
                return;
            }
            switch (c) {
            case '"':
            case '\\':
            case '/':
                put(c);
                break;
            case 'n':
                put('\n');
                break;
            case 't':
                put('\t');
                break;
            case 'r':
                put('\r');
                break;
            case 'b':
                put('\b');
                break;
            case 'f':
                put('\f');
                break;
            default:
                fail("invalid escape in JSON string");
            }
            st_ = St::Str;
            return;
        case St::StrU:
            if (!std::isxdigit(static_cast<unsigned char>(c)))
                fail("invalid \\u escape in JSON string");
            if (--uleft_ == 0) {
                put('?'); // names we care about are ASCII
                st_ = St::Str;
            }
            return;
        case St::Num:
            if ((c >= '0' && c <= '9') || c == '.' || c == 'e' || c == 'E' || c == '+' ||
                c == '-') {
                put(c);
                return;
            }
            end_number();
            break; // c still needs handling
        case St::Lit:
            if (c >= 'a' && c <= 'z') {
                put(c);
                return;
            }
            end_literal();
            break;
        default:
            break;
        }
        if (c == ' ' || c == '\t' || c == '\n' || c == '\r')
            return;
        seen_any_ = true;
        if (done_)
            fail("trailing data after the JSON document");
        switch (st_) {
        case St::Value:
            begin_value(c);
            return;
        case St::Key:
            if (c == '"') {
                buf_.clear();
                reading_key_ = true;
                st_ = St::Str;
            } else if (c == '}' && allow_close_) {
                close(Ctx::Obj);
            } else {
                fail("expected a quoted key in JSON object");
            }
            return;
        case St::Colon:
            if (c != ':')
                fail("expected ':' after JSON key");
            st_ = St::Value;
            allow_close_ = false;
            return;
        case St::AfterValue:
            if (stack_.empty())
                fail("trailing data after the JSON document");
            if (c == ',') {
                if (stack_.back() == Ctx::Obj) {
                    st_ = St::Key;
                    allow_close_ = false;
                } else {
                    st_ = St::Value;
                    allow_close_ = false;
                }
            } else if (c == '}') {
                close(Ctx::Obj);
            } else if (c == ']') {
                close(Ctx::Arr);
            } else {
                fail(std::string("unexpected '") + c +
                     "' in JSON (expected ',' or a closing bracket)");
            }
            return;
        default:
            fail("internal JSON state error");
        }
    }

    void put(char c) {
        if (buf_.size() >= kMaxString)
            fail("JSON string or number longer than 1 MiB");
        buf_.push_back(c);
    }

    void begin_value(char c) {
        if (c == '{' || c == '[') {
            if (stack_.size() >= kMaxDepth)
                fail("JSON nested deeper than 64 levels");
            Ctx k = c == '{' ? Ctx::Obj : Ctx::Arr;
            open(k);
            st_ = k == Ctx::Obj ? St::Key : St::Value;
            allow_close_ = true;
            return;
        }
        if (c == ']' && allow_close_ && !stack_.empty() && stack_.back() == Ctx::Arr) {
            close(Ctx::Arr);
            return;
        }
        buf_.clear();
        if (c == '"') {
            reading_key_ = false;
            st_ = St::Str;
        } else if (c == '-' || (c >= '0' && c <= '9')) {
            put(c);
            st_ = St::Num;
        } else if (c == 't' || c == 'f' || c == 'n') {
            put(c);
            st_ = St::Lit;
        } else {
            fail(std::string("unexpected character '") +
                 (std::isprint(static_cast<unsigned char>(c)) ? c : '?') +
                 "' where a JSON value was expected");
        }
    }

    void end_string() {
        if (reading_key_) {
            key_ = buf_;
            reading_key_ = false;
            st_ = St::Colon;
            return;
        }
        scalar(buf_);
    }

    void end_number() {
        std::string_view n = buf_;
        if (n == "-" || n.empty())
            fail("malformed JSON number");
        scalar(buf_);
    }

    void end_literal() {
        if (buf_ != "true" && buf_ != "false" && buf_ != "null")
            fail("invalid JSON literal '" + buf_.substr(0, 20) + "'");
        scalar(buf_);
    }

    // Depth bookkeeping: where are we relative to the events array?
    void open(Ctx k) {
        std::string key = stack_.empty() || stack_.back() == Ctx::Arr ? std::string() : key_;
        stack_.push_back(k);
        keys_.push_back(key);
        size_t d = stack_.size();
        if (v3_) {
            open_v3(k, key);
            return;
        }
        if (d == 1 && k == Ctx::Arr)
            events_depth_ = 1; // bare array of events
        if (d == 2 && k == Ctx::Arr && keys_[1] == "traceEvents" && stack_[0] == Ctx::Obj)
            events_depth_ = 2;
        if (events_depth_ && d == events_depth_ + 1 && k == Ctx::Obj) {
            in_event_ = true;
            fields_.clear();
        }
    }

    void close(Ctx k) {
        if (stack_.empty() || stack_.back() != k)
            fail(k == Ctx::Obj ? "unmatched '}' in JSON" : "unmatched ']' in JSON");
        size_t d = stack_.size();
        if (v3_) {
            if (rec_ != V3Rec::None && d == rec_depth_)
                v3_record();
            paths_.pop_back();
        }
        if (in_event_ && d == events_depth_ + 1) {
            in_event_ = false;
            event();
        }
        if (d == events_depth_)
            events_depth_ = 0;
        stack_.pop_back();
        keys_.pop_back();
        st_ = St::AfterValue;
        allow_close_ = false;
        if (stack_.empty())
            done_ = true;
    }

    void scalar(const std::string &v) {
        st_ = St::AfterValue;
        allow_close_ = false;
        if (stack_.empty()) {
            done_ = true; // a bare scalar document: valid JSON, no events
            return;
        }
        if (v3_) {
            if (rec_ != V3Rec::None && stack_.back() == Ctx::Obj && fields_.size() < kMaxFields)
                fields_.emplace_back(paths_.back().substr(rec_path_len_) + "/" + key_, v);
            return;
        }
        if (!in_event_ || stack_.back() != Ctx::Obj || fields_.size() >= kMaxFields)
            return;
        size_t d = stack_.size();
        if (d == events_depth_ + 1)
            fields_.emplace_back(key_, v);
        else if (d == events_depth_ + 2 && keys_.back() == "args")
            fields_.emplace_back("args." + key_, v);
    }

    // Containers are named by their path: "" the document, "/key" a member,
    // "/#" an array element. Records of interest are recognised by the path of
    // the container that holds them.
    void open_v3(Ctx k, const std::string &key) {
        const std::string &parent = paths_.empty() ? std::string() : paths_.back();
        bool in_array = stack_.size() >= 2 && stack_[stack_.size() - 2] == Ctx::Arr;
        paths_.push_back(stack_.size() == 1 ? std::string()
                                            : parent + (in_array ? "/#" : "/" + key));
        if (k != Ctx::Obj || rec_ != V3Rec::None)
            return;
        static const std::string tool = "/rocprofiler-sdk-tool/#";
        V3Rec r = V3Rec::None;
        if (paths_.back() == tool + "/metadata")
            r = V3Rec::Metadata;
        else if (parent == tool + "/agents")
            r = V3Rec::Agent;
        else if (parent == tool + "/kernel_symbols")
            r = V3Rec::Symbol;
        else if (parent == tool + "/buffer_records/kernel_dispatch")
            r = V3Rec::Dispatch;
        if (r == V3Rec::None)
            return;
        rec_ = r;
        rec_depth_ = stack_.size();
        rec_path_len_ = paths_.back().size();
        fields_.clear();
    }

    static uint64_t unum(const std::string *s) {
        if (!s)
            return 0;
        if (auto v = parse_u64(*s))
            return *v;
        double d = num(s);
        return d >= 0 && d < 1.8e19 ? static_cast<uint64_t>(d) : 0;
    }

    void v3_record() {
        V3Rec r = rec_;
        rec_ = V3Rec::None;
        switch (r) {
        case V3Rec::Metadata:
            if (const std::string *p = field("/pid"))
                pid_ = id(p);
            return;
        case V3Rec::Agent: {
            // KFD's gpu id names the GPU the way kfd debugfs does, so rocprofv3
            // rows join the hqds/mqds ones; CPU agents have none.
            uint64_t gpu_id = unum(field("/gpu_id"));
            std::string label =
                gpu_id ? gpu_hex(gpu_id) : "node" + std::to_string(unum(field("/node_id")));
            if (agents_.size() < kMaxPidNames)
                agents_[unum(field("/id/handle"))] = label;
            return;
        }
        case V3Rec::Symbol: {
            const std::string *n = field("/formatted_kernel_name");
            if (!n)
                n = field("/kernel_name");
            if (n && symbols_.size() < kMaxSymbols)
                symbols_[unum(field("/kernel_id"))] = n->substr(0, kMaxKernelName);
            return;
        }
        case V3Rec::Dispatch: {
            DispatchRecord d;
            d.source = "rocprofv3";
            d.pid = pid_ ? pid_ : name_pid_;
            d.tid = id(field("/thread_id"));
            uint64_t agent = unum(field("/dispatch_info/agent_id/handle"));
            auto a = agents_.find(agent);
            d.gpu = a != agents_.end() ? a->second : "agent-handle" + std::to_string(agent);
            d.queue = std::to_string(unum(field("/dispatch_info/queue_id/handle")));
            uint64_t kid = unum(field("/dispatch_info/kernel_id"));
            auto k = symbols_.find(kid);
            std::string fallback;
            if (k == symbols_.end())
                fallback = "kernel " + std::to_string(kid);
            d.kernel =
                k != symbols_.end() ? std::string_view(k->second) : std::string_view(fallback);
            uint64_t b = unum(field("/start_timestamp")), e = unum(field("/end_timestamp"));
            d.ts_us = static_cast<double>(b) / 1000.0; // nanoseconds
            d.dur_us = e > b ? static_cast<double>(e - b) / 1000.0 : 0;
            sink_.dispatch(d);
            return;
        }
        case V3Rec::None:
            return;
        }
    }

    const std::string *field(std::string_view k) const {
        for (const auto &f : fields_)
            if (f.first == k)
                return &f.second;
        return nullptr;
    }

    // Numbers arrive as JSON numbers or strings ("ts":"418618585225"); anything
    // not finite becomes 0 so that nothing downstream sees inf/nan.
    static double num(const std::string *s) {
        if (!s)
            return 0;
        char *end = nullptr;
        double v = std::strtod(s->c_str(), &end);
        return end == s->c_str() || !std::isfinite(v) ? 0 : v;
    }

    // Integer ids (pid, tid): a double outside int64 range must not be cast.
    static int64_t id(const std::string *s) {
        if (!s)
            return 0;
        if (auto v = parse_i64(*s))
            return *v;
        double d = num(s);
        return d > -9e18 && d < 9e18 ? static_cast<int64_t>(d) : 0;
    }

    void event() {
        const std::string *ph = field("ph");
        if (!ph)
            return;
        const std::string *pid = field("pid");
        int64_t p = id(pid);
        if (*ph == "M") {
            const std::string *n = field("args.name");
            const std::string *what = field("name");
            if (n && what && *what == "process_name" && pid_names_.size() < kMaxPidNames)
                pid_names_[p] = *n;
            return;
        }
        if (*ph != "X")
            return;
        const std::string *name = field("name");
        std::string_view nm = name ? std::string_view(*name) : std::string_view("?");
        double ts = num(field("ts")), dur = num(field("dur"));
        const std::string *queue = field("args.queue-id");
        if (!queue)
            queue = field("args.queue_id");
        if (queue) {
            DispatchRecord d;
            d.source = "rocprof";
            d.pid = id(field("args.pid"));
            const std::string *gpu = field("args.gpu-id");
            d.gpu = gpu ? "agent" + *gpu : "agent?";
            d.queue = *queue;
            d.kernel = nm;
            d.ts_us = ts;
            d.dur_us = dur;
            sink_.dispatch(d);
            return;
        }
        ApiSpan a;
        a.pid = id(field("args.pid"));
        a.tid = id(field("tid"));
        a.name = nm;
        auto it = pid_names_.find(p);
        a.category =
            it == pid_names_.end() ? std::string_view("rocprof") : std::string_view(it->second);
        a.ts_us = ts;
        a.dur_us = dur;
        sink_.api_span(a);
    }

    Sink &sink_;
    uint64_t lineno_ = 0;
    St st_ = St::Value;
    bool allow_close_ = false, reading_key_ = false, done_ = false, seen_any_ = false;
    int uleft_ = 0;
    std::string buf_, key_;
    std::vector<Ctx> stack_;
    std::vector<std::string> keys_;
    size_t events_depth_ = 0;
    bool in_event_ = false;
    std::vector<std::pair<std::string, std::string>> fields_;
    std::unordered_map<int64_t, std::string> pid_names_;
    // rocprofv3
    bool v3_ = false;
    std::vector<std::string> paths_;
    V3Rec rec_ = V3Rec::None;
    size_t rec_depth_ = 0, rec_path_len_ = 0;
    int64_t pid_ = 0, name_pid_ = 0;
    std::unordered_map<uint64_t, std::string> agents_, symbols_;
};

} // namespace

std::unique_ptr<LineParser> make_rocprof_parser(Sink &s) {
    return std::make_unique<RocprofParser>(s, false);
}

std::unique_ptr<LineParser> make_rocprofv3_json_parser(Sink &s) {
    return std::make_unique<RocprofParser>(s, true);
}

} // namespace amdqp
