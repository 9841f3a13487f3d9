// Streams records as Chrome-trace / Perfetto JSON ("traceEvents"), one event per
// line, without keeping them: works on inputs of any size.
#pragma once
#include <map>
#include <ostream>
#include <string>

#include "records.h"

namespace amdqp {

class PerfettoWriter : public Sink {
public:
    explicit PerfettoWriter(std::ostream &os);
    ~PerfettoWriter() override;
    void close(); // writes the closing brackets (the destructor does it too)
    uint64_t events() const { return events_; }

    void trace_event(const TraceEvent &e) override;
    void hip_queue(const HipQueueRecord &q) override;
    void dispatch(const DispatchRecord &d) override;
    void api_span(const ApiSpan &a) override;

private:
    void emit(const std::string &json);
    int64_t gpu_track(const std::string &gpu);
    int64_t queue_track(int64_t pid, const std::string &queue);
    std::ostream &os_;
    bool closed_ = false;
    uint64_t events_ = 0;
    std::map<std::string, int64_t> gpu_pids_;
    std::map<std::pair<int64_t, std::string>, int64_t> queue_tids_;
};

} // namespace amdqp
