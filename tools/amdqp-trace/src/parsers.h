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

} // namespace amdqp
