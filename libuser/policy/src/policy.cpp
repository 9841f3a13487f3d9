// SPDX-License-Identifier: MIT
#include "amdqp/policy/policy.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string_view>
#include <vector>

namespace amdqp::policy {

namespace {

std::string joined(const std::vector<std::string>& errors) {
    std::string s = "invalid policy config:";
    for (const auto& e : errors)
        s += " " + e + ";";
    return s;
}

const Config& checked(const Config& cfg, const Actions& actions) {
    auto err = cfg.validate();
    if (cfg.confines() && !actions.can_confine())
        err.push_back("cu_demand confines a level, but these Actions cannot confine");
    if (!err.empty())
        throw std::invalid_argument(joined(err));
    return cfg;
}

}  // namespace

Policy::Policy(const Config& cfg, const Clock& clock, Actions& actions)
    : cfg_(checked(cfg, actions)), clock_(clock), actions_(actions) {}

void Policy::add_queue(const QueueInfo& info) {
    auto it = queues_.find(info.key);
    if (it == queues_.end())
        it = queues_.try_emplace(info.key, info, cfg_).first;
    else
        it->second.info = info;
    auto& gpu = gpus_[info.key.gpu_id];
    // SUSPEND_BELOW acts on the queues that exist when it is called: a
    // newcomer below the level needs the call again.
    if (info.mechanism == Mechanism::kAmdqp && info.priority < gpu.applied)
        gpu.reapply = true;
    decide();
}

void Policy::remove_queue(const QueueKey& key) {
    if (queues_.erase(key) != 0)
        decide();
}

void Policy::set_unwatched(std::uint32_t gpu, const Unwatched& unwatched) {
    Unwatched u = unwatched;
    u.unheld.reset();  // acted on here, not kept
    auto it = gpus_.find(gpu);
    if (it == gpus_.end()) {
        if (!u.lowest && !u.working)
            return;
        it = gpus_.try_emplace(gpu).first;
    }
    Gpu& g = it->second;
    // SUSPEND_BELOW acts on the queues that exist when it is called: as
    // for a tagged newcomer (add_queue), the call is made again.
    const bool reapply = unwatched.unheld && *unwatched.unheld < g.applied;
    if (g.unwatched == u && !reapply)
        return;
    g.unwatched = u;
    g.reapply = g.reapply || reapply;
    decide();
}

void Policy::set_geometry(std::uint32_t gpu, const CuGeometry& geometry) {
    auto& g = gpus_[gpu];
    if (g.geometry.num_xcc == geometry.num_xcc && g.geometry.cu_per_xcc == geometry.cu_per_xcc)
        return;
    g.geometry = geometry;
    g.demand.clear();  // in CUs of the old layout
    decide();
}

void Policy::remove_process(std::int32_t pid) {
    std::erase_if(queues_, [pid](const auto& kv) { return kv.first.pid == pid; });
    hinted_.erase(pid);
    // Its cooperative suspension went with it: nothing to put back.
    coop_applied_.erase(pid);
    decide();
}

void Policy::update(std::span<const QueueSample> queues, std::span<const ProcessSample> procs) {
    const std::int64_t now = clock_.now_ns();
    for (const auto& p : procs)
        hinted_[p.pid] = p.hint_begin != p.hint_end;
    std::set<QueueKey> sampled;
    for (const auto& s : queues) {
        auto it = queues_.find(s.key);
        if (it == queues_.end())
            continue;
        auto h = hinted_.find(s.key.pid);
        observe(it->second, &s, h != hinted_.end() && h->second, now);
        sampled.insert(s.key);
    }
    // A hint concerns every queue of its process, sampled or not.
    for (const auto& p : procs) {
        const bool hint = p.hint_begin != p.hint_end;
        for (auto it = queues_.lower_bound(QueueKey{p.pid, 0, 0});
             it != queues_.end() && it->first.pid == p.pid; ++it) {
            if (!sampled.contains(it->first))
                observe(it->second, nullptr, hint, now);
        }
    }
    decide();
}

void Policy::tick() {
    decide();
}

void Policy::observe(Queue& q, const QueueSample* s, bool hinted, std::int64_t now) {
    bool new_doorbell = false;
    std::int64_t at = now;
    if (s != nullptr) {
        const bool first = !q.seen;
        new_doorbell = q.seen && s->doorbells > q.doorbells;
        q.doorbells = s->doorbells;
        q.demand_wgs = s->demand_wgs;
        q.seen = true;
        q.pending = s->read_index_known && s->read_index < s->write_index;
        if (new_doorbell)
            at = std::min(s->last_doorbell_ns, now);
        else if (first && q.pending)
            new_doorbell = true;  // found with work in flight
    }
    if ((new_doorbell || hinted) && q.activity != Activity::kBusy)
        go_busy(q, at);
    if (q.activity == Activity::kBusy && !q.pending && !hinted) {
        q.activity = Activity::kLingering;
        q.idle_since = now;
    }
}

void Policy::go_busy(Queue& q, std::int64_t at) {
    const auto h = q.est.hysteresis();
    if (q.activity == Activity::kLingering) {
        const auto gap = std::chrono::nanoseconds{std::max<std::int64_t>(at - q.idle_since, 0)};
        if (gap < h) {
            q.est.gap(gap);
        } else {
            // Its hysteresis ran out before this sample saw it: a burst
            // ended and this doorbell came after.
            q.est.end_burst();
            q.expired_at = q.idle_since + h.count();
            q.expired_idle_since = q.idle_since;
            q.expired_h = h;
        }
    }
    if (q.expired_at) {
        const auto gap = at - q.expired_idle_since;
        if (static_cast<double>(gap) <
            cfg_.relapse_factor * static_cast<double>(q.expired_h.count())) {
            q.est.relapse(std::chrono::nanoseconds{std::max<std::int64_t>(gap, 0)});
            ++stats_.relapses;
        }
        q.expired_at.reset();
    }
    q.activity = Activity::kBusy;
}

void Policy::expire(std::int64_t now) {
    for (auto& [key, q] : queues_) {
        if (q.activity != Activity::kLingering)
            continue;
        const auto h = q.est.hysteresis();
        if (now - q.idle_since < h.count())
            continue;
        q.est.end_burst();
        q.activity = Activity::kIdle;
        q.expired_at = q.idle_since + h.count();
        q.expired_idle_since = q.idle_since;
        q.expired_h = h;
    }
}

bool Policy::starving_now(const Gpu& g) {
    return !g.starved.empty() && g.starved.back().end < 0;
}

// What the lower work owes in the window: suspended time in full,
// confined time at (1 - share).
double Policy::starved_in_window(const Gpu& g, std::int64_t now) const {
    const std::int64_t from = now - cfg_.share_window.count();
    double sum = 0;
    for (const auto& st : g.starved) {
        const std::int64_t end = st.end < 0 ? now : st.end;
        sum += st.rate *
               static_cast<double>(std::max<std::int64_t>(0, end - std::max(st.begin, from)));
    }
    return sum;
}

void Policy::account(std::int64_t now) {
    const std::int64_t from = now - cfg_.share_window.count();
    // Lowest priority with work per GPU: a victim exists below any level above it.
    std::map<std::uint32_t, int> lowest_active;
    for (const auto& [key, q] : queues_) {
        if (q.activity == Activity::kIdle)
            continue;
        auto [it, fresh] = lowest_active.try_emplace(key.gpu_id, q.info.priority);
        if (!fresh)
            it->second = std::min(it->second, q.info.priority);
    }
    for (auto& [id, g] : gpus_) {
        const auto low = lowest_active.find(id);
        const bool starving =
            g.applied > 0 && ((low != lowest_active.end() && low->second < g.applied) ||
                              (g.unwatched.lowest && *g.unwatched.lowest < g.applied));
        const bool open = starving_now(g);
        // The continuous bound is about suspension: a confined queue runs.
        const bool suspended = starving && g.share == 0;
        // A stretch ends only once the victims ran for a whole run slice:
        // an idle->busy toggle of the high work (a resume of a few ms)
        // must not start the continuous bound over.
        if (g.since && g.fed_since && now - *g.fed_since >= cfg_.min_run_slice.count()) {
            g.since.reset();
            g.fed_since.reset();
        }
        if (suspended && !g.suspended_victims) {
            if (!g.since)
                g.since = now;
            g.fed_since.reset();
        } else if (!suspended && g.suspended_victims) {
            g.fed_since = now;
        }
        g.suspended_victims = suspended;
        // The share: a confined victim runs at its share and owes the rest.
        const double rate = starving ? 1.0 - g.share : 0.0;
        if (open && g.starved.back().rate != rate)
            g.starved.back().end = now;
        if (rate > 0 && !starving_now(g))
            g.starved.push_back({now, -1, rate});
        while (!g.starved.empty() && g.starved.front().end >= 0 && g.starved.front().end <= from)
            g.starved.pop_front();
        if (Hold{g.applied, g.share}.confines()) {
            if (!g.confined_since)
                g.confined_since = now;
        } else {
            g.confined_since.reset();
        }
    }
}

std::set<std::uint32_t> Policy::group_closure(std::set<std::uint32_t> gpus) const {
    if (gpus.empty())
        return gpus;
    for (bool grew = true; grew;) {
        grew = false;
        std::set<std::string> groups;
        for (const auto& [key, q] : queues_) {
            if (!q.info.group.empty() && gpus.contains(key.gpu_id))
                groups.insert(q.info.group);
        }
        for (const auto& [key, q] : queues_) {
            if (groups.contains(q.info.group) && gpus.insert(key.gpu_id).second)
                grew = true;
        }
    }
    return gpus;
}

// The share of @gpu that the queues below @level keep while it is at
// @level: 0 (suspended) unless the level's work needs only part of it,
// configured or, for an adaptive level, held by track_demand().
double Policy::kept_share(std::uint32_t gpu, int level) const {
    double demand = cfg_.cu_demand.at(static_cast<std::size_t>(level));
    if (cfg_.cu_demand_is_auto.at(static_cast<std::size_t>(level)))
        demand = auto_demand(gpu, level);
    return demand > 0.0 && demand < 1.0 ? 1.0 - demand : 0.0;
}

double Policy::demand_share(std::uint64_t wgs, const CuGeometry& geo) const {
    if (wgs == 0 || geo.num_xcc == 0 || geo.cu_per_xcc == 0)
        return 0.0;  // not known: suspend
    const auto& a = cfg_.cu_demand_auto;
    // A dispatch spreads its work groups over every XCC alike, and the
    // mask is the same on each: CUs per XCC is what a mask can give.
    const std::uint64_t cus = (wgs + a.workgroups_per_cu - 1) / a.workgroups_per_cu;
    std::uint64_t per_xcc = (cus + geo.num_xcc - 1) / geo.num_xcc;
    // Eighths of an XCC (rounded up): a demand moving by a CU or two does
    // not move the mask, and rising demand (applied at once) moves it at
    // most eight times per hold.
    const std::uint64_t step = (geo.cu_per_xcc + 7) / 8;
    per_xcc = std::min<std::uint64_t>((per_xcc + step - 1) / step * step, geo.cu_per_xcc);
    const double share = static_cast<double>(per_xcc) / static_cast<double>(geo.cu_per_xcc);
    return std::clamp(share, a.min, a.max);
}

// Each adaptive level active on a GPU: its queues' demand there, held.
// Summed over the level's queues (they run side by side), counting those
// that are active or in a group with an active queue (a group is busy on
// every GPU it spans as soon as one rank is; its idle ranks' demand has
// decayed on its own).
void Policy::track_demand(std::int64_t now) {
    if (!cfg_.adaptive())
        return;
    std::set<std::string_view> busy_groups;
    for (const auto& [key, q] : queues_) {
        if (q.activity != Activity::kIdle && !q.info.group.empty())
            busy_groups.insert(q.info.group);
    }
    std::map<std::pair<std::uint32_t, int>, std::uint64_t> wgs;
    for (const auto& [key, q] : queues_) {
        if (!cfg_.cu_demand_is_auto.at(static_cast<std::size_t>(q.info.priority)))
            continue;
        if (q.activity == Activity::kIdle && !busy_groups.contains(q.info.group))
            continue;
        // Each at most UINT32_MAX, at most a few thousand queues: no overflow.
        wgs[{key.gpu_id, q.info.priority}] += q.demand_wgs;
    }
    for (const auto& [at, n] : wgs) {
        Gpu& g = gpus_[at.first];
        const double d = demand_share(n, g.geometry);
        HeldDemand& h = g.demand[at.second];
        // Rises at once; falls once nothing as high was seen for a hold.
        if (d >= h.share || now - h.at >= cfg_.cu_demand_auto.hold.count()) {
            h.share = d;
            h.at = now;
        }
    }
}

double Policy::auto_demand(std::uint32_t gpu, int level) const {
    auto g = gpus_.find(gpu);
    if (g == gpus_.end())
        return 0.0;
    auto d = g->second.demand.find(level);
    return d == g->second.demand.end() ? 0.0 : d->second.share;
}

std::map<std::uint32_t, Policy::Hold> Policy::wanted(std::int64_t now) const {
    std::map<std::uint32_t, int> level;
    for (const auto& [id, g] : gpus_)
        level[id] = 0;
    // A group is busy on every GPU it spans as soon as one rank is: its
    // busiest rank's priority goes to all of them.
    struct Span {
        int busy = -1;
        std::vector<std::uint32_t> gpus;
    };
    std::map<std::string_view, Span> spans;
    for (const auto& [key, q] : queues_) {
        const bool busy = q.activity != Activity::kIdle;
        if (q.info.group.empty()) {
            if (busy)
                level[key.gpu_id] = std::max(level[key.gpu_id], q.info.priority);
            continue;
        }
        auto& sp = spans[q.info.group];
        sp.gpus.push_back(key.gpu_id);
        if (busy)
            sp.busy = std::max(sp.busy, q.info.priority);
    }
    for (const auto& [name, sp] : spans) {
        for (auto gpu : sp.gpus)
            level[gpu] = std::max(level[gpu], sp.busy);
    }
    std::map<std::uint32_t, double> share;  // what the queues below each level keep
    for (const auto& [gpu, lvl] : level)
        share[gpu] = lvl > 0 ? kept_share(gpu, lvl) : 1.0;
    close_over_groups(level, share);
    // A level with nothing below it suspends nothing: no call for it.
    // Tagged queues ask for a call, and so do queues nobody tagged that
    // amdqp.ko's backend reports working; not those of unknown activity
    // (Unwatched::working). Once made, the call holds them all, and the
    // bound counts them: account.
    std::map<std::uint32_t, int> lowest;
    const auto lower = [&lowest](std::uint32_t gpu, int priority) {
        auto [it, fresh] = lowest.try_emplace(gpu, priority);
        if (!fresh)
            it->second = std::min(it->second, priority);
    };
    for (const auto& [key, q] : queues_)
        lower(key.gpu_id, q.info.priority);
    for (const auto& [id, g] : gpus_) {
        if (g.unwatched.working)
            lower(id, *g.unwatched.working);
    }
    for (auto& [gpu, lvl] : level) {
        const auto low = lowest.find(gpu);
        if (low == lowest.end() || low->second >= lvl)
            lvl = 0;
    }
    // Run slices win, over every GPU tied to them by a group, so a group
    // never runs on a subset of its GPUs.
    std::set<std::uint32_t> running;
    for (const auto& [id, g] : gpus_) {
        if (g.run_until && *g.run_until > now)
            running.insert(id);
    }
    for (auto gpu : group_closure(std::move(running)))
        level[gpu] = 0;
    std::map<std::uint32_t, Hold> hold;
    for (const auto& [gpu, lvl] : level)
        hold[gpu] = lvl > 0 ? Hold{lvl, share.at(gpu)} : Hold{};
    return hold;
}

// Whether a group's queues would go off at different levels on the GPUs
// of @rising (GPU -> level it rises to): in more than one call.
bool Policy::splits_a_group(const std::map<std::uint32_t, int>& rising) const {
    std::map<std::string_view, std::set<int>> levels;
    for (const auto& [key, q] : queues_) {
        if (q.info.group.empty())
            continue;
        const auto r = rising.find(key.gpu_id);
        if (r != rising.end() && r->second > q.info.priority)
            levels[q.info.group].insert(r->second);
    }
    return std::any_of(levels.begin(), levels.end(),
                       [](const auto& l) { return l.second.size() > 1; });
}

void Policy::close_over_groups(std::map<std::uint32_t, int>& level,
                               std::map<std::uint32_t, double>& share) const {
    struct Group {
        int priority = kPriorityMin;
        std::set<std::uint32_t> gpus;
        std::vector<std::pair<std::uint32_t, int>> members;  // gpu, priority
    };
    std::map<std::string, Group> groups;
    for (const auto& [key, q] : queues_) {
        if (q.info.group.empty())
            continue;
        auto& g = groups[q.info.group];
        g.priority = std::max(g.priority, q.info.priority);
        g.gpus.insert(key.gpu_id);
        g.members.emplace_back(key.gpu_id, q.info.priority);
    }
    if (groups.empty())
        return;
    // Whether a GPU's level holds a queue: a busy low group's own level,
    // with nothing below it, must not lend its share to the group.
    std::map<std::uint32_t, int> lowest;
    for (const auto& [key, q] : queues_) {
        auto [it, fresh] = lowest.try_emplace(key.gpu_id, q.info.priority);
        if (!fresh)
            it->second = std::min(it->second, q.info.priority);
    }
    const auto holds = [&](std::uint32_t gpu) { return lowest.at(gpu) < level[gpu]; };
    // Levels only rise and are bounded by kPriorityMax + 1, shares only
    // fall and take the values of a finite set: this ends.
    for (bool grew = true; grew;) {
        grew = false;
        for (const auto& [name, g] : groups) {
            // Held (suspended or confined) on one GPU: held on all of them,
            // at the smallest share it has anywhere (0: suspended). The
            // group runs at its slowest rank's pace, and its ranks change
            // pace together, in one call.
            std::optional<double> held;
            for (const auto& [gpu, prio] : g.members) {
                if (prio < level[gpu])
                    held = std::min(held.value_or(1.0), share[gpu]);
            }
            if (!held)
                continue;
            for (auto gpu : g.gpus) {
                const double kept = holds(gpu) ? std::min(share[gpu], *held) : *held;
                if (level[gpu] < g.priority + 1) {
                    level[gpu] = g.priority + 1;
                    grew = true;
                }
                if (share[gpu] != kept) {
                    share[gpu] = kept;
                    grew = true;
                }
            }
        }
    }
}

// The calls for the GPUs of @rising (GPU -> level of its call). One call
// per level, on the GPUs that want exactly it, is the fewest scheduler
// updates; but a group below two of those levels would go off on part of
// its GPUs first. Then the levels go lowest first, each on every rising
// GPU that wants at least it: a queue goes off in the first call above its
// priority on all its GPUs at once, for an update more on the GPUs that
// want the higher levels.
void Policy::in_calls(const std::map<std::uint32_t, int>& rising,
                      const std::function<void(std::span<const std::uint32_t>, int)>& call) const {
    std::map<int, std::vector<std::uint32_t>, std::greater<>> by_level;
    for (const auto& [gpu, lvl] : rising)
        by_level[lvl].push_back(gpu);
    if (by_level.size() > 1 && splits_a_group(rising)) {
        for (auto it = by_level.rbegin(); it != by_level.rend(); ++it) {
            std::vector<std::uint32_t> gpus;
            for (const auto& [g, lvl] : rising)
                if (lvl >= it->first)
                    gpus.push_back(g);
            call(gpus, it->first);
        }
    } else {
        for (const auto& [lvl, gpus] : by_level)
            call(gpus, lvl);
    }
}

void Policy::decide() {
    const std::int64_t now = clock_.now_ns();
    expire(now);
    track_demand(now);
    account(now);

    // Starvation bound: checked on what was applied until now.
    const double share_limit =
        (1.0 - cfg_.min_low_share) * static_cast<double>(cfg_.share_window.count());
    for (auto& [id, g] : gpus_) {
        if (!g.run_until || *g.run_until > now)
            continue;
        // While the window's share is still used up, suspending again would
        // hit the bound at once: run on, without a call.
        if (cfg_.min_low_share > 0 && starved_in_window(g, now) >= share_limit)
            g.run_until = now + cfg_.min_run_slice.count();
        else
            g.run_until.reset();
    }
    for (auto& [id, g] : gpus_) {
        if (g.run_until)
            continue;
        const bool too_long =
            g.suspended_victims && g.since && now - *g.since >= cfg_.max_continuous_suspend.count();
        const bool too_little =
            starving_now(g) && cfg_.min_low_share > 0 && starved_in_window(g, now) >= share_limit;
        const bool confined_too_long =
            g.confined_since && now - *g.confined_since >= cfg_.max_continuous_confine.count();
        if (!too_long && !too_little && !confined_too_long)
            continue;
        if (too_long || too_little)
            ++stats_.starvation_hits;
        else
            ++stats_.confine_slices;
        for (auto gpu : group_closure({id}))
            gpus_[gpu].run_until = now + cfg_.min_run_slice.count();
    }

    const auto want = wanted(now);
    std::map<std::uint32_t, int> suspending, confining;  // GPU -> the level of its call
    std::map<int, std::vector<std::uint32_t>, std::greater<>> resuspend;
    std::vector<std::uint32_t> unconfining, fall;
    for (auto& [id, g] : gpus_) {
        const Hold w = want.at(id);
        const Hold was{g.applied, g.share};
        if (w.suspends() &&
            (!was.suspends() || w.level > was.level || (w.level == was.level && g.reapply)))
            suspending[id] = w.level;
        if (w.confines() && (w != was || g.reapply))
            confining[id] = w.level;
        if (was.suspends() && (!w.suspends() || w.level < was.level)) {
            fall.push_back(id);
            if (w.suspends())
                resuspend[w.level].push_back(id);
        }
        if (was.confines() && !w.confines())
            unconfining.push_back(id);
        g.applied = w.level;
        g.share = w.share;
        g.reapply = false;
    }
    // In the kernel's own order (ioctl.rst, AMDQP_IOC_CONFINE): queues off
    // first, then confined, then lifted, then back on, so no queue runs a
    // moment on the wrong mask or unconfined between a suspension and its
    // confinement. Suspensions first: they are what a newly busy GPU waits
    // for.
    in_calls(suspending, [this](std::span<const std::uint32_t> gpus, int lvl) {
        actions_.suspend_below(gpus, lvl);
        ++stats_.suspend_calls;
    });
    in_calls(confining, [this, &want](std::span<const std::uint32_t> gpus, int lvl) {
        std::vector<Confinement> targets;
        for (auto gpu : gpus)
            targets.push_back({gpu, want.at(gpu).share});
        actions_.confine_below(targets, lvl);
        ++stats_.confine_calls;
    });
    if (!unconfining.empty()) {
        actions_.unconfine(unconfining);
        ++stats_.unconfine_calls;
    }
    if (!fall.empty()) {
        actions_.resume_all(fall);
        ++stats_.resume_calls;
    }
    // RESUME_ALL cannot release only the queues between two levels.
    for (const auto& [lvl, gpus] : resuspend) {
        actions_.suspend_below(gpus, lvl);
        ++stats_.suspend_calls;
    }

    std::set<std::int32_t> coop;
    for (const auto& [key, q] : queues_) {
        // No confinement for them: held either way, they are asked off.
        if (q.info.mechanism == Mechanism::kCoop && q.info.priority < want.at(key.gpu_id).level)
            coop.insert(key.pid);
    }
    for (auto pid : coop) {
        if (!coop_applied_.contains(pid)) {
            actions_.coop_suspend(pid);
            ++stats_.coop_suspends;
        }
    }
    for (auto pid : coop_applied_) {
        if (!coop.contains(pid)) {
            actions_.coop_resume(pid);
            ++stats_.coop_resumes;
        }
    }
    coop_applied_ = std::move(coop);

    account(now);
}

std::optional<std::int64_t> Policy::next_deadline_ns() const {
    std::optional<std::int64_t> next;
    auto consider = [&next](std::int64_t t) {
        if (!next || t < *next)
            next = t;
    };
    for (const auto& [key, q] : queues_) {
        if (q.activity == Activity::kLingering)
            consider(q.idle_since + q.est.hysteresis().count());
    }
    const std::int64_t now = clock_.now_ns();
    const double limit =
        (1.0 - cfg_.min_low_share) * static_cast<double>(cfg_.share_window.count());
    for (const auto& [id, g] : gpus_) {
        if (g.run_until) {
            consider(*g.run_until);
            continue;
        }
        if (g.confined_since)
            consider(*g.confined_since + cfg_.max_continuous_confine.count());
        if (g.suspended_victims && g.since)
            consider(*g.since + cfg_.max_continuous_suspend.count());
        if (cfg_.min_low_share > 0 && starving_now(g)) {
            // At the open stretch's rate; intervals leaving the window
            // only make this later: ticking early is harmless.
            const double left = limit - starved_in_window(g, now);
            consider(left <= 0
                         ? now
                         : now + std::max<std::int64_t>(1, static_cast<std::int64_t>(std::ceil(
                                                               left / g.starved.back().rate))));
        }
    }
    return next;
}

int Policy::suspend_level(std::uint32_t gpu) const {
    auto it = gpus_.find(gpu);
    return it == gpus_.end() || it->second.share > 0 ? 0 : it->second.applied;
}

int Policy::confine_level(std::uint32_t gpu) const {
    auto it = gpus_.find(gpu);
    return it == gpus_.end() || it->second.share == 0 ? 0 : it->second.applied;
}

double Policy::confine_share(std::uint32_t gpu) const {
    auto it = gpus_.find(gpu);
    return it == gpus_.end() || it->second.applied == 0 ? 0 : it->second.share;
}

bool Policy::active(const QueueKey& key) const {
    auto it = queues_.find(key);
    return it != queues_.end() && it->second.activity != Activity::kIdle;
}

std::optional<std::chrono::nanoseconds> Policy::hysteresis(const QueueKey& key) const {
    auto it = queues_.find(key);
    if (it == queues_.end())
        return std::nullopt;
    return it->second.est.hysteresis();
}

}  // namespace amdqp::policy
