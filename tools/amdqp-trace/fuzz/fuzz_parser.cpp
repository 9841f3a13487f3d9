// libFuzzer target, compiled once per parser (rocprofv3 JSON/CSV and rocprof CSV
// included) with AMDQP_FUZZ_FORMAT set to a Format enumerator. Feeds the input through the same
// line feeder the file reader uses, into the analysis and the Perfetto writer (to a discarded
// stream).
#include <cstddef>
#include <cstdint>
#include <sstream>
#include <string>
#include <string_view>

#include "census.h"
#include "error.h"
#include "input.h"
#include "perfetto.h"
#include "report.h"

namespace {
class Both : public amdqp::Sink {
public:
    Both(amdqp::Sink &a, amdqp::Sink &b) : a_(a), b_(b) {}
    void hqd(const amdqp::HqdRecord &r) override { a_.hqd(r), b_.hqd(r); }
    void hqd_device_stopped(uint32_t n, const std::string &g) override {
        a_.hqd_device_stopped(n, g), b_.hqd_device_stopped(n, g);
    }
    void mqd(const amdqp::MqdRecord &r) override { a_.mqd(r), b_.mqd(r); }
    void trace_event(const amdqp::TraceEvent &e) override { a_.trace_event(e), b_.trace_event(e); }
    void hip_queue(const amdqp::HipQueueRecord &q) override { a_.hip_queue(q), b_.hip_queue(q); }
    void hip_queue_used(const amdqp::HipQueueRecord &q) override {
        a_.hip_queue_used(q), b_.hip_queue_used(q);
    }
    void dispatch(const amdqp::DispatchRecord &d) override { a_.dispatch(d), b_.dispatch(d); }
    void api_span(const amdqp::ApiSpan &s) override { a_.api_span(s), b_.api_span(s); }
    void workload(const amdqp::WorkloadResult &w) override { a_.workload(w), b_.workload(w); }

private:
    amdqp::Sink &a_, &b_;
};
} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    std::string_view in(reinterpret_cast<const char *>(data), size);
    amdqp::Analysis analysis;
    std::ostringstream sink_out;
    // A small window and size limit: the clipping, span closing and truncation
    // paths run on every input.
    amdqp::TimelineOptions topt;
    topt.from_us = size % 3 ? 1.0 : 0.0;
    topt.from_relative = true;
    topt.max_bytes = 1 << 14;
    amdqp::PerfettoWriter perfetto(sink_out, topt);
    Both both(analysis, perfetto);
    std::string why;
    (void)amdqp::detect_format(in, why);
    try {
        amdqp::parse_buffer(in, amdqp::Format::AMDQP_FUZZ_FORMAT, both);
    } catch (const amdqp::ParseError &e) {
        if (e.message().empty())
            __builtin_trap(); // every error must say what is wrong
    }
    // The renderers must cope with whatever partial state the parse left.
    analysis.finish();
    perfetto.close();
    std::ostringstream out;
    amdqp::write_census_json(out, analysis);
    amdqp::write_report(out, analysis, {});
    return 0;
}
