// Helpers shared by the tests: a sink that keeps every record, fixture paths.
#pragma once
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "input.h"
#include "records.h"

namespace amdqp::test {

struct Collect : Sink {
    std::vector<HqdRecord> hqds;
    std::vector<MqdRecord> mqds;
    std::vector<std::string> events; // "name|body|pid|cpu|ts"
    std::vector<TraceEvent> evs;
    std::vector<HipQueueRecord> hipqs;
    std::vector<DispatchRecord> dispatches;
    std::vector<std::string> kernels;
    std::vector<ApiSpan> spans;
    std::vector<WorkloadResult> workloads;
    uint64_t lost = 0;
    void hqd(const HqdRecord &r) override { hqds.push_back(r); }
    void mqd(const MqdRecord &r) override { mqds.push_back(r); }
    void trace_event(const TraceEvent &e) override {
        events.push_back(std::string(e.name) + "|" + std::string(e.body));
        TraceEvent c = e;
        c.name = c.body = c.task = {}; // views die with the line
        evs.push_back(c);
    }
    void lost_events(uint64_t n) override { lost += n; }
    void hip_queue(const HipQueueRecord &q) override { hipqs.push_back(q); }
    void dispatch(const DispatchRecord &d) override {
        dispatches.push_back(d);
        dispatches.back().kernel = {};
        kernels.emplace_back(d.kernel);
    }
    void api_span(const ApiSpan &a) override {
        spans.push_back(a);
        spans.back().name = spans.back().category = {};
    }
    void workload(const WorkloadResult &w) override { workloads.push_back(w); }
};

inline std::string fixture(const std::string &name) {
    return std::string(AMDQP_TRACE_FIXTURES) + "/" + name;
}

inline std::string slurp(const std::string &path) {
    std::ifstream f(path, std::ios::binary);
    std::ostringstream s;
    s << f.rdbuf();
    return s.str();
}

inline void parse_fixture(const std::string &name, Format f, Sink &s) {
    parse_file(fixture(name), f, s, InputOptions{});
}

} // namespace amdqp::test
