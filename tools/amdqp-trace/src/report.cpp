#include "report.h"

#include <algorithm>
#include <cstdarg>
#include <cstdio>
#include <map>

#include "json_out.h"
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

// Runlist updates: what reached the firmware, why, and whom it preempted.
void write_runlist_updates(std::ostream &os, const Analysis &a) {
    bool sent = a.runlist_sent_total > 0;
    const auto &by_cause = sent ? a.runlist_sent : a.runlist_calls;
    if (by_cause.empty())
        return;
    uint64_t total = 0;
    for (const auto &[k, n] : by_cause)
        total += n;
    if (sent)
        os << fmt("\n  Runlist updates sent to the HWS firmware (pm_send_runlist): %llu, "
                  "%llu unmap packets\n",
                  static_cast<unsigned long long>(total),
                  static_cast<unsigned long long>(a.unmap_packets));
    else
        os << fmt("\n  Runlist updates: %llu runlist-changing calls (execute_queues_cpsch, or "
                  "map_queues_cpsch outside it; pm_send_runlist was not traced, so this is an "
                  "upper bound of what reached the firmware)\n",
                  static_cast<unsigned long long>(total));
    os << fmt("    %-24s %-10s %-6s %8s\n", "cause", "pid", "gpu", "updates");
    for (const auto &[k, n] : by_cause)
        os << fmt("    %-24s %-10lld %-6s %8llu\n", k.cause.c_str(), static_cast<long long>(k.pid),
                  k.gpu.c_str(), static_cast<unsigned long long>(n));
    auto col = a.collateral(sent);
    if (col.empty())
        return;
    // Under HWS every runlist update unmaps all queues of its GPU: these are the
    // preemptions each process took from updates it did not make itself.
    os << "\n  Preemptions caused by others' runlist updates (each update unmaps every queue "
          "of its GPU)\n";
    os << fmt("    %-10s %-6s %-24s %8s\n", "pid", "gpu", "cause", "preempted");
    for (const auto &[k, n] : col)
        os << fmt("    %-10lld %-6s %-24s %8llu\n", static_cast<long long>(k.victim), k.gpu.c_str(),
                  k.cause.c_str(), static_cast<unsigned long long>(n));
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
    auto from_life = [&](int64_t pid, const std::string &gpu, const char *source,
                         const QueueLife &life) {
        ProcessRow &r = rows[{pid, gpu, source}];
        r.pid = pid;
        r.gpu_id = gpu;
        r.source = source;
        // Runs of one pid in several HIP logs do not add up: the largest.
        if (life.peak() >= r.queues) {
            r.queues = life.peak();
            r.seen = life.seen();
            r.before_capture = static_cast<uint32_t>(life.before_capture().size());
            r.before_ids.assign(life.before_capture().begin(), life.before_capture().end());
        }
    };
    for (const auto &[key, life] : a.amdqp_queues)
        from_life(key.first, key.second, "amdqp-trace", life);
    for (const auto &[key, life] : a.hip_life) {
        const auto &[file, pid, dev] = key;
        from_life(pid, "dev" + std::to_string(dev), "hip-log", life);
    }
    for (const auto &[key, s] : a.subs) {
        const auto &[source, pid, gpu, queue] = key;
        ProcessRow &r = rows[{pid, gpu, source}];
        r.pid = pid;
        r.gpu_id = gpu;
        r.source = source;
        r.submissions += s.n;
        if (source != "hip-log")
            ++r.queues; // profilers: one entry per distinct queue id
    }
    std::vector<ProcessRow> out;
    for (auto &[k, r] : rows)
        out.push_back(r);
    return out;
}

namespace {

void write_census_tables(std::ostream &os, const Analysis &a) {
    os << "Processes (user queues per GPU)\n";
    os << fmt("  %-10s %-8s %-12s %6s %5s %8s  %s\n", "pid", "gpu", "source", "queues", "xccs",
              "submits", "verdict");
    for (const auto &r : process_rows(a))
        os << fmt("  %-10lld %-8s %-12s %6u %5s %8llu  %s\n", static_cast<long long>(r.pid),
                  r.gpu_id.c_str(), r.source.c_str(), r.queues,
                  r.xccs ? std::to_string(r.xccs).c_str() : "-",
                  static_cast<unsigned long long>(r.submissions), verdict(r.queues).c_str());
    for (const auto &r : process_rows(a)) {
        if (r.before_capture) {
            std::string ids;
            for (size_t i = 0; i < r.before_ids.size() && i < 16; ++i)
                ids += (i ? ", " : "") + (r.source == "hip-log" ? hex(r.before_ids[i])
                                                                : std::to_string(r.before_ids[i]));
            if (r.before_ids.size() > 16)
                ids += ", ...";
            os << fmt("  note: pid %lld %s: %u of its queues were created before the capture "
                      "started (first seen unregistered or in use): %s\n",
                      static_cast<long long>(r.pid), r.gpu_id.c_str(), r.before_capture,
                      ids.c_str());
        }
        if (r.seen > r.queues)
            os << fmt("  note: pid %lld %s: %u queues over the capture, at most %u at once "
                      "(queues destroyed and created again)\n",
                      static_cast<long long>(r.pid), r.gpu_id.c_str(), r.seen, r.queues);
    }
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
    for (const auto &[id, g] : by_node(*peak)) {
        if (g->stopped)
            os << fmt("  %-6s %-5u %5s %12s %6s  %s\n", id.c_str(), g->node, "-", "-", "-",
                      "device is stopped (KFD scheduler not running: no HQDs shown)");
        else
            os << fmt("  %-6s %-5u %5zu %12u %6u  %s\n", id.c_str(), g->node, g->xcc.size(),
                      g->active_user(), hiq_active(*g), per_xcc_text(*g).c_str());
    }
    if (a.hqds.size() > 1) {
        os << "  hqds snapshots (active user HQDs each; max " << peak->active_user()
           << ", last of that file " << a.last_in_file(*peak).active_user() << "):\n";
        for (const auto &s : a.hqds)
            os << fmt("    %-40s #%-4u %6u\n", s.file.c_str(), s.index, s.active_user());
    }
}

// "inputs: N used, M skipped" and the skipped files with their reasons.
void write_inventory_text(std::ostream &os, const std::vector<InputEntry> &inventory) {
    size_t used = 0;
    for (const auto &e : inventory)
        used += e.used;
    os << "\ninputs: " << used << " used, " << inventory.size() - used << " skipped\n";
    for (const auto &e : inventory)
        if (!e.used)
            os << "  skipped " << e.path << ": " << e.reason << "\n";
}

} // namespace

void write_census_text(std::ostream &os, const Analysis &a,
                       const std::vector<InputEntry> *inventory) {
    write_census_tables(os, a);
    if (inventory)
        write_inventory_text(os, *inventory);
}

void write_census_json(std::ostream &os, const Analysis &a,
                       const std::vector<InputEntry> *inventory) {
    Json doc;
    Json procs = Json::array();
    for (const auto &r : process_rows(a)) {
        Json row;
        row["pid"] = r.pid;
        row["gpu_id"] = r.gpu_id;
        row["queues"] = r.queues;
        row["xcc_instances"] = r.xccs;
        row["submissions"] = r.submissions;
        row["source"] = r.source;
        row["verdict"] = r.queues <= 1 ? (r.queues ? "single-queue" : "none") : "multi-queue";
        if (r.seen > r.queues)
            row["queues_seen"] = r.seen;
        if (r.before_capture)
            row["created_before_capture"] = r.before_capture;
        procs.push_back(std::move(row));
    }
    doc["processes"] = std::move(procs);
    const HqdSnapshot *peak = a.peak_hqds();
    doc["hqds_snapshot"] = peak ? Json(peak->file) : Json(nullptr);
    if (peak) {
        doc["hqds_snapshot_index"] = peak->index;
        doc["hqds_max_active"] = peak->active_user();
        doc["hqds_last_active"] = a.last_in_file(*peak).active_user();
    }
    Json gpus = Json::array();
    if (peak)
        for (const auto &[id, gp] : by_node(*peak)) {
            const GpuSnapshot &g = *gp;
            Json row;
            row["gpu_id"] = id;
            row["node"] = g.node;
            row["xcc_count"] = g.xcc.size();
            row["active_hqds"] = g.active_user();
            row["active_hiq"] = hiq_active(g);
            Json per_xcc = Json::object();
            for (const auto &[x, c] : g.xcc)
                per_xcc[std::to_string(x)] = c.active_user;
            row["per_xcc"] = std::move(per_xcc);
            // Only on stopped GPUs, so that the rows of running ones stay as they were.
            if (g.stopped)
                row["stopped"] = true;
            gpus.push_back(std::move(row));
        }
    doc["gpus"] = std::move(gpus);
    Json snaps = Json::array();
    for (const auto &s : a.hqds)
        snaps.push_back(
            Json{{"file", s.file}, {"snapshot", s.index}, {"active_hqds", s.active_user()}});
    doc["snapshots"] = std::move(snaps);
    if (inventory) {
        Json files = Json::array();
        for (const auto &e : *inventory)
            files.push_back(
                Json{{"path", e.path},
                     {"format",
                      e.format == Format::Unknown ? Json(nullptr) : Json(format_name(e.format))},
                     {"status", e.used ? "used" : "skipped"},
                     {"reason", e.used ? Json(nullptr) : Json(e.reason)}});
        doc["inputs"] = std::move(files);
    }
    write_json_rows(os, doc);
}

void write_report(std::ostream &os, const Analysis &a, const std::vector<InputStats> &inputs,
                  const std::vector<InputEntry> *inventory) {
    os << "== Inputs\n";
    for (const auto &in : inputs)
        os << fmt("  %-13s %10llu lines %10.2f MB%s  %s\n", format_name(in.format),
                  static_cast<unsigned long long>(in.lines), static_cast<double>(in.bytes) / 1e6,
                  in.bad_lines ? fmt(" (%llu bad lines skipped)",
                                     static_cast<unsigned long long>(in.bad_lines))
                                     .c_str()
                               : "",
                  in.path.c_str());
    if (inventory)
        for (const auto &e : *inventory)
            if (!e.used)
                os << fmt("  %-13s %s: %s\n", "skipped", e.path.c_str(), e.reason.c_str());

    os << "\n== Queue census\n";
    write_census_tables(os, a);

    for (const auto &s : a.hqds) {
        if (s.active.empty())
            continue;
        os << "\n== Active user HQDs in " << s.file;
        if (a.snapshots_in_file(s) > 1)
            os << " (snapshot " << s.index << ")";
        os << "\n";
        os << fmt("  %-6s %3s %4s %5s %4s %4s %-6s %-16s %9s %10s %10s %8s\n", "gpu", "xcc", "pipe",
                  "queue", "vmid", "prio", "pipe_p", "ring_base", "ring_size", "rptr", "wptr",
                  "dbell");
        size_t shown = 0;
        for (const auto &h : s.active) {
            if (++shown > 64) {
                os << "  ... " << s.active.size() - 64 << " more\n";
                break;
            }
            os << fmt("  %-6s %3u %4u %5u %4u %4u %-6s %-16s %9llu %10s %10s %8s\n",
                      h.gpu_id.c_str(), h.xcc, h.pipe, h.queue, h.regs.vmid, h.regs.queue_priority,
                      pipe_priority_name(h.regs.pipe_priority), hex(h.regs.ring_base).c_str(),
                      static_cast<unsigned long long>(h.regs.ring_size), hex(h.regs.rptr).c_str(),
                      hex(h.regs.wptr).c_str(), hex(h.regs.doorbell_offset).c_str());
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
        os << fmt("  %-8s %-5s %-16s %8s %5s %14s %14s\n", "pid", "dev", "HWq", "packets", "prio",
                  "created_us", "deleted_us");
        for (const auto &q : a.hip_queues)
            os << fmt("  %-8lld %-5d %-16s %8llu %5d %14.0f %14s\n", static_cast<long long>(q.pid),
                      q.device, hex(q.hwq).c_str(), static_cast<unsigned long long>(q.size),
                      q.priority, q.created, q.deleted < 0 ? "-" : fmt("%.0f", q.deleted).c_str());
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
            write_runlist_updates(os, a);
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
