// SPDX-License-Identifier: MIT
//
// suspend, resume and confine. amdqp.ko ties a suspension (or a CU-mask
// confinement) to the file descriptor that asked for it, so `suspend` and
// `confine` hold /dev/amdqp open for as long as they run. A cooperative suspension is leased
// instead: `suspend` renews each process's lease while it holds and asks them to resume when it
// stops; if it is killed, the leases run out and the processes resume on their own.
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstring>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>

#include "commands.hpp"
#include "coop_holds.hpp"
#include "exit_status.hpp"
#include "inventory.hpp"
#include "json_util.hpp"
#include "names.hpp"
#include "process_info.hpp"
#include "queue_ref.hpp"

namespace amdqpctl {

namespace act = amdqp::activity;
using json = nlohmann::json;

namespace {

constexpr int suspend_all_priorities = AMDQP_PRIO_ALL;

int worse(int a, int b) {
    if (a == exit_permission || b == exit_permission)
        return exit_permission;
    return std::max(a, b);
}

struct Target {
    // amdqp.ko's queues, by reference.
    std::vector<amdqp::QueueRef> refs;
    // Processes reached through their page (cooperative mechanism).
    std::vector<std::uint32_t> coop_pids;
    bool below = false;
    int below_priority = 0;
    std::vector<std::uint32_t> gpus;
};

int parse_below(const std::string& text) {
    if (text == "all" || text == "16")
        return suspend_all_priorities;
    if (auto p = amdqp::try_parse_priority(text))
        return *p;
    throw UsageError("unknown priority '" + text +
                     "' for --below: use high, normal, low, 0..15, or all (every priority)");
}

bool has_coop_slot(const TaggedProcess& t) {
    for (const auto& s : t.snap.slots)
        if (s.mechanism == AMDQP_ACT_MECH_COOP)
            return true;
    return false;
}

// A process qualifies for a cooperative --below when it has cooperative
// queues on the GPUs and all of them are below the priority: the fallback
// takes a process's queues off all at once.
bool coop_below(const TaggedProcess& t, int below, const std::vector<std::uint32_t>& gpus) {
    bool on_gpus = false;
    for (const auto& s : t.snap.slots) {
        if (s.mechanism != AMDQP_ACT_MECH_COOP)
            continue;
        if (static_cast<int>(s.priority) >= below)
            return false;
        if (gpus.empty() || std::find(gpus.begin(), gpus.end(), s.gpu_id) != gpus.end())
            on_gpus = true;
    }
    return on_gpus;
}

void add_unique(std::vector<std::uint32_t>& v, std::uint32_t x) {
    if (std::find(v.begin(), v.end(), x) == v.end())
        v.push_back(x);
}

void validate(const HoldOptions& opt, const char* verb) {
    const bool explicit_targets = !opt.pids.empty() || !opt.queues.empty();
    if (!explicit_targets && opt.below.empty())
        throw UsageError(std::string(verb) + ": name what: PID..., --queue REF or --below LEVEL");
    if (explicit_targets && !opt.below.empty())
        throw UsageError(std::string(verb) + ": --below does not mix with PIDs or --queue");
    if (!opt.gpus.empty() && opt.below.empty())
        throw UsageError(std::string(verb) + ": --gpu goes with --below");
    if (opt.for_seconds && !(*opt.for_seconds >= 0 && std::isfinite(*opt.for_seconds)))
        throw UsageError(std::string(verb) + ": --for needs a number of seconds >= 0");
    if (!(opt.ack_timeout > 0 && std::isfinite(opt.ack_timeout)))
        throw UsageError(std::string(verb) + ": --ack-timeout needs a number of seconds > 0");
    if (!(opt.lease > 0 && std::isfinite(opt.lease)))
        throw UsageError(std::string(verb) + ": --lease needs a number of seconds > 0");
}

// Works out what the options name. Unknown pids are reported on ctx.err
// and raise @status.
Target resolve(const Context& ctx, Sources& src, const HoldOptions& opt, int& status) {
    Target t;
    for (const auto& g : opt.gpus) {
        auto id = parse_u32(g);
        if (!id || *id == 0)
            throw UsageError("bad --gpu '" + g + "': a GPU id as amdqpctl list shows it");
        add_unique(t.gpus, *id);
    }
    std::vector<std::uint32_t> pids;
    for (const auto& p : opt.pids)
        add_unique(pids, parse_pid(p));
    std::vector<amdqp::QueueRef> queue_refs;
    for (const auto& q : opt.queues)
        queue_refs.push_back(parse_queue_ref(q));

    if (!opt.below.empty()) {
        t.below = true;
        t.below_priority = parse_below(opt.below);
        for (const auto& tp : src.tagged)
            if (coop_below(tp, t.below_priority, t.gpus))
                t.coop_pids.push_back(static_cast<std::uint32_t>(tp.page.pid()));
        if (!src.device && t.coop_pids.empty())
            src.throw_device_error();
        return t;
    }

    for (auto pid : pids) {
        const TaggedProcess* tp = src.find_tagged(pid);
        bool found = false;
        if (src.device) {
            for (const auto& q : src.device->queues(0, pid)) {
                t.refs.push_back(amdqp::QueueRef::of(q));
                found = true;
            }
        }
        if (tp && has_coop_slot(*tp)) {
            t.coop_pids.push_back(pid);
            found = true;
        }
        if (found)
            continue;
        if (!src.device)
            src.throw_device_error();
        ctx.err << "amdqpctl: pid " << pid
                << " has no GPU queues under amdqp and no cooperative ones (see amdqpctl list)\n";
        status = worse(status, exit_error);
    }
    for (const auto& ref : queue_refs) {
        std::optional<amdqp::QueueInfo> q;
        if (src.device)
            q = ref.by_ring ? src.device->find_queue(ref.pid, ref.ring_va)
                            : src.device->find_queue(ref.pid, ref.gpu_id, ref.queue_id);
        if (q) {
            t.refs.push_back(amdqp::QueueRef::of(*q));
            continue;
        }
        // Not amdqp's: a cooperative queue is reached through its process.
        bool coop = false;
        if (const TaggedProcess* tp = src.find_tagged(ref.pid)) {
            for (const auto& s : tp->snap.slots) {
                if (s.mechanism != AMDQP_ACT_MECH_COOP)
                    continue;
                if (ref.by_ring ? s.ring_va == ref.ring_va
                                : (s.queue_id == ref.queue_id && s.gpu_id == ref.gpu_id))
                    coop = true;
            }
        }
        if (coop) {
            add_unique(t.coop_pids, ref.pid);
            continue;
        }
        if (!src.device)
            src.throw_device_error();
        ctx.err << "amdqpctl: no queue " << amdqp::to_string(ref) << " (see amdqpctl list)\n";
        status = worse(status, exit_error);
    }
    return t;
}

std::chrono::milliseconds to_ms(double seconds) {
    return std::chrono::milliseconds(static_cast<long long>(std::ceil(seconds * 1000.0)));
}

// A cooperative request's outcome as one line; empty when it did what was
// asked.
std::string coop_problem(std::uint32_t pid, const act::CoopResult& r, bool suspend,
                         double timeout) {
    if (!r.acked)
        return "pid " + std::to_string(pid) + " did not acknowledge the cooperative " +
               (suspend ? "suspend" : "resume") + " request within " + json(timeout).dump() +
               "s (is it busy starting up, or stopped?)";
    const std::uint32_t want = suspend ? AMDQP_ACT_COOP_SUSPENDED : AMDQP_ACT_COOP_RUNNING;
    if (r.state == want)
        return {};
    if (suspend && r.lease_ran_out())
        return "pid " + std::to_string(pid) +
               " saw the cooperative suspend request only after its lease had run out";
    std::string why = r.error ? std::strerror(-r.error) : coop_state_name(r.state);
    return "pid " + std::to_string(pid) + " could not " +
           (suspend ? "take its queues off" : "put its queues back") + ": " + why;
}

json queue_json(const Context& ctx, const amdqp::QueueInfo& q) {
    return {{"pid", q.pid},
            {"comm", or_null(read_process_info(ctx.proc_root, q.pid).comm)},
            {"gpu", q.gpu_id},
            {"queue_id", q.queue_id},
            {"ring_va", hex(q.ring_va)},
            {"priority", q.priority},
            {"mechanism", "amdqp"}};
}

json coop_json(const Context& ctx, std::uint32_t pid, const act::Snapshot& snap) {
    std::uint32_t n = 0;
    for (const auto& s : snap.slots)
        n += s.mechanism == AMDQP_ACT_MECH_COOP;
    // Queues past the page's last slot are taken off with the rest: they
    // count, though no slot shows them.
    const auto untracked =
        static_cast<std::uint32_t>(std::min<std::uint64_t>(snap.header.untracked, UINT32_MAX - n));
    return {{"pid", pid},
            {"comm", or_null(read_process_info(ctx.proc_root, pid).comm)},
            {"queues", n + untracked},
            {"untracked", untracked},
            {"priority", snap.header.priority},
            {"mechanism", "coop"}};
}

void print_line(const Context& ctx, const char* verb, const json& item) {
    ctx.out << verb << " pid " << item["pid"].get<std::uint32_t>();
    if (!item["comm"].is_null())
        ctx.out << " (" << item["comm"].get<std::string>() << ")";
    if (item["mechanism"] == "amdqp")
        ctx.out << " gpu " << item["gpu"].get<std::uint32_t>() << " queue "
                << item["queue_id"].get<std::uint32_t>() << " priority "
                << priority_label(item["priority"].get<std::uint32_t>()) << " [amdqp]\n";
    else
        ctx.out << ": " << item["queues"].get<std::uint32_t>() << " queue(s) [coop]\n";
}

// --for as JSON: null when the hold lasts until it is interrupted.
json for_seconds_json(const std::optional<double>& for_seconds) {
    return for_seconds ? json(*for_seconds) : json(nullptr);
}

// How long a hold lasts, for a human watching.
void say_holding(const Context& ctx, const std::optional<double>& for_seconds) {
    ctx.err << "amdqpctl: holding "
            << (for_seconds ? "for " + json(*for_seconds).dump() + "s"
                            : std::string("until interrupted (Ctrl-C or SIGTERM)"))
            << '\n';
}

// Waits for the end of the hold (a stop request, or --for), renewing the
// cooperative leases meanwhile.
void hold(Context& ctx, const HoldOptions& opt, CoopHolds& coop) {
    using clock = std::chrono::steady_clock;
    const auto end =
        opt.for_seconds ? clock::now() + to_ms(*opt.for_seconds) : clock::time_point::max();
    for (;;) {
        const bool renewing = coop.holding();
        long long timeout_ms = -1;
        if (opt.for_seconds)
            timeout_ms = std::max<long long>(
                0, std::chrono::ceil<std::chrono::milliseconds>(end - clock::now()).count());
        if (renewing)
            timeout_ms = timeout_ms < 0 ? coop.interval().count()
                                        : std::min<long long>(timeout_ms, coop.interval().count());
        if (ctx.waiter.wait(-1, static_cast<int>(timeout_ms)) == WaitResult::stop)
            return;
        if (!renewing || clock::now() >= end)
            return;
        coop.renew();
    }
}

}  // namespace

int cmd_suspend(Context& ctx, const HoldOptions& opt) {
    validate(opt, "suspend");
    // Before anything is taken: a Ctrl-C from here on releases what was.
    ctx.waiter.arm();
    Sources src = open_sources(ctx);
    int status = exit_ok;
    Target t = resolve(ctx, src, opt, status);

    json suspended = json::array();
    std::uint32_t skipped = 0;
    std::uint64_t latency_ns = 0;
    if (src.device && t.below) {
        auto r = src.device->suspend_below(t.gpus, t.below_priority, opt.grace_us);
        skipped = r.skipped;
        latency_ns = r.latency_ns;
        for (const auto& q : src.device->queues())
            if (q.held() && (t.gpus.empty() ||
                             std::find(t.gpus.begin(), t.gpus.end(), q.gpu_id) != t.gpus.end()))
                suspended.push_back(queue_json(ctx, q));
        if (skipped)
            ctx.err << "amdqpctl: " << skipped
                    << " queue(s) below the priority were left running (no permission, watchdog "
                       "cooldown or a firmware timeout)\n";
    } else if (src.device && !t.refs.empty()) {
        auto r = src.device->suspend(t.refs, opt.grace_us);
        latency_ns = r.latency_ns;
        for (const auto& e : r.entries) {
            if (!e.ok()) {
                ctx.err << amdqp::entry_message(e, true) << '\n';
                status = worse(status, exit_status_for(amdqp::entry_errc(e.error)));
                continue;
            }
            if (auto q = src.device->find_queue(e.ref.pid, e.ref.gpu_id, e.ref.queue_id))
                suspended.push_back(queue_json(ctx, *q));
        }
    }

    CoopHolds coop(ctx.err, to_ms(opt.lease));
    for (auto pid : t.coop_pids) {
        try {
            coop.add(pid, act::Page::open(static_cast<pid_t>(pid), act::Page::Access::control));
        } catch (const amdqp::Error& e) {
            ctx.err << "amdqpctl: pid " << pid << ": " << e.what() << '\n';
            status = worse(status, exit_status_for(e.code()));
        }
    }
    coop.await_acks(to_ms(opt.ack_timeout));
    for (auto& h : coop.holds()) {
        if (!h.ours)
            continue;
        // Held even when it failed or came late: the request stands (and
        // its lease is renewed) until it is taken back.
        if (std::string problem = coop_problem(h.pid, h.ack, true, opt.ack_timeout);
            !problem.empty()) {
            ctx.err << "amdqpctl: " << problem << '\n';
            status = worse(status, exit_error);
            continue;
        }
        try {
            suspended.push_back(coop_json(ctx, h.pid, h.page.snapshot()));
        } catch (const act::PageError&) {
            // Gone since it acked: nothing of it is suspended.
        }
    }

    if (opt.json) {
        ctx.out << json{{"suspended", suspended},
                        {"skipped", skipped},
                        {"latency_ns", latency_ns},
                        {"for_seconds", for_seconds_json(opt.for_seconds)}}
                       .dump()
                << '\n';
    } else {
        for (const auto& item : suspended)
            print_line(ctx, "suspended", item);
    }
    ctx.out.flush();

    const bool renewing = coop.holding();
    if (suspended.empty() && !renewing) {
        if (status == exit_ok && t.below && !opt.json)
            ctx.out << "nothing to suspend below priority " << t.below_priority << '\n';
        return status;
    }
    if (!opt.json)
        say_holding(ctx, opt.for_seconds);
    hold(ctx, opt, coop);

    if (coop.holding()) {
        coop.release_all();
        coop.await_acks(to_ms(opt.ack_timeout));
        for (auto& h : coop.holds()) {
            if (!h.ours)
                continue;
            if (std::string problem = coop_problem(h.pid, h.ack, false, opt.ack_timeout);
                !problem.empty()) {
                ctx.err << "amdqpctl: " << problem << " (its lease ends the suspension within "
                        << json(opt.lease).dump() << "s; amdqpctl resume " << h.pid
                        << " asks again)\n";
                status = worse(status, exit_error);
            }
        }
    }
    // Closing /dev/amdqp drops this process's holds in the kernel.
    src.device.reset();
    if (!opt.json)
        ctx.out << "released " << suspended.size() << " suspension(s)\n";
    return status;
}

namespace {

// The mask of each GPU to confine to, from --cus/--first-cu or --mask.
std::vector<std::uint32_t> confine_mask(const ConfineOptions& opt, const amdqp::CuGeometry& g) {
    if (opt.cus)
        return g.cu_range(opt.first_cu.value_or(0), *opt.cus);
    std::vector<std::uint32_t> mask;
    for (const auto& m : opt.masks) {
        auto w = parse_u64(m);
        if (!w || *w > UINT32_MAX)
            throw UsageError("bad --mask word '" + m + "': a 32-bit number (0x... for hex)");
        mask.push_back(static_cast<std::uint32_t>(*w));
    }
    if (mask.size() != g.mask_words)
        throw UsageError("GPU " + std::to_string(g.gpu_id) + " takes " +
                         std::to_string(g.mask_words) + " --mask word(s) (" +
                         std::to_string(g.num_xcc) + " XCC(s) of " + std::to_string(g.cu_per_xcc) +
                         " CUs), not " + std::to_string(mask.size()));
    return mask;
}

}  // namespace

int cmd_confine(Context& ctx, const ConfineOptions& opt) {
    if (opt.below.empty())
        throw UsageError("confine: name what: --below LEVEL");
    if (opt.cus.has_value() == !opt.masks.empty())
        throw UsageError("confine: give the CUs to keep: --cus N or --mask WORD...");
    if (opt.first_cu && !opt.cus)
        throw UsageError("confine: --first-cu goes with --cus");
    if (opt.cus && *opt.cus == 0)
        throw UsageError("confine: --cus needs at least 1 (every XCC keeps a CU)");
    if (opt.for_seconds && !(*opt.for_seconds >= 0 && std::isfinite(*opt.for_seconds)))
        throw UsageError("confine: --for needs a number of seconds >= 0");
    const int below = parse_below(opt.below);
    if (below > AMDQP_PRIO_MAX)
        throw UsageError("confine: --below all is not a level: use high, normal, low or 0..15");
    std::vector<std::uint32_t> ids;
    for (const auto& g : opt.gpus) {
        auto id = parse_u32(g);
        if (!id || *id == 0)
            throw UsageError("bad --gpu '" + g + "': a GPU id as amdqpctl list shows it");
        add_unique(ids, *id);
    }

    // Before anything is taken: a Ctrl-C from here on releases what was.
    ctx.waiter.arm();
    Sources src = open_sources(ctx);
    if (!src.device)
        src.throw_device_error();
    amdqp::Device& dev = *src.device;
    const bool named = !ids.empty();
    if (!named)
        for (const auto& d : dev.devices())
            ids.push_back(d.gpu_id);
    int status = exit_ok;
    std::vector<amdqp::CuTarget> targets;
    for (const auto& g : dev.cu_geometry(ids)) {
        if (!g.confinable()) {
            if (named) {
                ctx.err << "amdqpctl: GPU " << g.gpu_id
                        << (g.error == -ENODEV ? " does not exist (see amdqpctl list)"
                                               : " cannot be confined (its backend has no "
                                                 "CU-mask control)")
                        << '\n';
                status = exit_error;
            }
            continue;
        }
        targets.push_back({g, confine_mask(opt, g)});
    }
    if (status != exit_ok)
        return status;
    if (targets.empty()) {
        ctx.err << "amdqpctl: no GPU here can be confined\n";
        return exit_error;
    }

    const auto r = dev.confine_below(targets, below, opt.grace_us);
    json confined = json::array();
    for (const auto& q : dev.queues())
        if (q.state & AMDQP_QSTATE_CONFINE_HELD)
            confined.push_back(queue_json(ctx, q));
    if (r.skipped)
        ctx.err << "amdqpctl: " << r.skipped
                << " queue(s) below the priority were left as they were (no permission, "
                   "watchdog cooldown or a firmware error)\n";
    if (opt.json) {
        json gpus = json::array();
        for (const auto& t : targets)
            gpus.push_back({{"gpu", t.geometry.gpu_id}, {"mask", t.mask}});
        ctx.out << json{{"confined", confined},
                        {"gpus", gpus},
                        {"skipped", r.skipped},
                        {"latency_ns", r.latency_ns},
                        {"for_seconds", for_seconds_json(opt.for_seconds)}}
                       .dump()
                << '\n';
    } else {
        for (const auto& item : confined)
            print_line(ctx, "confined", item);
    }
    ctx.out.flush();
    if (confined.empty()) {
        if (!opt.json)
            ctx.out << "nothing to confine below priority " << below << '\n';
        return status;
    }
    if (!opt.json)
        say_holding(ctx, opt.for_seconds);
    const int timeout_ms =
        opt.for_seconds ? static_cast<int>(std::min<double>(*opt.for_seconds * 1000.0, INT32_MAX))
                        : -1;
    ctx.waiter.wait(-1, timeout_ms);
    // Closing /dev/amdqp lifts this process's confinements in the kernel.
    src.device.reset();
    if (!opt.json)
        ctx.out << "released " << confined.size() << " confinement(s)\n";
    return status;
}

int cmd_resume(Context& ctx, const HoldOptions& opt) {
    validate(opt, "resume");
    if (opt.for_seconds)
        throw UsageError("resume: --for goes with suspend");
    Sources src = open_sources(ctx);
    int status = exit_ok;
    Target t = resolve(ctx, src, opt, status);

    json resumed = json::array();
    json still_held = json::array();
    json running = json::array();
    // amdqp.ko's suspensions belong to their holders' descriptors: another
    // process cannot drop them, only report who still holds what.
    if (src.device) {
        std::vector<amdqp::QueueInfo> queues;
        if (t.below) {
            for (const auto& q : src.device->queues())
                if (static_cast<int>(q.priority) < t.below_priority &&
                    (t.gpus.empty() ||
                     std::find(t.gpus.begin(), t.gpus.end(), q.gpu_id) != t.gpus.end()))
                    queues.push_back(q);
        } else {
            for (const auto& ref : t.refs)
                if (auto q = src.device->find_queue(ref.pid, ref.gpu_id, ref.queue_id))
                    queues.push_back(*q);
        }
        for (const auto& q : queues) {
            if (!q.suspended()) {
                running.push_back(queue_json(ctx, q));
                continue;
            }
            still_held.push_back(queue_json(ctx, q));
            ctx.err << "amdqpctl: " << amdqp::to_string(amdqp::QueueRef::of(q))
                    << " is held suspended by " << q.holders
                    << " other handle(s) of /dev/amdqp (an amdqpctl suspend, amdqpd): it "
                       "resumes when they release it or exit\n";
            status = worse(status, exit_error);
        }
    }
    for (auto pid : t.coop_pids) {
        try {
            act::Page page = act::Page::open(static_cast<pid_t>(pid), act::Page::Access::control);
            act::CoopResult r = page.request_coop(false, to_ms(opt.ack_timeout));
            if (std::string problem = coop_problem(pid, r, false, opt.ack_timeout);
                !problem.empty()) {
                ctx.err << "amdqpctl: " << problem << '\n';
                status = worse(status, exit_error);
                continue;
            }
            resumed.push_back(coop_json(ctx, pid, page.snapshot()));
        } catch (const amdqp::Error& e) {
            ctx.err << "amdqpctl: pid " << pid << ": " << e.what() << '\n';
            status = worse(status, exit_status_for(e.code()));
        }
    }
    if (opt.json)
        ctx.out
            << json{{"resumed", resumed}, {"running", running}, {"still_held", still_held}}.dump()
            << '\n';
    else {
        for (const auto& item : resumed)
            print_line(ctx, "resumed", item);
        for (const auto& item : running)
            print_line(ctx, "running", item);
    }
    return status;
}

}  // namespace amdqpctl
