// Streams records as Chrome-trace / Perfetto JSON ("traceEvents"), one event per
// line, without keeping them: works on inputs of any size.
#pragma once
#include <cstdint>
#include <map>
#include <optional>
#include <ostream>
#include <set>
#include <string>
#include <tuple>

#include "json_out.h"
#include "records.h"

namespace amdqp {

// Event classes --only selects from.
constexpr const char *kTimelineClasses[] = {"amdqp", "kfd", "ftrace", "hip", "dispatch", "api"};

struct TimelineOptions {
    // Time window in microseconds of the input's own clock; relative ones count
    // from the first event written.
    std::optional<double> from_us, to_us;
    bool from_relative = false, to_relative = false;
    std::set<std::string> only; // empty: every class
    uint64_t max_bytes = 0;     // 0: no limit
};

class PerfettoWriter : public Sink {
public:
    explicit PerfettoWriter(std::ostream &os, TimelineOptions opt = {});
    ~PerfettoWriter() override;
    // Closes the spans still open and writes the closing brackets (the
    // destructor does it too).
    void close();
    uint64_t events() const { return events_; }
    bool truncated() const { return truncated_; }
    uint64_t spans_closed() const { return closed_spans_; }

    void begin_file(const std::string &path, std::string_view format) override;
    void end_file() override;
    void trace_event(const TraceEvent &e) override;
    void hip_queue(const HipQueueRecord &q) override;
    void dispatch(const DispatchRecord &d) override;
    void api_span(const ApiSpan &a) override;

private:
    using Span = std::tuple<int64_t, int64_t, std::string>; // pid, tid, name
    bool wanted(const char *cls, double ts);
    bool emit(const Json &ev, bool force = false);
    void begin(const Span &s, const std::string &cat, double ts, Json args = {});
    void end(const Span &s, const std::string &cat, double ts, Json args = {});
    int64_t gpu_track(const std::string &gpu);
    int64_t queue_track(int64_t pid, const std::string &queue);
    double start_edge() const;
    double end_edge() const;
    void close_spans();
    std::ostream &os_;
    TimelineOptions opt_;
    bool closed_ = false, truncated_ = false, after_window_ = false;
    uint64_t events_ = 0, bytes_ = 0, closed_spans_ = 0;
    // Each file is a capture with its own clock: spans it leaves open are closed
    // at its last event, spans it ends without a beginning begin at its first.
    std::optional<double> first_seen_, file_first_;
    double file_last_ = 0;
    std::map<std::string, int64_t> gpu_pids_;
    std::map<std::pair<int64_t, std::string>, int64_t> queue_tids_;
    // Open B/E spans: depth and category.
    std::map<Span, std::pair<uint32_t, std::string>> open_;
};

} // namespace amdqp
