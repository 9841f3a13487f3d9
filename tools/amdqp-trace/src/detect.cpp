// Format detection by content (file names lie; captures get renamed).
#include "parsers.h"
#include "text.h"

#include "error.h"

namespace amdqp {

void LineParser::line_part(std::string_view, uint64_t lineno) {
    throw ParseError(lineno, "line longer than 1 MiB (not a text capture?)");
}

const char *format_name(Format f) {
    switch (f) {
    case Format::Ftrace:
        return "ftrace";
    case Format::Hqds:
        return "kfd-hqds";
    case Format::Mqds:
        return "kfd-mqds";
    case Format::HipLog:
        return "hip-log";
    case Format::Rocprof:
        return "rocprof-json";
    case Format::Workload:
        return "workload-log";
    case Format::RocprofV3Json:
        return "rocprofv3-json";
    case Format::RocprofV3Csv:
        return "rocprofv3-csv";
    case Format::RocprofCsv:
        return "rocprof-csv";
    case Format::Unknown:
        break;
    }
    return "unknown";
}

Format format_from_name(std::string_view n) {
    for (Format f :
         {Format::Ftrace, Format::Hqds, Format::Mqds, Format::HipLog, Format::Rocprof,
          Format::Workload, Format::RocprofV3Json, Format::RocprofV3Csv, Format::RocprofCsv})
        if (n == format_name(f))
            return f;
    return Format::Unknown;
}

std::unique_ptr<LineParser> make_parser(Format f, Sink &sink) {
    switch (f) {
    case Format::Ftrace:
        return make_ftrace_parser(sink);
    case Format::Hqds:
        return make_hqd_parser(sink);
    case Format::Mqds:
        return make_mqd_parser(sink);
    case Format::HipLog:
        return make_hiplog_parser(sink);
    case Format::Rocprof:
        return make_rocprof_parser(sink);
    case Format::Workload:
        return make_workload_parser(sink);
    case Format::RocprofV3Json:
        return make_rocprofv3_json_parser(sink);
    case Format::RocprofV3Csv:
        return make_rocprofv3_csv_parser(sink);
    case Format::RocprofCsv:
        return make_rocprof_csv_parser(sink);
    case Format::Unknown:
        break;
    }
    return nullptr;
}

namespace {

bool hip_log_line(std::string_view l) {
    // ":3:file.cpp   :123 : 456 us: ..."
    return l.size() > 4 && l[0] == ':' && l[1] >= '0' && l[1] <= '9' && l[2] == ':' &&
           l.find(" us: ") != std::string_view::npos;
}

class NullSink : public Sink {};

bool ftrace_line(std::string_view l) {
    NullSink ns;
    auto p = make_ftrace_parser(ns);
    try {
        p->line(l, 1);
        return !l.empty() && l[0] != '#';
    } catch (...) {
        return false;
    }
}

} // namespace

Format detect_format(std::string_view head, std::string &why) {
    if (trim(head).empty()) {
        why = "empty file";
        return Format::Unknown;
    }
    if (head.find('\0') != std::string_view::npos) {
        why = "binary data (NUL bytes), not a text capture";
        return Format::Unknown;
    }
    std::string_view t = trim(head);
    if (t[0] == '{' && t.find("\"rocprofiler-sdk-tool\"") != std::string_view::npos)
        return Format::RocprofV3Json;
    {
        // Profiler CSVs: recognised by their header's column names.
        std::string_view first = t.substr(0, t.find('\n'));
        if (first.find("\"Kernel_Name\"") != std::string_view::npos &&
            first.find("\"Queue_Id\"") != std::string_view::npos &&
            first.find("\"Agent_Id\"") != std::string_view::npos)
            return Format::RocprofV3Csv;
        if (first.find("KernelName") != std::string_view::npos &&
            first.find("queue-id") != std::string_view::npos &&
            first.find("gpu-id") != std::string_view::npos)
            return Format::RocprofCsv;
    }
    if (t[0] == '{' || t[0] == '[') {
        // dmesg, PyTorch warnings and "[INFO ...]" logs also start with '[': only
        // a JSON array of objects or an object with trace keys is a Chrome trace.
        std::string_view in = t[0] == '[' ? trim(t.substr(1)) : t;
        bool object = !in.empty() && (in[0] == '{' || (t[0] == '[' && in[0] == ']'));
        if (object && (t.find("\"traceEvents\"") != std::string_view::npos ||
                       t.find("\"ph\"") != std::string_view::npos || in[0] == ']'))
            return Format::Rocprof;
    }
    // Judge by the whole sample: a HIP log may start with many lines of the
    // application's own output. The last line may be cut off, so it is not used.
    size_t pos = 0;
    bool hip = false, workload = false, ftrace = false;
    while (pos < head.size()) {
        size_t nl = head.find('\n', pos);
        if (nl == std::string_view::npos)
            break; // partial last line of the sample
        std::string_view l = trim(head.substr(pos, nl - pos));
        pos = nl + 1;
        if (l.empty())
            continue;
        if (starts_with(l, "# amdqp-capture hip-log"))
            return Format::HipLog; // amdqp-capture's own header
        if (starts_with(l, "# tracer:") || starts_with(l, "# entries-in-buffer"))
            return Format::Ftrace;
        if (starts_with(l, "Node ") && l.find(", gpu_id ") != std::string_view::npos) {
            // kfd/hqds and kfd/rls share the node header; rls follows it with a hex
            // dump of the runlist buffer, hqds with a queue header.
            size_t end = head.find('\n', pos);
            std::string_view next = end == std::string_view::npos
                                        ? std::string_view{}
                                        : trim(head.substr(pos, end - pos));
            if (next.size() > 9 && next[8] == ':' && parse_u64(next.substr(0, 8), 16)) {
                why = "kfd runlist dump (debugfs kfd/rls): not analysed";
                return Format::Unknown;
            }
            return Format::Hqds;
        }
        if (starts_with(l, "Process ") && l.find(" PASID ") != std::string_view::npos)
            return Format::Mqds;
        if (hip_log_line(l))
            hip = true;
        if (starts_with(l, "[HIGH]") || starts_with(l, "[LOW]") ||
            l.find("Dual Model") != std::string_view::npos)
            workload = true;
        if (!hip && !workload && !ftrace && ftrace_line(l))
            ftrace = true;
    }
    if (ftrace && !hip && !workload)
        return Format::Ftrace;
    if (hip)
        return Format::HipLog;
    if (workload)
        return Format::Workload;
    why = "not a recognised format (expected ftrace text, kfd hqds/mqds dump, HIP "
          "AMD_LOG_LEVEL log, rocprof JSON or CSV, rocprofv3 JSON or kernel_trace.csv, or a "
          "workload log; use --format to force one)";
    return Format::Unknown;
}

} // namespace amdqp
