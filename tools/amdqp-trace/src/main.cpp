// amdqp-trace: queue analysis of AMD GPU captures (see Documentation/amdqp-trace.rst).
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <iostream>
#include <string>
#include <vector>

#include "census.h"
#include "input.h"
#include "perfetto.h"
#include "report.h"

namespace {

constexpr const char *kUsage =
    "usage: amdqp-trace census [--json] [OPTIONS] PATH...\n"
    "       amdqp-trace timeline --perfetto OUT [OPTIONS] PATH...\n"
    "       amdqp-trace report [OPTIONS] PATH...\n"
    "\n"
    "PATH is a capture folder (ftrace_scripts/amdqp-capture) or single files:\n"
    "ftrace text, /sys/kernel/debug/kfd/hqds or mqds dumps, HIP AMD_LOG_LEVEL=3\n"
    "logs, rocprof Chrome-trace JSON, dual-model workload logs. The format of\n"
    "each file is detected from its content. '-' (or /dev/stdin) reads standard input.\n"
    "\n"
    "commands:\n"
    "  census     user queues per process and GPU, active HQDs per GPU and XCC\n"
    "  timeline   write a Chrome-trace/Perfetto JSON timeline (ui.perfetto.dev)\n"
    "  report     everything: census, decoded HQDs/MQDs, submissions per queue,\n"
    "             suspend/resume and KFD map/unmap timelines, verdict per workload\n"
    "\n"
    "options:\n"
    "  --json             census: machine-readable JSON on stdout\n"
    "  --perfetto OUT     timeline: output file ('-' for stdout)\n"
    "  --format NAME      force the input format: ftrace, kfd-hqds, kfd-mqds,\n"
    "                     hip-log, rocprof-json, workload-log\n"
    "  --keep-going       skip malformed lines with a warning instead of failing\n"
    "  --strict           in a folder, a file that is not recognised or has errors\n"
    "                     is fatal (default: named on stderr and skipped)\n"
    "  --no-progress      no progress indicator (default: on when stderr is a tty)\n"
    "  -h, --help         this text\n";

class Tee : public amdqp::Sink {
public:
    std::vector<amdqp::Sink *> to;
    void begin_file(const std::string &p, std::string_view f) override {
        for (auto *s : to)
            s->begin_file(p, f);
    }
    void hqd(const amdqp::HqdRecord &r) override {
        for (auto *s : to)
            s->hqd(r);
    }
    void mqd(const amdqp::MqdRecord &r) override {
        for (auto *s : to)
            s->mqd(r);
    }
    void trace_event(const amdqp::TraceEvent &e) override {
        for (auto *s : to)
            s->trace_event(e);
    }
    void lost_events(uint64_t n) override {
        for (auto *s : to)
            s->lost_events(n);
    }
    void hip_queue(const amdqp::HipQueueRecord &q) override {
        for (auto *s : to)
            s->hip_queue(q);
    }
    void dispatch(const amdqp::DispatchRecord &d) override {
        for (auto *s : to)
            s->dispatch(d);
    }
    void api_span(const amdqp::ApiSpan &a) override {
        for (auto *s : to)
            s->api_span(a);
    }
    void workload(const amdqp::WorkloadResult &w) override {
        for (auto *s : to)
            s->workload(w);
    }
    void end_file() override {
        for (auto *s : to)
            s->end_file();
    }
};

int usage_error(const std::string &msg) {
    std::cerr << "amdqp-trace: " << msg << "\n" << kUsage;
    return 2;
}

} // namespace

int main(int argc, char **argv) {
    std::vector<std::string> args(argv + 1, argv + argc);
    if (args.empty())
        return usage_error("missing command");
    if (args[0] == "-h" || args[0] == "--help" || args[0] == "help") {
        std::cout << kUsage;
        return 0;
    }
    std::string cmd = args[0];
    if (cmd != "census" && cmd != "timeline" && cmd != "report")
        return usage_error("unknown command '" + cmd + "'");
    bool json = false;
    std::string perfetto;
    amdqp::InputOptions opt;
    opt.progress = isatty(STDERR_FILENO) != 0;
    std::vector<std::string> paths;
    for (size_t i = 1; i < args.size(); ++i) {
        const std::string &a = args[i];
        if (a == "-h" || a == "--help") {
            std::cout << kUsage;
            return 0;
        } else if (a == "--json" && cmd == "census") {
            json = true;
        } else if (a == "--perfetto" && cmd == "timeline") {
            if (++i >= args.size())
                return usage_error("--perfetto needs an output file");
            perfetto = args[i];
        } else if (a == "--format") {
            if (++i >= args.size())
                return usage_error("--format needs a name");
            auto f = amdqp::format_from_name(args[i]);
            if (f == amdqp::Format::Unknown)
                return usage_error("unknown format '" + args[i] + "'");
            opt.force_format = f;
        } else if (a == "--keep-going") {
            opt.keep_going = true;
        } else if (a == "--strict") {
            opt.strict = true;
        } else if (a == "--no-progress") {
            opt.progress = false;
        } else if (a == "--") {
            paths.insert(paths.end(), args.begin() + static_cast<long>(i) + 1, args.end());
            break;
        } else if (!a.empty() && a[0] == '-' && a != "-") {
            return usage_error("unknown option '" + a + "' for " + cmd);
        } else {
            paths.push_back(a);
        }
    }
    if (paths.empty())
        return usage_error("no input PATH given");
    if (cmd == "timeline" && perfetto.empty())
        return usage_error("timeline needs --perfetto OUT");

    amdqp::Analysis analysis;
    Tee tee;
    tee.to.push_back(&analysis);
    std::ofstream out_file;
    std::unique_ptr<amdqp::PerfettoWriter> writer;
    if (cmd == "timeline") {
        std::ostream *os = &std::cout;
        if (perfetto != "-") {
            out_file.open(perfetto, std::ios::binary | std::ios::trunc);
            if (!out_file) {
                std::cerr << "amdqp-trace: cannot write " << perfetto << "\n";
                return 1;
            }
            os = &out_file;
        }
        writer = std::make_unique<amdqp::PerfettoWriter>(*os);
        tee.to.push_back(writer.get());
    }
    try {
        auto inputs = amdqp::parse_paths(paths, tee, opt);
        if (inputs.empty()) {
            std::cerr << "amdqp-trace: no input in a recognised format\n";
            return 1;
        }
        if (cmd == "census") {
            if (json)
                amdqp::write_census_json(std::cout, analysis);
            else
                amdqp::write_census_text(std::cout, analysis);
        } else if (cmd == "report") {
            amdqp::write_report(std::cout, analysis, inputs);
        } else {
            writer->close();
            if (perfetto != "-") {
                out_file.close();
                if (!out_file) {
                    std::cerr << "amdqp-trace: error writing " << perfetto << "\n";
                    return 1;
                }
                std::cerr << "amdqp-trace: wrote " << writer->events() << " events to " << perfetto
                          << "\n";
            }
        }
    } catch (const amdqp::InputError &e) {
        std::cerr << "amdqp-trace: error: " << e.what() << "\n";
        return 1;
    } catch (const std::exception &e) {
        std::cerr << "amdqp-trace: error: " << e.what() << "\n";
        return 1;
    }
    std::cout.flush();
    return std::cout ? 0 : 1;
}
