// Parsers for the kernel dispatch CSVs of the ROCm profilers:
//   rocprofv3 --kernel-trace: <pid>_kernel_trace.csv, quoted header
//     "Kind","Agent_Id","Queue_Id",...,"Kernel_Name",...,"Start_Timestamp","End_Timestamp"
//     (no pid column: rocprofv3 puts the pid in the file name);
//   rocprof v1: results.csv, header Index,KernelName,gpu-id,queue-id,queue-index,pid,tid,...
//     with BeginNs/EndNs when timestamps were collected.
// Columns are found by name: both tools add and reorder columns between versions.
#include <array>
#include <cctype>
#include <utility>
#include <vector>

#include "error.h"
#include "parsers.h"
#include "text.h"

namespace amdqp {

namespace {

constexpr size_t kMaxColumns = 512;

// One CSV record; fields may be quoted, with "" for a quote inside.
bool split_csv(std::string_view l, std::vector<std::string_view> &out, std::string &scratch) {
    out.clear();
    scratch.clear();
    scratch.reserve(l.size());
    std::vector<std::pair<size_t, size_t>> spans;
    size_t i = 0;
    for (;;) {
        size_t start = scratch.size();
        while (i < l.size() && l[i] == ' ')
            ++i;
        if (i < l.size() && l[i] == '"') {
            ++i;
            for (;;) {
                if (i >= l.size())
                    return false; // unterminated quote
                if (l[i] == '"') {
                    if (i + 1 < l.size() && l[i + 1] == '"') {
                        scratch.push_back('"');
                        i += 2;
                        continue;
                    }
                    ++i;
                    break;
                }
                scratch.push_back(l[i++]);
            }
            while (i < l.size() && l[i] == ' ')
                ++i;
            if (i < l.size() && l[i] != ',')
                return false; // text after a closing quote
        } else {
            while (i < l.size() && l[i] != ',')
                scratch.push_back(l[i++]);
        }
        spans.emplace_back(start, scratch.size() - start);
        if (spans.size() > kMaxColumns)
            return false;
        if (i >= l.size())
            break;
        ++i; // the comma
    }
    for (auto [s, n] : spans)
        out.push_back(trim(std::string_view(scratch).substr(s, n)));
    return true;
}

// "1234_kernel_trace.csv" or ".../1234/..._kernel_trace.csv": rocprofv3's pid.
int64_t pid_from_name(std::string_view path) {
    auto digits = [](std::string_view s) {
        size_t n = 0;
        while (n < s.size() && std::isdigit(static_cast<unsigned char>(s[n])))
            ++n;
        return n;
    };
    size_t slash = path.rfind('/');
    std::string_view base = slash == std::string_view::npos ? path : path.substr(slash + 1);
    size_t n = digits(base);
    if (n && n < 10 && n < base.size() && base[n] == '_')
        return parse_i64(base.substr(0, n)).value_or(0);
    if (slash != std::string_view::npos) {
        std::string_view dir = path.substr(0, slash);
        size_t s2 = dir.rfind('/');
        dir = s2 == std::string_view::npos ? dir : dir.substr(s2 + 1);
        if (!dir.empty() && digits(dir) == dir.size() && dir.size() < 10)
            return parse_i64(dir).value_or(0);
    }
    return 0;
}

class ProfilerCsvParser final : public LineParser {
public:
    ProfilerCsvParser(Sink &s, bool v3) : sink_(s), v3_(v3) {}

    void source_name(std::string_view name) override { name_pid_ = pid_from_name(name); }

    void line(std::string_view raw, uint64_t lineno) override {
        std::string_view l = trim(raw);
        if (l.empty())
            return;
        if (!split_csv(l, fields_, scratch_))
            throw ParseError(lineno, "malformed CSV line (unbalanced quotes or too many columns)");
        if (!have_header_) {
            header(lineno);
            return;
        }
        if (fields_.size() < ncols_)
            throw ParseError(lineno, "CSV row has " + std::to_string(fields_.size()) +
                                         " columns, the header " + std::to_string(ncols_) +
                                         " (truncated file?)");
        if (v3_)
            row_v3(lineno);
        else
            row_v1(lineno);
    }

    void finish(uint64_t lineno) override {
        if (!have_header_)
            throw ParseError(lineno ? lineno : 1, "empty CSV: no header line");
    }

private:
    enum Col { Kind, Agent, Queue, Name, Start, End, Pid, Tid, NCols };

    long find(std::initializer_list<std::string_view> names) const {
        for (size_t i = 0; i < fields_.size(); ++i)
            for (auto n : names)
                if (fields_[i] == n)
                    return static_cast<long>(i);
        return -1;
    }

    void header(uint64_t lineno) {
        have_header_ = true;
        ncols_ = fields_.size();
        if (v3_) {
            col_ = {find({"Kind"}),
                    find({"Agent_Id"}),
                    find({"Queue_Id"}),
                    find({"Kernel_Name"}),
                    find({"Start_Timestamp"}),
                    find({"End_Timestamp"}),
                    find({"Process_Id", "Pid"}),
                    find({"Thread_Id"})};
            if (col_[Agent] < 0 || col_[Queue] < 0 || col_[Name] < 0)
                throw ParseError(lineno, "rocprofv3 kernel trace CSV without Agent_Id, Queue_Id "
                                         "and Kernel_Name columns");
        } else {
            col_ = {-1,
                    find({"gpu-id"}),
                    find({"queue-id"}),
                    find({"KernelName"}),
                    find({"BeginNs"}),
                    find({"EndNs"}),
                    find({"pid"}),
                    find({"tid"})};
            if (col_[Agent] < 0 || col_[Queue] < 0 || col_[Name] < 0 || col_[Pid] < 0)
                throw ParseError(lineno, "rocprof CSV without KernelName, gpu-id, queue-id and "
                                         "pid columns");
        }
    }

    std::string_view get(Col c) const {
        return col_[c] < 0 ? std::string_view() : fields_[static_cast<size_t>(col_[c])];
    }

    std::optional<uint64_t> num(Col c, uint64_t lineno, bool required) const {
        std::string_view v = get(c);
        if (v.empty() && !required)
            return std::nullopt;
        auto n = parse_u64(v);
        if (!n)
            throw ParseError(lineno, "expected a number in column " + std::to_string(col_[c] + 1) +
                                         ", got '" + std::string(v.substr(0, 40)) + "'");
        return n;
    }

    void times(DispatchRecord &d, uint64_t lineno) const {
        auto b = num(Start, lineno, false), e = num(End, lineno, false);
        // Nanoseconds; a dispatch that never completed has no end.
        d.ts_us = b ? static_cast<double>(*b) / 1000.0 : 0;
        d.dur_us = b && e && *e > *b ? static_cast<double>(*e - *b) / 1000.0 : 0;
    }

    void row_v3(uint64_t lineno) {
        if (col_[Kind] >= 0 && get(Kind) != "KERNEL_DISPATCH")
            return;
        std::string_view agent = get(Agent);
        if (starts_with(agent, "Agent "))
            agent.remove_prefix(6);
        if (!parse_u64(agent))
            throw ParseError(lineno,
                             "malformed Agent_Id '" + std::string(agent.substr(0, 40)) + "'");
        DispatchRecord d;
        d.source = "rocprofv3";
        d.pid =
            col_[Pid] >= 0 ? static_cast<int64_t>(num(Pid, lineno, true).value_or(0)) : name_pid_;
        d.tid = static_cast<int64_t>(num(Tid, lineno, false).value_or(0));
        d.gpu = "node" + std::string(agent);
        d.queue = std::to_string(*num(Queue, lineno, true));
        d.kernel = get(Name);
        times(d, lineno);
        sink_.dispatch(d);
    }

    void row_v1(uint64_t lineno) {
        DispatchRecord d;
        d.source = "rocprof";
        d.pid = static_cast<int64_t>(*num(Pid, lineno, true));
        d.tid = static_cast<int64_t>(num(Tid, lineno, false).value_or(0));
        d.gpu = "agent" + std::to_string(*num(Agent, lineno, true));
        d.queue = std::to_string(*num(Queue, lineno, true));
        d.kernel = get(Name);
        times(d, lineno);
        sink_.dispatch(d);
    }

    Sink &sink_;
    bool v3_;
    bool have_header_ = false;
    size_t ncols_ = 0;
    int64_t name_pid_ = 0;
    std::array<long, NCols> col_{};
    std::vector<std::string_view> fields_;
    std::string scratch_;
};

} // namespace

std::unique_ptr<LineParser> make_rocprofv3_csv_parser(Sink &s) {
    return std::make_unique<ProfilerCsvParser>(s, true);
}

std::unique_ptr<LineParser> make_rocprof_csv_parser(Sink &s) {
    return std::make_unique<ProfilerCsvParser>(s, false);
}

int64_t rocprof_pid_from_name(std::string_view path) {
    return pid_from_name(path);
}

} // namespace amdqp
