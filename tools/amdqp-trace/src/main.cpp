// amdqp-trace: queue analysis of AMD GPU captures (see Documentation/amdqp-trace.rst).
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include "census.h"
#include "input.h"
#include "perfetto.h"
#include "report.h"
#include "text.h"

#ifndef AMDQP_TRACE_VERSION
#define AMDQP_TRACE_VERSION "unknown"
#endif

namespace {

constexpr const char *kUsage =
    "usage: amdqp-trace census [--json] [OPTIONS] PATH...\n"
    "       amdqp-trace timeline --perfetto OUT [--from S] [--to S] [--only CLASSES]\n"
    "                            [--max-size MB] [OPTIONS] PATH...\n"
    "       amdqp-trace report [OPTIONS] PATH...\n"
    "       amdqp-trace --version\n"
    "\n"
    "PATH is a capture folder (ftrace_scripts/amdqp-capture) or single files:\n"
    "ftrace text, /sys/kernel/debug/kfd/hqds or mqds dumps, HIP AMD_LOG_LEVEL=3\n"
    "logs, rocprof Chrome-trace JSON, rocprofv3 JSON or kernel_trace.csv, rocprof v1\n"
    "CSV, dual-model workload logs. The format of each file is detected from its\n"
    "content. '-' (or /dev/stdin) reads standard input.\n"
    "\n"
    "commands (each has its own --help):\n"
    "  census     user queues per process and GPU, active HQDs per GPU and XCC\n"
    "  timeline   write a Chrome-trace/Perfetto JSON timeline (ui.perfetto.dev)\n"
    "  report     everything: census, decoded HQDs/MQDs, submissions per queue,\n"
    "             suspend/resume and KFD map/unmap timelines, runlist updates and\n"
    "             who caused them, verdict per workload\n"
    "\n"
    "options of every command:\n"
    "  --format NAME      force the input format: ftrace, kfd-hqds, kfd-mqds,\n"
    "                     hip-log, rocprof-json, rocprofv3-json, rocprofv3-csv,\n"
    "                     rocprof-csv, workload-log\n"
    "  --keep-going       skip malformed lines with a warning instead of failing\n"
    "  --strict           in a folder, a file that is not recognised or has errors\n"
    "                     is fatal (default: named on stderr and skipped)\n"
    "  --no-progress      no progress indicator (default: on when stderr is a tty)\n"
    "  -h, --help         help (of a command: amdqp-trace census --help)\n";

constexpr uint64_t kDefaultMaxSizeMb = 512;

// Every record goes to the analysis and, for timeline, to the writer.
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
    void hqd_device_stopped(uint32_t node, const std::string &gpu) override {
        for (auto *s : to)
            s->hqd_device_stopped(node, gpu);
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
    void hip_queue_used(const amdqp::HipQueueRecord &q) override {
        for (auto *s : to)
            s->hip_queue_used(q);
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

struct Common {
    std::string format;
    bool keep_going = false, strict = false, no_progress = false;
    std::vector<std::string> paths;
};

void add_common(CLI::App &sub, Common &c) {
    sub.add_option("--format", c.format, "force the input format (see amdqp-trace --help)")
        ->type_name("NAME");
    sub.add_flag("--keep-going", c.keep_going,
                 "skip malformed lines with a warning (at most 10 shown in all)");
    sub.add_flag("--strict", c.strict, "in a folder, a bad or unrecognised file is fatal");
    sub.add_flag("--no-progress", c.no_progress, "no progress indicator on stderr");
    sub.add_option("PATH", c.paths, "capture folders or files; '-' is standard input")
        ->type_name("PATH...");
    // Unknown options are reported by us, in the same words for every command.
    sub.allow_extras();
}

// "12.5" seconds, or "+12.5" seconds after the first event.
bool parse_time(const std::string &s, double &us, bool &relative) {
    std::string_view v = s;
    relative = !v.empty() && v[0] == '+';
    if (relative)
        v.remove_prefix(1);
    if (v.empty())
        return false;
    try {
        size_t used = 0;
        double d = std::stod(std::string(v), &used);
        if (used != v.size() || !(d >= 0) || d > 1e12)
            return false;
        us = d * 1e6;
        return true;
    } catch (const std::exception &) {
        return false;
    }
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
    if (args[0] != "census" && args[0] != "timeline" && args[0] != "report" &&
        args[0] != "--version" && args[0][0] != '-')
        return usage_error("unknown command '" + args[0] + "'");

    CLI::App app("amdqp-trace: queue analysis of AMD GPU captures", "amdqp-trace");
    app.set_version_flag("--version", std::string("amdqp-trace ") + AMDQP_TRACE_VERSION);
    app.require_subcommand(1);
    app.footer("Documentation/amdqp-trace.rst has the details.");

    Common common;
    bool json = false;
    std::string perfetto, from, to, max_size = std::to_string(kDefaultMaxSizeMb);
    std::string only;

    CLI::App *census = app.add_subcommand(
        "census", "User queues per process and GPU (peak live at once), active HQDs per GPU "
                  "and XCC of the busiest kfd hqds snapshot.");
    census->add_flag("--json", json, "machine-readable JSON on stdout");
    add_common(*census, common);

    CLI::App *timeline = app.add_subcommand(
        "timeline", "Write a Chrome-trace/Perfetto JSON timeline: amdqp suspended spans, KFD "
                    "calls, ftrace events, HIP queues, kernel dispatches, API calls. Spans cut "
                    "by the capture or the window are closed at its edges.");
    timeline->add_option("--perfetto", perfetto, "output file ('-' for stdout)")->type_name("OUT");
    timeline
        ->add_option("--from", from,
                     "leave out events before S seconds of the input's clock (as ftrace "
                     "prints it); +S: S seconds after the first event")
        ->type_name("S");
    timeline->add_option("--to", to, "leave out events after S seconds (+S: relative)")
        ->type_name("S");
    timeline
        ->add_option("--only", only,
                     "event classes to write: amdqp, kfd, ftrace, hip, dispatch, api "
                     "(comma separated)")
        ->type_name("CLASSES");
    timeline
        ->add_option("--max-size", max_size,
                     "stop writing events at this many MB of JSON (viewers do not load "
                     "much more); 0: no limit")
        ->type_name("MB")
        ->capture_default_str();
    add_common(*timeline, common);

    CLI::App *report = app.add_subcommand(
        "report", "Everything: census, decoded HQDs/MQDs, submissions per queue, suspend/resume "
                  "and KFD timelines, runlist updates with their causes and the preemptions they "
                  "cost other processes, workload runs.");
    add_common(*report, common);

    try {
        app.parse(argc, argv);
    } catch (const CLI::CallForHelp &e) {
        return app.exit(e);
    } catch (const CLI::CallForVersion &e) {
        return app.exit(e);
    } catch (const CLI::ParseError &e) {
        return usage_error(e.what());
    }

    CLI::App *sub = app.get_subcommands().front();
    std::string cmd = sub->get_name();
    for (const auto &extra : sub->remaining())
        if (!extra.empty() && extra[0] == '-' && extra != "-")
            return usage_error("unknown option '" + extra + "' for " + cmd);
    if (common.paths.empty())
        return usage_error("no input PATH given");

    amdqp::InputOptions opt;
    opt.progress = isatty(STDERR_FILENO) != 0 && !common.no_progress;
    opt.keep_going = common.keep_going;
    opt.strict = common.strict;
    if (!common.format.empty()) {
        auto f = amdqp::format_from_name(common.format);
        if (f == amdqp::Format::Unknown)
            return usage_error("unknown format '" + common.format + "'");
        opt.force_format = f;
    }

    amdqp::TimelineOptions topt;
    if (cmd == "timeline") {
        if (perfetto.empty())
            return usage_error("timeline needs --perfetto OUT");
        double v = 0;
        bool rel = false;
        if (!from.empty()) {
            if (!parse_time(from, v, rel))
                return usage_error("--from: expected seconds (e.g. 1234.5 or +10), got '" + from +
                                   "'");
            topt.from_us = v;
            topt.from_relative = rel;
        }
        if (!to.empty()) {
            if (!parse_time(to, v, rel))
                return usage_error("--to: expected seconds (e.g. 1240 or +20), got '" + to + "'");
            topt.to_us = v;
            topt.to_relative = rel;
        }
        for (std::string_view rest = only; !rest.empty();) {
            size_t comma = rest.find(',');
            std::string c(amdqp::trim(rest.substr(0, comma)));
            rest = comma == std::string_view::npos ? std::string_view() : rest.substr(comma + 1);
            bool known = false;
            for (const char *k : amdqp::kTimelineClasses)
                known = known || c == k;
            if (!known)
                return usage_error("--only: unknown event class '" + c +
                                   "' (amdqp, kfd, ftrace, hip, dispatch, api)");
            topt.only.insert(c);
        }
        auto mb = amdqp::parse_u64(max_size);
        if (!mb || *mb > (1ull << 40))
            return usage_error("--max-size: expected a number of MB, got '" + max_size + "'");
        topt.max_bytes = *mb << 20;
    }

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
        writer = std::make_unique<amdqp::PerfettoWriter>(*os, topt);
        tee.to.push_back(writer.get());
    }
    try {
        std::vector<amdqp::InputEntry> inventory;
        auto inputs = amdqp::parse_paths(common.paths, tee, opt, &inventory);
        if (inputs.empty()) {
            std::cerr << "amdqp-trace: no input in a recognised format\n";
            return 1;
        }
        analysis.finish();
        if (cmd == "census") {
            if (json)
                amdqp::write_census_json(std::cout, analysis, &inventory);
            else
                amdqp::write_census_text(std::cout, analysis, &inventory);
        } else if (cmd == "report") {
            amdqp::write_report(std::cout, analysis, inputs, &inventory);
        } else {
            writer->close();
            if (writer->truncated())
                std::cerr << "amdqp-trace: warning: timeline stopped at --max-size " << max_size
                          << " MB; later events are not in it (narrow it with --from/--to or "
                             "--only, or --max-size 0)\n";
            if (writer->spans_closed())
                std::cerr << "amdqp-trace: note: " << writer->spans_closed()
                          << " spans cut by the capture or window edges were closed there\n";
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
    } catch (const std::exception &e) {
        std::cerr << "amdqp-trace: error: " << e.what() << "\n";
        return 1;
    }
    std::cout.flush();
    return std::cout ? 0 : 1;
}
