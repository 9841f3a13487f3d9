// SPDX-License-Identifier: MIT
#include "amdqp/policy/policy.hpp"

#include <algorithm>
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

const Config& checked(const Config& cfg) {
    if (auto err = cfg.validate(); !err.empty())
        throw std::invalid_argument(joined(err));
    return cfg;
}

}  // namespace

Policy::Policy(const Config& cfg, const Clock& clock, Actions& actions)
    : cfg_(checked(cfg)), clock_(clock), actions_(actions) {}

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
    return !g.starved.empty() && g.starved.back().second < 0;
}

std::int64_t Policy::starved_in_window(const Gpu& g, std::int64_t now) const {
    const std::int64_t from = now - cfg_.share_window.count();
    std::int64_t sum = 0;
    for (const auto& [b, e] : g.starved) {
        const std::int64_t end = e < 0 ? now : e;
        sum += std::max<std::int64_t>(0, end - std::max(b, from));
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
        // A stretch ends only once the victims ran for a whole run slice:
        // an idle->busy toggle of the high work (a resume of a few ms)
        // must not start the continuous bound over.
        if (g.since && g.fed_since && now - *g.fed_since >= cfg_.min_run_slice.count()) {
            g.since.reset();
            g.fed_since.reset();
        }
        if (starving && !open) {
            if (!g.since)
                g.since = now;
            g.fed_since.reset();
            g.starved.emplace_back(now, -1);
        } else if (!starving && open) {
            g.starved.back().second = now;
            g.fed_since = now;
        }
        while (!g.starved.empty() && g.starved.front().second >= 0 &&
               g.starved.front().second <= from)
            g.starved.pop_front();
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

std::map<std::uint32_t, int> Policy::wanted_levels(std::int64_t now) const {
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
    close_over_groups(level);
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
    return level;
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

void Policy::close_over_groups(std::map<std::uint32_t, int>& level) const {
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
    // Levels only rise and are bounded by kPriorityMax + 1: this ends.
    for (bool grew = true; grew;) {
        grew = false;
        for (const auto& [name, g] : groups) {
            const bool suspended =
                std::any_of(g.members.begin(), g.members.end(),
                            [&level](const auto& m) { return m.second < level[m.first]; });
            if (!suspended)
                continue;
            for (auto gpu : g.gpus) {
                if (level[gpu] < g.priority + 1) {
                    level[gpu] = g.priority + 1;
                    grew = true;
                }
            }
        }
    }
}

void Policy::decide() {
    const std::int64_t now = clock_.now_ns();
    expire(now);
    account(now);

    // Starvation bound: checked on what was applied until now.
    const double share_limit =
        (1.0 - cfg_.min_low_share) * static_cast<double>(cfg_.share_window.count());
    for (auto& [id, g] : gpus_) {
        if (!g.run_until || *g.run_until > now)
            continue;
        // While the window's share is still used up, suspending again would
        // hit the bound at once: run on, without a call.
        if (cfg_.min_low_share > 0 && static_cast<double>(starved_in_window(g, now)) >= share_limit)
            g.run_until = now + cfg_.min_run_slice.count();
        else
            g.run_until.reset();
    }
    for (auto& [id, g] : gpus_) {
        if (!g.since || g.run_until || !starving_now(g))
            continue;
        const bool too_long = now - *g.since >= cfg_.max_continuous_suspend.count();
        const bool too_little =
            cfg_.min_low_share > 0 && static_cast<double>(starved_in_window(g, now)) >= share_limit;
        if (!too_long && !too_little)
            continue;
        ++stats_.starvation_hits;
        for (auto gpu : group_closure({id}))
            gpus_[gpu].run_until = now + cfg_.min_run_slice.count();
    }

    const auto level = wanted_levels(now);
    std::map<int, std::vector<std::uint32_t>, std::greater<>> rise, resuspend;
    std::map<std::uint32_t, int> rising;  // the GPUs of rise, each with its level
    std::vector<std::uint32_t> fall;
    for (auto& [id, g] : gpus_) {
        const int want = level.at(id);
        if (want > g.applied || (want > 0 && want == g.applied && g.reapply)) {
            rise[want].push_back(id);
            rising[id] = want;
        } else if (want < g.applied) {
            fall.push_back(id);
            if (want > 0)
                resuspend[want].push_back(id);
        }
        g.applied = want;
        g.reapply = false;
    }
    // Suspensions first: they are what a newly busy GPU waits for. One call
    // per level, on the GPUs that want exactly it, is the fewest scheduler
    // updates; but a group below two of those levels would go off on part
    // of its GPUs first. Then the levels go lowest first, each on every
    // rising GPU that wants at least it: a queue goes off in the first call
    // above its priority on all its GPUs at once, for an update more on
    // the GPUs that want the higher levels.
    if (rise.size() > 1 && splits_a_group(rising)) {
        for (auto it = rise.rbegin(); it != rise.rend(); ++it) {
            std::vector<std::uint32_t> gpus;
            for (const auto& [g, lvl] : rising)
                if (lvl >= it->first)
                    gpus.push_back(g);
            actions_.suspend_below(gpus, it->first);
            ++stats_.suspend_calls;
        }
    } else {
        for (const auto& [lvl, gpus] : rise) {
            actions_.suspend_below(gpus, lvl);
            ++stats_.suspend_calls;
        }
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
        if (q.info.mechanism == Mechanism::kCoop && q.info.priority < level.at(key.gpu_id))
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
    for (const auto& [id, g] : gpus_) {
        if (g.run_until)
            consider(*g.run_until);
        if (!g.since || g.run_until || !starving_now(g))
            continue;
        consider(*g.since + cfg_.max_continuous_suspend.count());
        if (cfg_.min_low_share > 0) {
            // Intervals leaving the window only make this later: ticking
            // early is harmless.
            const auto limit = static_cast<std::int64_t>(
                (1.0 - cfg_.min_low_share) * static_cast<double>(cfg_.share_window.count()));
            consider(now + std::max<std::int64_t>(0, limit - starved_in_window(g, now)));
        }
    }
    return next;
}

int Policy::suspend_level(std::uint32_t gpu) const {
    auto it = gpus_.find(gpu);
    return it == gpus_.end() ? 0 : it->second.applied;
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
