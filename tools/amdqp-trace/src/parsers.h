// Factories of the individual parsers (see parser.h for the interface).
#pragma once
#include "parser.h"

namespace amdqp {

std::unique_ptr<LineParser> make_hqd_parser(Sink &s);
std::unique_ptr<LineParser> make_mqd_parser(Sink &s);
std::unique_ptr<LineParser> make_ftrace_parser(Sink &s);
std::unique_ptr<LineParser> make_hiplog_parser(Sink &s);
std::unique_ptr<LineParser> make_rocprof_parser(Sink &s);
std::unique_ptr<LineParser> make_workload_parser(Sink &s);
std::unique_ptr<LineParser> make_rocprofv3_json_parser(Sink &s);
std::unique_ptr<LineParser> make_rocprofv3_csv_parser(Sink &s);
std::unique_ptr<LineParser> make_rocprof_csv_parser(Sink &s);

// rocprofv3 names its outputs after the pid ("1234_kernel_trace.csv", or a
// "1234/" folder); 0 when the name does not say.
int64_t rocprof_pid_from_name(std::string_view path);

} // namespace amdqp
