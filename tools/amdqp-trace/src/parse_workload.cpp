// Parser for dual-model workload logs (experiments' stdout): one high-priority
// latency-bound model and one low-priority throughput model per run, one or more
// runs (baseline, xsched, amdqp, ...) per log. Unknown lines are skipped: the log
// interleaves tracebacks and tool output.
#include <algorithm>
#include <cmath>
#include <cstdlib>

#include "error.h"
#include "parsers.h"
#include "text.h"

namespace amdqp {

namespace {

double num_field(std::string_view l, std::string_view key) {
    auto p = l.find(key);
    if (p == std::string_view::npos)
        return 0;
    std::string_view rest = l.substr(p + key.size());
    std::string_view tok = next_token(rest);
    char buf[32];
    size_t n = std::min(tok.size(), sizeof buf - 1);
    tok.copy(buf, n);
    buf[n] = 0;
    double v = std::strtod(buf, nullptr);
    return std::isfinite(v) ? v : 0;
}

// Batch sizes: clamp before converting, a double outside int range is UB.
int to_int(double v) {
    return v > 0 && v < 1e9 ? static_cast<int>(v) : 0;
}

class WorkloadParser final : public LineParser {
public:
    explicit WorkloadParser(Sink &s) : sink_(s) {}

    void line(std::string_view raw, uint64_t) override {
        std::string_view l = trim(raw);
        if (auto p = l.find("Running "); p != std::string_view::npos &&
                                         l.find(" test") != std::string_view::npos &&
                                         starts_with(l, "[")) {
            emit();
            std::string_view rest = l.substr(p + 8);
            std::string name(next_token(rest));
            for (auto &c : name)
                c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
            cur_ = WorkloadResult{};
            cur_.scenario = name;
            active_ = true;
            return;
        }
        if (!active_)
            return;
        if (starts_with(l, "High Priority:") || starts_with(l, "High priority:"))
            cur_.high_model = model(l);
        else if (starts_with(l, "Low Priority:") || starts_with(l, "Low priority:"))
            cur_.low_model = model(l);
        else if (starts_with(l, "[HIGH] Results:") || starts_with(l, "[LOW] Results:")) {
            section_ = l[1] == 'H' ? 'H' : 'L';
            results_ = true;
        } else if (starts_with(l, "[HIGH] Error:") || starts_with(l, "[LOW] Error:") ||
                   l.find("symbol lookup error") != std::string_view::npos ||
                   l.find("Segmentation fault") != std::string_view::npos)
            mark_error();
        else if (section_ == 'H' && starts_with(l, "Latency P50:"))
            cur_.high_p50_ms = num_field(l, "P50:");
        else if (section_ == 'H' && starts_with(l, "Latency P99:"))
            cur_.high_p99_ms = num_field(l, "P99:");
        else if (section_ == 'H' && starts_with(l, "Throughput:"))
            cur_.high_rate = num_field(l, "Throughput:");
        else if (section_ == 'L' && starts_with(l, "Throughput:"))
            cur_.low_iter_s = num_field(l, "Throughput:");
        else if (section_ == 'L' && starts_with(l, "Images/sec:"))
            cur_.low_img_s = num_field(l, "Images/sec:");
        else if (section_ == 'L' && starts_with(l, "Batch size:"))
            cur_.low_batch = to_int(num_field(l, "Batch size:"));
        else if (l.empty() || starts_with(l, "===") || starts_with(l, "FINAL"))
            section_ = 0;
    }

    void finish(uint64_t) override { emit(); }

private:
    static std::string model(std::string_view l) {
        std::string_view rest = l.substr(l.find(':') + 1);
        std::string m(next_token(rest));
        if (!m.empty() && m.back() == ',')
            m.pop_back();
        return m;
    }

    void mark_error() {
        if (cur_.scenario.find("(error)") == std::string::npos)
            cur_.scenario += " (error)";
    }

    void emit() {
        // A run that printed no results crashed or was cut off: its zeros are not
        // measurements.
        if (active_ && !results_)
            mark_error();
        if (active_)
            sink_.workload(cur_);
        active_ = false;
        section_ = 0;
        results_ = false;
    }

    Sink &sink_;
    WorkloadResult cur_;
    bool active_ = false, results_ = false;
    char section_ = 0;
};

} // namespace

std::unique_ptr<LineParser> make_workload_parser(Sink &s) {
    return std::make_unique<WorkloadParser>(s);
}

} // namespace amdqp
