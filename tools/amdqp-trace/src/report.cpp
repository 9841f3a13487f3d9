#include "report.h"

#include <algorithm>
#include <cstdarg>
#include <cstdio>
#include <map>

#include "json.h"
#include "text.h"

namespace amdqp {

namespace {

std::string fmt(const char *f, ...) __attribute__((format(printf, 1, 2)));
std::string fmt(const char *f, ...) {
    char buf[512];
    va_list ap;
    va_start(ap, f);
    std::vsnprintf(buf, sizeof buf, f, ap);
    va_end(ap);
    return buf;
}

std::string per_xcc_text(const GpuSnapshot &g) {
    std::string s;
    for (const auto &[x, c] : g.xcc)
        s += fmt("%sx%u:%u", s.empty() ? "" : " ", x, c.active_user);
    return s;
}

uint32_t hiq_active(const GpuSnapshot &g) {
    uint32_t n = 0;
    for (const auto &[x, c] : g.xcc)
        n += c.active_hiq;
    return n;
}

// GPUs in KFD topology node order (the order kfd prints them), not by id.
std::vector<std::pair<std::string, const GpuSnapshot *>> by_node(const HqdSnapshot &s) {
    std::vector<std::pair<std::string, const GpuSnapshot *>> v;
    for (const auto &[id, g] : s.gpus)
        v.emplace_back(id, &g);
    std::sort(v.begin(), v.end(),
              [](const auto &a, const auto &b) { return a.second->node < b.second->node; });
    return v;
}

std::string verdict(uint32_t queues) {
    if (queues == 0)
        return "no user queues";
    if (queues == 1)
        return "single-queue: one HQD per XCC to unmap";
    return fmt("multi-queue (%u): suspend all %u together, one runlist update", queues, queues);
}

std::string rate_text(const QueueSubmissions &s) {
    double span_s = (s.last - s.first) / 1e6;
    if (s.n < 2 || span_s <= 0)
        return "-";
    return fmt("%.1f/s", static_cast<double>(s.n) / span_s);
}

} // namespace

std::vector<ProcessRow> process_rows(const Analysis &a) {
    std::map<std::tuple<int64_t, std::string, std::string>, ProcessRow> rows;
    for (const auto &snap : a.mqds)
        for (const auto &[key, p] : snap.procs) {
            ProcessRow &r = rows[{key.first, key.second, "kfd-mqds"}];
            r.pid = key.first;
            r.gpu_id = key.second;
            r.source = "kfd-mqds";
            r.queues = std::max<uint32_t>(r.queues, static_cast<uint32_t>(p.queues.size()));
            if (!p.queues.empty())
                r.xccs = std::max(r.xccs, p.queues.begin()->second.mqds);
        }
    for (const auto &[key, n] : a.amdqp_max_queues) {
        ProcessRow &r = rows[{key.first, key.second, "amdqp-trace"}];
        r.pid = key.first;
        r.gpu_id = key.second;
        r.source = "amdqp-trace";
        r.queues = std::max(r.queues, n);
    }
    std::map<std::pair<int64_t, std::string>, std::set<uint64_t>> hipq; // per (pid, file)
    for (const auto &q : a.hip_queues)
        hipq[{q.pid, q.file}].insert(q.hwq);
    for (const auto &[key, set] : hipq) {
        ProcessRow &r = rows[{key.first, "dev0", "hip-log"}];
        r.pid = key.first;
        r.gpu_id = "dev0";
        r.source = "hip-log";
        r.queues = std::max(r.queues, static_cast<uint32_t>(set.size()));
    }
    for (const auto &[key, s] : a.subs) {
        const auto &[source, pid, gpu, queue] = key;
        ProcessRow &r = rows[{pid, gpu, source}];
        r.pid = pid;
        r.gpu_id = gpu;
        r.source = source;
        r.submissions += s.n;
        if (source == "rocprof")
            ++r.queues; // one entry per distinct queue-id
    }
    std::vector<ProcessRow> out;
    for (auto &[k, r] : rows)
        out.push_back(r);
    return out;
}

void write_census_text(std::ostream &os, const Analysis &a) {
    os << "Processes (user queues per GPU)\n";
    os << fmt("  %-10s %-8s %-12s %6s %5s %8s  %s\n", "pid", "gpu", "source", "queues", "xccs",
              "submits", "verdict");
    for (const auto &r : process_rows(a))
        os << fmt("  %-10lld %-8s %-12s %6u %5s %8llu  %s\n", static_cast<long long>(r.pid),
                  r.gpu_id.c_str(), r.source.c_str(), r.queues,
                  r.xccs ? std::to_string(r.xccs).c_str() : "-",
                  static_cast<unsigned long long>(r.submissions), verdict(r.queues).c_str());
    const HqdSnapshot *peak = a.peak_hqds();
    if (!peak) {
        os << "\nNo kfd hqds dump in the input: no per-GPU/XCC HQD census.\n";
        return;
    }
    uint32_t nsnap = a.snapshots_in_file(*peak);
    if (nsnap > 1) {
        // Counts of several dumps must not add up: show the busiest one and the last.
        os << "\nActive HQDs per GPU and XCC (" << peak->file << ", snapshot " << peak->index
           << " of " << nsnap << ": the one with the most active user HQDs)\n";
    } else {
        os << "\nActive HQDs per GPU and XCC (" << peak->file << ")\n";
    }
    os << fmt("  %-6s %-5s %5s %12s %6s  %s\n", "gpu", "node", "xccs", "active_user", "hiq",
              "per-XCC user HQDs");
    for (const auto &[id, g] : by_node(*peak))
        os << fmt("  %-6s %-5u %5zu %12u %6u  %s\n", id.c_str(), g->node, g->xcc.size(),
                  g->active_user(), hiq_active(*g), per_xcc_text(*g).c_str());
    if (a.hqds.size() > 1) {
        os << "  hqds snapshots (active user HQDs each; max " << peak->active_user()
           << ", last of that file " << a.last_in_file(*peak).active_user() << "):\n";
        for (const auto &s : a.hqds)
            os << fmt("    %-40s #%-4u %6u\n", s.file.c_str(), s.index, s.active_user());
    }
}

void write_census_json(std::ostream &os, const Analysis &a) {
    os << "{\n  \"processes\": [";
    bool first = true;
    for (const auto &r : process_rows(a)) {
        os << (first ? "\n" : ",\n");
        first = false;
        os << "    {\"pid\": " << r.pid << ", \"gpu_id\": " << json_str(r.gpu_id)
           << ", \"queues\": " << r.queues << ", \"xcc_instances\": " << r.xccs
           << ", \"submissions\": " << r.submissions << ", \"source\": " << json_str(r.source)
           << ", \"verdict\": "
           << json_str(r.queues <= 1 ? (r.queues ? "single-queue" : "none") : "multi-queue") << "}";
    }
    os << (first ? "],\n" : "\n  ],\n");
    const HqdSnapshot *peak = a.peak_hqds();
    os << "  \"hqds_snapshot\": " << (peak ? json_str(peak->file) : "null") << ",\n";
    if (peak)
        os << "  \"hqds_snapshot_index\": " << peak->index
           << ",\n  \"hqds_max_active\": " << peak->active_user()
           << ",\n  \"hqds_last_active\": " << a.last_in_file(*peak).active_user() << ",\n";
    os << "  \"gpus\": [";
    first = true;
    if (peak)
        for (const auto &[id, gp] : by_node(*peak)) {
            const GpuSnapshot &g = *gp;
            os << (first ? "\n" : ",\n");
            first = false;
            os << "    {\"gpu_id\": " << json_str(id) << ", \"node\": " << g.node
               << ", \"xcc_count\": " << g.xcc.size() << ", \"active_hqds\": " << g.active_user()
               << ", \"active_hiq\": " << hiq_active(g) << ", \"per_xcc\": {";
            bool f2 = true;
            for (const auto &[x, c] : g.xcc) {
                os << (f2 ? "" : ", ") << json_str(std::to_string(x)) << ": " << c.active_user;
                f2 = false;
            }
            os << "}}";
        }
    os << (first ? "],\n" : "\n  ],\n");
    os << "  \"snapshots\": [";
    first = true;
    for (const auto &s : a.hqds) {
        os << (first ? "\n" : ",\n");
        first = false;
        os << "    {\"file\": " << json_str(s.file) << ", \"snapshot\": " << s.index
           << ", \"active_hqds\": " << s.active_user() << "}";
    }
    os << (first ? "]\n" : "\n  ]\n");
    os << "}\n";
}

void write_report(std::ostream &os, const Analysis &a, const std::vector<InputStats> &inputs) {
    os << "== Inputs\n";
    for (const auto &in : inputs)
        os << fmt("  %-13s %10llu lines %10.2f MB%s  %s\n", format_name(in.format),
                  static_cast<unsigned long long>(in.lines), static_cast<double>(in.bytes) / 1e6,
                  in.bad_lines ? fmt(" (%llu bad lines skipped)",
                                     static_cast<unsigned long long>(in.bad_lines))
                                     .c_str()
                               : "",
                  in.path.c_str());

    os << "\n== Queue census\n";
    write_census_text(os, a);

    for (const auto &s : a.hqds) {
        if (s.active.empty())
            continue;
        os << "\n== Active user HQDs in " << s.file;
        if (a.snapshots_in_file(s) > 1)
            os << " (snapshot " << s.index << ")";
        os << "\n";
        os << fmt("  %-6s %3s %4s %5s %4s %4s %-6s %-16s %9s %8s %8s %6s\n", "gpu", "xcc", "pipe",
                  "queue", "vmid", "prio", "pipe_p", "ring_base", "ring_size", "rptr", "wptr",
                  "dbell");
        size_t shown = 0;
        for (const auto &h : s.active) {
            if (++shown > 64) {
                os << "  ... " << s.active.size() - 64 << " more\n";
                break;
            }
            os << fmt("  %-6s %3u %4u %5u %4u %4u %-6s %-16s %9llu %8x %8llx %6x\n",
                      h.gpu_id.c_str(), h.xcc, h.pipe, h.queue, h.regs.vmid, h.regs.queue_priority,
                      pipe_priority_name(h.regs.pipe_priority), hex(h.regs.ring_base).c_str(),
                      static_cast<unsigned long long>(h.regs.ring_size), h.regs.rptr,
                      static_cast<unsigned long long>(h.regs.wptr), h.regs.doorbell_offset);
        }
    }

    for (const auto &s : a.mqds) {
        os << "\n== MQDs in " << s.file << "\n";
        os << fmt("  %-8s %-8s %-6s %2s %-8s %5s %6s %4s %-16s %9s\n", "pid", "pasid", "gpu", "#",
                  "kind", "mqds", "active", "prio", "ring_base", "ring_size");
        for (const auto &[key, p] : s.procs)
            for (const auto &[ord, q] : p.queues)
                os << fmt("  %-8lld %-8llu %-6s %2u %-8s %5u %6u %4u %-16s %9llu\n",
                          static_cast<long long>(key.first),
                          static_cast<unsigned long long>(p.pasid), key.second.c_str(), ord,
                          q.kind.c_str(), q.mqds, q.active_mqds, q.first.queue_priority,
                          hex(q.first.ring_base).c_str(),
                          static_cast<unsigned long long>(q.first.ring_size));
    }

    if (!a.hip_queues.empty()) {
        os << "\n== HIP hardware queues (AMD_LOG_LEVEL)\n";
        os << fmt("  %-8s %-16s %8s %5s %14s %14s\n", "pid", "HWq", "packets", "prio", "created_us",
                  "deleted_us");
        for (const auto &q : a.hip_queues)
            os << fmt("  %-8lld %-16s %8llu %5d %14.0f %14s\n", static_cast<long long>(q.pid),
                      hex(q.hwq).c_str(), static_cast<unsigned long long>(q.size), q.priority,
                      q.created, q.deleted < 0 ? "-" : fmt("%.0f", q.deleted).c_str());
    }

    if (!a.subs.empty()) {
        os << "\n== Submissions per queue\n";
        os << fmt("  %-8s %-10s %-8s %-16s %8s %10s %12s\n", "source", "pid", "gpu", "queue",
                  "kernels", "rate", "span_ms");
        for (const auto &[key, s] : a.subs) {
            const auto &[source, pid, gpu, queue] = key;
            os << fmt("  %-8s %-10lld %-8s %-16s %8llu %10s %12.3f\n", source.c_str(),
                      static_cast<long long>(pid), gpu.c_str(), queue.c_str(),
                      static_cast<unsigned long long>(s.n), rate_text(s).c_str(),
                      (s.last - s.first) / 1000.0);
        }
    }

    if (a.trace_events) {
        os << "\n== ftrace\n";
        os << fmt("  %llu events over %.3f s, %llu lost\n",
                  static_cast<unsigned long long>(a.trace_events),
                  (a.trace_last - a.trace_first) / 1e6, static_cast<unsigned long long>(a.lost));
        std::vector<std::pair<uint64_t, std::string>> top;
        for (const auto &[n, c] : a.event_counts)
            top.emplace_back(c, n);
        std::sort(top.rbegin(), top.rend());
        for (size_t i = 0; i < top.size() && i < 20; ++i)
            os << fmt("  %10llu  %s\n", static_cast<unsigned long long>(top[i].first),
                      top[i].second.c_str());
        os << fmt("\n  amdqp: %llu registered, %llu unregistered, %llu priority changes, "
                  "%llu watchdog, %zu errors\n",
                  static_cast<unsigned long long>(a.amdqp_registers),
                  static_cast<unsigned long long>(a.amdqp_unregisters),
                  static_cast<unsigned long long>(a.amdqp_prio_changes),
                  static_cast<unsigned long long>(a.amdqp_watchdogs), a.amdqp_errors.size());
        auto stat_line = [&](const char *what, const Stats &s, const char *unit, double div) {
            if (!s.n)
                return;
            os << fmt("  %-28s n=%-8llu avg=%.1f%s min=%.1f%s max=%.1f%s total=%.1f%s\n", what,
                      static_cast<unsigned long long>(s.n), s.avg() / div, unit, s.min / div, unit,
                      s.max / div, unit, s.total / div, unit);
        };
        stat_line("suspend batch latency", a.suspend_batch_us, "us", 1);
        stat_line("resume batch latency", a.resume_batch_us, "us", 1);
        if (a.suspend_failed || a.resume_failed)
            os << fmt("  failed entries: suspend %llu, resume %llu\n",
                      static_cast<unsigned long long>(a.suspend_failed),
                      static_cast<unsigned long long>(a.resume_failed));
        for (const auto &[gpu, s] : a.suspended_us)
            stat_line(("suspended on gpu " + gpu).c_str(), s, "ms", 1000);
        for (const auto &e : a.amdqp_errors)
            os << "  error: " << e << "\n";
        if (!a.kfd_calls.empty()) {
            os << "\n  KFD queue manager calls\n";
            for (const auto &[f, n] : a.kfd_calls) {
                auto d = a.kfd_durations.find(f);
                os << fmt("  %-30s %8llu", f.c_str(), static_cast<unsigned long long>(n));
                if (d != a.kfd_durations.end())
                    os << fmt("  avg %.1f us  max %.1f us", d->second.avg(), d->second.max);
                os << "\n";
            }
            for (const auto &[pid, n] : a.runlist_updates_by_pid)
                os << fmt("  runlist updates by pid %lld: %llu\n", static_cast<long long>(pid),
                          static_cast<unsigned long long>(n));
        }
        if (!a.intervals.empty()) {
            os << "\n  Timeline (first " << a.intervals.size() << " intervals)\n";
            for (const auto &iv : a.intervals)
                os << fmt("  %16.6f s  %-28s %-10s %10.1f us  %s\n", iv.start / 1e6,
                          iv.what.c_str(), iv.gpu.c_str(), iv.dur, iv.detail.c_str());
        }
    }

    os << "\n== Verdict per workload\n";
    os << fmt("  %-10s %-8s %-12s %6s  %s\n", "pid", "gpu", "source", "queues", "verdict");
    for (const auto &r : process_rows(a))
        os << fmt("  %-10lld %-8s %-12s %6u  %s\n", static_cast<long long>(r.pid), r.gpu_id.c_str(),
                  r.source.c_str(), r.queues, verdict(r.queues).c_str());

    if (!a.workloads.empty()) {
        os << "\n== Workload runs (dual-model logs)\n";
        os << fmt("  %-22s %-10s %8s %8s %8s %-10s %6s %9s %9s\n", "run", "high", "req/s", "P50 ms",
                  "P99 ms", "low", "batch", "iter/s", "img/s");
        for (const auto &w : a.workloads) {
            // A failed run's missing values are unknown, not zero.
            bool failed = w.scenario.find("(error)") != std::string::npos;
            auto num = [failed](double v, int decimals) {
                return failed && v == 0 ? std::string("-") : fmt("%.*f", decimals, v);
            };
            os << fmt("  %-22s %-10s %8s %8s %8s %-10s %6s %9s %9s\n", w.scenario.c_str(),
                      w.high_model.c_str(), num(w.high_rate, 2).c_str(),
                      num(w.high_p50_ms, 2).c_str(), num(w.high_p99_ms, 2).c_str(),
                      w.low_model.c_str(), num(w.low_batch, 0).c_str(),
                      num(w.low_iter_s, 2).c_str(), num(w.low_img_s, 1).c_str());
        }
    }
    if (a.dropped)
        os << "\nNote: " << a.dropped << " records beyond the per-entity caps were not kept.\n";
}

} // namespace amdqp
