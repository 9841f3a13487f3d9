// Every input format is parsed line by line through this interface, so the driver
// can stream files of any size and the fuzzers can feed memory buffers.
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "records.h"

namespace amdqp {

enum class Format {
    Unknown,
    Ftrace,
    Hqds,
    Mqds,
    HipLog,
    Rocprof, // Chrome-trace JSON (rocprof v1/v2 --hip-trace/--hsa-trace)
    Workload,
    RocprofV3Json, // rocprofv3 --output-format json
    RocprofV3Csv,  // rocprofv3 kernel_trace.csv
    RocprofCsv,    // rocprof v1 results.csv / stats
};

const char *format_name(Format f);
Format format_from_name(std::string_view name);

class LineParser {
public:
    virtual ~LineParser() = default;
    // line has no trailing newline; lineno counts from 1. Throws ParseError.
    virtual void line(std::string_view line, uint64_t lineno) = 0;
    // A piece of a line longer than kMaxLine; only stream formats (JSON) accept it.
    virtual void line_part(std::string_view chunk, uint64_t lineno);
    // End of input: flush state, report truncated structures. Throws ParseError.
    virtual void finish(uint64_t last_lineno) = 0;
    // The input's name, before the first line: rocprofv3 puts the pid in it.
    virtual void source_name(std::string_view /*name*/) {}
};

std::unique_ptr<LineParser> make_parser(Format f, Sink &sink);

// Guess a format from the first bytes of a file (up to 64 KiB).
// Returns Unknown and sets why when no format matches.
Format detect_format(std::string_view head, std::string &why);

} // namespace amdqp
