// SPDX-License-Identifier: MIT
#include "simulator.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>

namespace amdqp::sim {
namespace {
constexpr Ns kNever = std::numeric_limits<Ns>::max();
constexpr double kDoneNs = 0.5;  // remaining work below this is rounding
}  // namespace

class Simulator::SimClock : public policy::Clock {
  public:
    explicit SimClock(const Ns& now) : now_(now) {}
    std::int64_t now_ns() const override { return now_; }

  private:
    const Ns& now_;
};

// The policy's Actions on the simulated devices: SUSPEND_BELOW /
// RESUME_ALL and CONFINE BELOW / RELEASE are one ioctl covering every GPU
// (one scheduler update per device, devices in parallel) or, with
// split_calls, one per GPU in turn.
class Simulator::Adapter : public policy::Actions {
  public:
    explicit Adapter(Simulator& sim) : sim_(sim) {}
    void suspend_below(std::span<const std::uint32_t> gpus, int priority) override {
        ++sim_.suspend_calls_;
        act(gpus, true, priority);
    }
    void resume_all(std::span<const std::uint32_t> gpus) override {
        ++sim_.resume_calls_;
        act(gpus, false, 0);
    }
    bool can_confine() const override { return true; }
    void confine_below(std::span<const policy::Confinement> targets, int priority) override {
        ++sim_.confine_calls_;
        each(targets.size(), [&](std::size_t i, Ns from) {
            return sim_.apply_confine(targets[i].gpu, targets[i].share, priority, from);
        });
    }
    void unconfine(std::span<const std::uint32_t> gpus) override {
        ++sim_.unconfine_calls_;
        each(gpus.size(),
             [&](std::size_t i, Ns from) { return sim_.apply_confine(gpus[i], 0.0, 0, from); });
    }
    // Cooperative queues do not exist in the simulator.
    void coop_suspend(std::int32_t) override {}
    void coop_resume(std::int32_t) override {}

  private:
    void act(std::span<const std::uint32_t> gpus, bool suspend, int priority) {
        each(gpus.size(),
             [&](std::size_t i, Ns from) { return sim_.apply(gpus[i], suspend, priority, from); });
    }
    // Applies one call's @n per-GPU updates: all from the call's start, or
    // with split_calls each after the one before; the daemon is busy until
    // the last is done.
    template <typename F>
    void each(std::size_t n, F&& one_gpu) {
        const Ns start = std::max(sim_.now_, sim_.busy_until_);
        Ns done = start;
        for (std::size_t i = 0; i < n; ++i) {
            const Ns from = sim_.sc_.daemon.split_calls ? done : start;
            done = std::max(done, one_gpu(i, from));
        }
        sim_.busy_until_ = std::max(sim_.busy_until_, done);
    }
    Simulator& sim_;
};

Simulator::Simulator(Scenario sc) : sc_(std::move(sc)) {
    if (sc_.workloads.empty())
        throw std::invalid_argument("scenario has no workload");
    for (auto& [id, p] : sc_.devices) {
        if (p.compute_fraction <= 0 || p.compute_fraction > 1)
            throw std::invalid_argument("compute_fraction must be in (0, 1]");
        devices_[id].p = p;
    }
    int min_prio = policy::kPriorityMax;
    for (std::size_t w = 0; w < sc_.workloads.size(); ++w) {
        auto& spec = sc_.workloads[w];
        if (spec.ranks.empty())
            throw std::invalid_argument(spec.name + ": no timeline");
        if (spec.gpus.empty())
            throw std::invalid_argument(spec.name + ": no GPU");
        if (spec.ranks.size() != 1 && spec.ranks.size() != spec.gpus.size())
            throw std::invalid_argument(spec.name + ": one timeline, or one per GPU");
        if (spec.occupancy <= 0 || spec.occupancy > 1 || spec.cu_fraction <= 0 ||
            spec.cu_fraction > 1)
            throw std::invalid_argument(spec.name + ": occupancy and cu_fraction in (0, 1]");
        if (spec.group.empty() && spec.gpus.size() > 1)
            spec.group = spec.name;
        Job j;
        j.spec = spec;
        for (std::size_t r = 0; r < spec.gpus.size(); ++r) {
            const auto gpu = spec.gpus[r];
            if (!devices_.contains(gpu))
                throw std::invalid_argument(spec.name + ": GPU " + std::to_string(gpu) +
                                            " is not a device of the scenario");
            Stream s;
            s.job = static_cast<int>(w);
            s.rank = static_cast<int>(r);
            s.gpu = gpu;
            s.priority = spec.priority;
            s.key = {1000 + static_cast<std::int32_t>(w), gpu, static_cast<std::uint32_t>(r + 1)};
            s.occupancy = spec.occupancy;
            s.cu_fraction = spec.cu_fraction;
            j.streams.push_back(static_cast<int>(streams_.size()));
            devices_[gpu].streams.push_back(static_cast<int>(streams_.size()));
            streams_.push_back(s);
        }
        min_prio = std::min(min_prio, spec.priority);
        jobs_.push_back(std::move(j));
    }
    min_priority_ = min_prio;
    if (sc_.daemon.enabled) {
        clock_ = std::make_unique<SimClock>(now_);
        adapter_ = std::make_unique<Adapter>(*this);
        policy_ = std::make_unique<policy::Policy>(sc_.daemon.policy, *clock_, *adapter_);
        for (const auto& s : streams_) {
            policy::QueueInfo qi;
            qi.key = s.key;
            qi.priority = s.priority;
            qi.group = jobs_[static_cast<std::size_t>(s.job)].spec.group;
            policy_->add_queue(qi);
        }
    }
}

Simulator::~Simulator() = default;

Ns Simulator::arrival_of(const Job& j, std::uint64_t n) const {
    if (!j.spec.arrivals.empty())
        return n < j.spec.arrivals.size() ? j.spec.arrivals[n] : kNever;
    const double period_ns = 1e9 / j.spec.rate_per_s;
    return j.spec.first_arrival + static_cast<Ns>(std::llround(static_cast<double>(n) * period_ns));
}

Ns Simulator::due(const Stream& s) const {
    return std::max(s.req_start + s.req->kernels[s.next_k].start + s.shift, s.last_submit);
}

void Simulator::start_request(Job& j) {
    j.in_flight = true;
    j.ranks_done = 0;
    j.first_token_at = -1;
    j.nccl_arrivals.clear();
    j.rings.clear();
    const std::uint64_t n = j.next_req++;
    for (std::size_t r = 0; r < j.streams.size(); ++r) {
        auto& s = streams_[static_cast<std::size_t>(j.streams[r])];
        const auto& tl = j.spec.ranks[j.spec.ranks.size() == 1 ? 0 : r];
        s.req = &tl.requests[n % tl.requests.size()];
        s.req_no = n;
        s.next_k = 0;
        s.req_start = now_;
        s.last_submit = std::max(s.last_submit, now_);
        s.shift = 0;
        s.next_sync = 0;
        s.wait_sync = false;
        s.nccl_count = 0;
    }
}

void Simulator::submit(Stream& s) {
    const auto& k = s.req->kernels[s.next_k];
    const Ns t = due(s);
    const bool was_idle = s.read == s.write;
    ++s.write;
    ++s.doorbells;
    s.last_doorbell = t;
    s.last_submit = t;
    Inflight in;
    in.remaining = static_cast<double>(k.dur);
    in.cls = k.cls;
    if (k.cls == KernelClass::kNccl)
        in.nccl_seq = s.nccl_count++;
    in.index = s.next_k;
    in.first_token = s.next_k == s.req->first_token;
    if (s.next_sync < s.req->syncs.size() && s.req->syncs[s.next_sync] == s.next_k) {
        ++s.next_sync;
        if (s.next_k + 1 < s.req->kernels.size()) {
            in.sync = true;
            s.wait_sync = true;
        }
    }
    if (tracing_) {
        in.log = kernel_log_.size();
        kernel_log_.push_back({s.job, s.rank, s.req_no, s.next_k, t, -1, -1});
    }
    s.hwq.push_back(in);
    ++s.next_k;
    if (!policy_ || !was_idle)
        return;
    // The tagging layer announces a doorbell that found its queue idle
    // and, before-doorbell, holds it if the process outranks some queue.
    s.announced = true;
    next_step_ = std::min(next_step_, std::max(t + sc_.daemon.wake_latency, busy_until_));
    if (sc_.daemon.policy.order == policy::SuspendOrder::kBeforeDoorbell &&
        s.priority > min_priority_) {
        s.held = true;
        s.release_at = t + sc_.daemon.hold_timeout;
    }
}

bool Simulator::process_submissions() {
    bool changed = false;
    for (auto& s : streams_) {
        while (s.req && !s.held && !s.wait_sync && s.next_k < s.req->kernels.size() &&
               due(s) <= now_) {
            submit(s);
            changed = true;
        }
        if (s.held && s.release_at <= now_) {
            s.held = false;
            changed = true;
        }
    }
    return changed;
}

bool Simulator::process_completions() {
    bool changed = false;
    for (auto& s : streams_) {
        if (s.hwq.empty() || s.held)
            continue;
        auto& h = s.hwq.front();
        if (!h.started || h.remaining > kDoneNs)
            continue;
        if (h.cls == KernelClass::kNccl) {
            // A collective ends only after every rank reached it.
            auto& j = jobs_[static_cast<std::size_t>(s.job)];
            if (j.nccl_arrivals[h.nccl_seq] < static_cast<int>(j.streams.size()) ||
                !collective_done(s))
                continue;
        }
        if (h.log != SIZE_MAX)
            kernel_log_[h.log].end = now_;
        auto& job = jobs_[static_cast<std::size_t>(s.job)];
        if (h.first_token && s.rank == 0)
            job.first_token_at = now_;
        if (h.sync && s.req) {
            // The host saw the kernel finish; it submits the next one after
            // the gap the recording had between them, not before its
            // recorded offset.
            const auto& ks = s.req->kernels;
            const auto& a = ks[h.index];
            const auto& b = ks[h.index + 1];
            const Ns gap = std::max<Ns>(0, b.start - (a.start + a.dur));
            s.shift = std::max(s.shift, now_ + gap - (s.req_start + b.start));
            s.wait_sync = false;
        }
        s.hwq.pop_front();
        ++s.read;
        s.rate = 0;
        changed = true;
        if (s.hwq.empty() && s.req && s.next_k == s.req->kernels.size()) {
            s.req = nullptr;
            ++job.ranks_done;
        }
    }
    return changed;
}

bool Simulator::process_jobs() {
    bool changed = false;
    for (auto& j : jobs_) {
        if (j.in_flight && j.ranks_done == static_cast<int>(j.streams.size())) {
            j.in_flight = false;
            changed = true;
            if (j.spec.open_loop()) {
                if (j.arrival >= sc_.warmup && j.arrival < measure_end()) {
                    const double host = static_cast<double>(j.spec.host_overhead);
                    j.latencies_ms.push_back((static_cast<double>(now_ - j.arrival) + host) / 1e6);
                    if (j.spec.tokens_after_first > 0 && j.first_token_at >= 0) {
                        j.ttft_ms.push_back(
                            (static_cast<double>(j.first_token_at - j.arrival) + host) / 1e6);
                        j.tpot_ms.push_back(static_cast<double>(now_ - j.first_token_at) / 1e6 /
                                            j.spec.tokens_after_first);
                    }
                }
            } else if (now_ >= sc_.warmup && now_ <= measure_end()) {
                j.completions.push_back(now_);
            }
        }
        if (j.in_flight || j.gave_up)
            continue;
        if (j.spec.open_loop()) {
            const Ns a = arrival_of(j, j.next_req);
            if (a <= now_ && j.spec.give_up > 0 && now_ > j.spec.give_up) {
                // Too far behind: what is left of the schedule is dropped.
                j.gave_up = true;
                for (std::uint64_t n = j.next_req;; ++n) {
                    const Ns an = arrival_of(j, n);
                    if (an == kNever || an >= measure_end())
                        break;
                    if (an >= sc_.warmup)
                        ++j.dropped;
                }
                changed = true;
            } else if (a <= now_ && j.spec.max_queue_delay > 0 &&
                       now_ - a > j.spec.max_queue_delay) {
                // Waited too long: dropped when its turn comes.
                if (a >= sc_.warmup && a < measure_end())
                    ++j.dropped;
                ++j.next_req;
                changed = true;
            } else if (a <= now_) {
                j.arrival = a;
                start_request(j);
                changed = true;
            }
        } else if (now_ >= j.spec.first_arrival) {
            start_request(j);
            changed = true;
        }
    }
    return changed;
}

double Simulator::resident(const Stream& s, const Device& d) const {
    if (s.hwq.empty() || !s.hwq.front().started)
        return 0.0;
    const double occ =
        s.hwq.front().cls == KernelClass::kNccl ? d.p.hws.nccl_occupancy : s.occupancy;
    return std::min(device_share(occ, d.p.compute_fraction), s.confined);
}

bool Simulator::timeslice_owner(Device& d, const std::vector<int>& cands) {
    // Contexts (jobs) with work on this device.
    std::vector<int> ctx;
    for (int si : cands) {
        const int j = streams_[static_cast<std::size_t>(si)].job;
        if (std::find(ctx.begin(), ctx.end(), j) == ctx.end())
            ctx.push_back(j);
    }
    std::sort(ctx.begin(), ctx.end());
    const auto& ts = d.p.ts;
    const bool owner_busy = std::find(ctx.begin(), ctx.end(), d.owner) != ctx.end();
    if (owner_busy)
        d.dry_since = -1;
    else if (d.dry_since < 0)
        d.dry_since = now_;
    auto other = [&]() {
        for (int c : ctx) {
            if (c > d.owner)
                return c;
        }
        for (int c : ctx) {
            if (c != d.owner)
                return c;
        }
        return -1;
    };
    d.others_waiting = false;
    if (now_ < d.switch_until) {
        d.others_waiting = true;
        return false;
    }
    const int next = other();
    auto switch_to = [&](int c) {
        const Ns cost = d.owner == c ? 0 : ts.switch_cost;
        d.owner = c;
        d.dry_since = -1;
        d.switch_until = now_ + cost;
        d.slice_end = d.switch_until + ts.slice;
    };
    if (owner_busy) {
        if (now_ >= d.slice_end) {
            if (next >= 0)
                switch_to(next);
            else
                d.slice_end = now_ + ts.slice;
        }
    } else if (next >= 0) {
        const bool idle_seen = ts.yield_when_dry && now_ >= d.dry_since + ts.dry_hold;
        if (d.owner < 0 || idle_seen || now_ >= d.slice_end)
            switch_to(next);
    }
    d.others_waiting = next >= 0;
    return now_ >= d.switch_until;
}

bool Simulator::recompute(Device& d) {
    bool arrived = false;
    for (int si : d.streams) {
        streams_[static_cast<std::size_t>(si)].rate = 0;
        streams_[static_cast<std::size_t>(si)].on_gpu = false;
    }
    if (now_ < d.stall_until)
        return false;
    std::vector<int> cands;
    for (int si : d.streams) {
        const auto& s = streams_[static_cast<std::size_t>(si)];
        if (s.hwq.empty() || s.held)
            continue;
        if (s.suspended) {
            // MES: the waves of a queue being removed hold CUs until saved.
            if (d.p.kind != DeviceKind::kHws && now_ < s.removing_until && s.hwq.front().started)
                cands.push_back(si);
            continue;
        }
        if (now_ < s.avail_at)
            continue;
        cands.push_back(si);
    }
    if (d.p.kind == DeviceKind::kTimeslice) {
        if (!timeslice_owner(d, cands))
            return false;
        std::erase_if(
            cands, [&](int si) { return streams_[static_cast<std::size_t>(si)].job != d.owner; });
    }
    std::vector<Contender> c;
    for (int si : cands) {
        auto& s = streams_[static_cast<std::size_t>(si)];
        auto& h = s.hwq.front();
        Contender x;
        // A confined queue runs on its share alone, like a CU-masked one.
        x.cu_fraction = std::min(s.cu_fraction, s.confined);
        x.occupancy = s.occupancy;
        x.progressing = !s.suspended;
        if (h.cls == KernelClass::kNccl) {
            x.occupancy = d.p.hws.nccl_occupancy;
            auto& j = jobs_[static_cast<std::size_t>(s.job)];
            if (!h.started) {
                ++j.nccl_arrivals[h.nccl_seq];
                arrived = true;
            }
            x.progressing = x.progressing &&
                            j.nccl_arrivals[h.nccl_seq] == static_cast<int>(j.streams.size()) &&
                            collective_done(s);
        }
        s.on_gpu = !s.suspended;
        if (!h.started) {
            h.started = true;
            if (h.log != SIZE_MAX)
                kernel_log_[h.log].start = now_;
        }
        c.push_back(x);
    }
    const auto r = shared_rates(c, d.p.compute_fraction, d.p.hws.corun_rate);
    for (std::size_t i = 0; i < cands.size(); ++i)
        streams_[static_cast<std::size_t>(cands[i])].rate = r[i];
    return arrived;
}

bool Simulator::recompute() {
    bool arrived = false;
    for (auto& [id, d] : devices_)
        arrived = recompute(d) || arrived;
    // Ring steps depend on which ranks every device runs now: after all of
    // them, and a second pass (the caller's) gives finished rings their rate.
    return ring_steps() || arrived;
}

bool Simulator::collective_done(const Stream& s) const {
    const auto& j = jobs_[static_cast<std::size_t>(s.job)];
    const int n = static_cast<int>(j.streams.size());
    if (n == 1 || j.spec.collectives != Collectives::kRing)
        return true;
    const auto it = j.rings.find(s.hwq.front().nccl_seq);
    return it != j.rings.end() && it->second.done[static_cast<std::size_t>(s.rank)] >= 2 * (n - 1);
}

// Every rank on its GPU with a ring collective at its head takes the steps
// it can: it sends step 1 on arrival, finishes step k once the rank before
// it has sent step k, and then sends step k + 1; to a fixpoint, so that
// ranks resident together finish at once.
bool Simulator::ring_steps() {
    bool any = false;
    for (bool changed = true; changed; any = any || changed) {
        changed = false;
        for (const auto& s : streams_) {
            if (!s.on_gpu || s.hwq.empty() || s.hwq.front().cls != KernelClass::kNccl ||
                !s.hwq.front().started)
                continue;
            auto& j = jobs_[static_cast<std::size_t>(s.job)];
            const int n = static_cast<int>(j.streams.size());
            if (n == 1 || j.spec.collectives != Collectives::kRing)
                continue;
            const int steps = 2 * (n - 1);
            auto& ring = j.rings[s.hwq.front().nccl_seq];
            ring.done.resize(static_cast<std::size_t>(n), 0);
            ring.sent.resize(static_cast<std::size_t>(n), 0);
            const auto r = static_cast<std::size_t>(s.rank);
            const auto prev = static_cast<std::size_t>((s.rank + n - 1) % n);
            if (ring.sent[r] == 0) {
                ring.sent[r] = 1;
                changed = true;
            }
            while (ring.done[r] < steps && ring.sent[prev] > ring.done[r]) {
                ++ring.done[r];
                ring.sent[r] = std::min(ring.done[r] + 1, steps);
                changed = true;
            }
        }
    }
    return any;
}

Ns Simulator::apply(std::uint32_t gpu, bool suspend, int priority, Ns start) {
    auto it = devices_.find(gpu);
    if (it == devices_.end())
        return start;
    auto& d = it->second;
    std::vector<int> changed;
    for (int si : d.streams) {
        const auto& s = streams_[static_cast<std::size_t>(si)];
        if (suspend ? (!s.suspended && s.priority < priority) : s.suspended)
            changed.push_back(si);
    }
    if (changed.empty())
        return start;
    Ns done = start;
    if (d.p.kind == DeviceKind::kHws) {
        double before = 0, after = 0;
        for (int si : d.streams) {
            auto& s = streams_[static_cast<std::size_t>(si)];
            const double res = resident(s, d);
            if (!s.suspended)
                before += res;
            const bool now_suspended =
                std::find(changed.begin(), changed.end(), si) != changed.end() ? suspend
                                                                               : s.suspended;
            if (now_suspended && !s.suspended)
                s.saved_resident = res;
            if (!now_suspended)
                after += s.suspended ? s.saved_resident : res;
            s.suspended = now_suspended;
        }
        done = runlist_update(d, start, before, after);
    } else {
        // MES (and the timeslice model, for what-if runs): per queue.
        Ns cursor = std::max(start, d.mes_busy_until);
        for (int si : changed) {
            auto& s = streams_[static_cast<std::size_t>(si)];
            if (suspend) {
                s.saved_resident = resident(s, d);
                cursor += mes_remove_cost(d.p.hws, d.p.compute_fraction, s.saved_resident);
                s.suspended = true;
                s.removing_until = cursor;
            } else {
                cursor += mes_add_cost(d.p.hws, d.p.compute_fraction, s.saved_resident);
                s.suspended = false;
                s.avail_at = cursor;
            }
            ++d.updates;
        }
        d.mes_busy_until = cursor;
        done = cursor;
    }
    update_log_.push_back(
        {gpu, suspend ? UpdateRecord::Op::kSuspend : UpdateRecord::Op::kResume, start, done});
    return done;
}

// One HWS runlist update, from @start or when the device's last one ends:
// unmap, save the waves resident @before, map, restore those resident
// @after (shares of the device). The device runs nothing meanwhile.
Ns Simulator::runlist_update(Device& d, Ns start, double before, double after) {
    const auto cost = hws_update_cost(d.p.hws, d.p.compute_fraction, before, after);
    d.stall_until = std::max(start, d.stall_until) + cost.total();
    d.stall_ns += cost.total();
    ++d.updates;
    return d.stall_until;
}

// CONFINE BELOW (@share > 0: queues below @priority keep @share of the
// device) or RELEASE (@share 0) on one device. HWS: one runlist update, the
// waves resident before saved and those of the new runlist restored (a
// confined queue's beyond its share are not: they resume on its CUs). MES:
// each changed queue removed and added back with its new mask.
Ns Simulator::apply_confine(std::uint32_t gpu, double share, int priority, Ns start) {
    auto it = devices_.find(gpu);
    if (it == devices_.end())
        return start;
    auto& d = it->second;
    auto target = [&](const Stream& s) { return share > 0 && s.priority < priority ? share : 1.0; };
    std::vector<int> changed;
    for (int si : d.streams) {
        const auto& s = streams_[static_cast<std::size_t>(si)];
        if (s.confined != target(s))
            changed.push_back(si);
    }
    if (changed.empty())
        return start;
    Ns done = start;
    if (d.p.kind == DeviceKind::kHws) {
        // A suspended queue's mask changes with the runlist too, but it
        // has no waves on the device before or after.
        double before = 0, after = 0;
        for (int si : d.streams) {
            auto& s = streams_[static_cast<std::size_t>(si)];
            const bool on = !s.suspended;
            before += on ? resident(s, d) : 0.0;
            s.confined = target(s);
            after += on ? resident(s, d) : 0.0;
        }
        done = runlist_update(d, start, before, after);
    } else {
        Ns cursor = std::max(start, d.mes_busy_until);
        for (int si : changed) {
            auto& s = streams_[static_cast<std::size_t>(si)];
            const double res = resident(s, d);
            s.confined = target(s);
            if (!s.suspended) {
                cursor += mes_remove_cost(d.p.hws, d.p.compute_fraction, res);
                cursor += mes_add_cost(d.p.hws, d.p.compute_fraction, resident(s, d));
                s.avail_at = cursor;
            }
            ++d.updates;
        }
        d.mes_busy_until = cursor;
        done = cursor;
    }
    update_log_.push_back(
        {gpu, share > 0 ? UpdateRecord::Op::kConfine : UpdateRecord::Op::kUnconfine, start, done});
    return done;
}

void Simulator::daemon_step() {
    std::vector<policy::QueueSample> samples;
    std::vector<int> to_ack;
    for (std::size_t i = 0; i < streams_.size(); ++i) {
        auto& s = streams_[i];
        policy::QueueSample q;
        q.key = s.key;
        q.write_index = s.write;
        q.doorbells = s.doorbells;
        q.last_doorbell_ns = s.last_doorbell;
        q.read_index_known = true;
        q.read_index = s.read;
        samples.push_back(q);
        if (s.announced)
            to_ack.push_back(static_cast<int>(i));
        s.announced = false;
    }
    policy_->update(samples);
    policy_->tick();
    // Acks last: a held doorbell goes out after the suspension returned.
    const Ns ack = std::max(now_, busy_until_);
    for (int i : to_ack) {
        auto& s = streams_[static_cast<std::size_t>(i)];
        if (s.held)
            s.release_at = std::min(s.release_at, ack);
    }
    bool holding = false;
    for (const auto& [id, d] : devices_)
        holding = holding || policy_->suspend_level(id) > 0 || policy_->confine_level(id) > 0;
    for (const auto& s : streams_)
        holding = holding || (s.priority > min_priority_ && policy_->active(s.key));
    Ns next = now_ + (holding ? sc_.daemon.poll_interval : sc_.daemon.idle_poll);
    if (auto dl = policy_->next_deadline_ns())
        next = std::min(next, std::max<Ns>(*dl, now_ + 1));
    next_step_ = std::max({next, busy_until_, now_ + 1});
}

Ns Simulator::next_event() const {
    Ns t = sc_.duration;
    for (const auto& s : streams_) {
        if (s.held) {
            t = std::min(t, s.release_at);
            continue;
        }
        if (s.req && !s.wait_sync && s.next_k < s.req->kernels.size())
            t = std::min(t, due(s));
        if (!s.hwq.empty() && s.rate > 0) {
            const double dt = std::ceil(std::max(s.hwq.front().remaining, 0.0) / s.rate);
            t = std::min(t, now_ + std::max<Ns>(1, static_cast<Ns>(dt)));
        }
        if (s.removing_until > now_)
            t = std::min(t, s.removing_until);
        if (s.avail_at > now_)
            t = std::min(t, s.avail_at);
    }
    for (const auto& [id, d] : devices_) {
        if (d.stall_until > now_)
            t = std::min(t, d.stall_until);
        if (d.p.kind == DeviceKind::kTimeslice) {
            if (d.switch_until > now_)
                t = std::min(t, d.switch_until);
            if (d.others_waiting && d.slice_end > now_)
                t = std::min(t, d.slice_end);
            if (d.others_waiting && d.dry_since >= 0 && d.dry_since + d.p.ts.dry_hold > now_)
                t = std::min(t, d.dry_since + d.p.ts.dry_hold);
        }
    }
    for (const auto& j : jobs_) {
        if (j.gave_up)
            continue;
        if (!j.in_flight && j.spec.open_loop())
            t = std::min(t, std::max(arrival_of(j, j.next_req), now_));
        else if (!j.in_flight)
            t = std::min(t, std::max(j.spec.first_arrival, now_));
    }
    if (policy_)
        t = std::min(t, std::max(next_step_, now_));
    return t;
}

void Simulator::advance(Ns t) {
    const double dt = static_cast<double>(t - now_);
    if (dt <= 0)
        return;
    for (auto& s : streams_) {
        if (s.rate > 0 && !s.hwq.empty())
            s.hwq.front().remaining -= s.rate * dt;
    }
    now_ = t;
}

RunResult Simulator::run() {
    now_ = 0;
    next_step_ = policy_ ? 0 : kNever;
    while (true) {
        // Everything due now, until nothing changes.
        for (int guard = 0; guard < 1000; ++guard) {
            bool changed = process_completions();
            changed = process_jobs() || changed;
            changed = process_submissions() || changed;
            if (policy_ && next_step_ <= now_) {
                daemon_step();
                changed = true;
            }
            if (recompute())
                recompute();
            changed = process_completions() || changed;
            if (!changed)
                break;
        }
        if (now_ >= sc_.duration || schedules_done())
            break;
        // Every event due now was handled: time moves on.
        advance(std::min(std::max(next_event(), now_ + 1), sc_.duration));
    }
    return collect();
}

bool Simulator::schedules_done() const {
    // Past the measured window, with every arrival schedule served or
    // given up, nothing measured is left to happen.
    if (now_ < measure_end())
        return false;
    bool any = false;
    for (const auto& j : jobs_) {
        if (j.spec.arrivals.empty())
            continue;
        any = true;
        if (j.in_flight || (!j.gave_up && arrival_of(j, j.next_req) != kNever))
            return false;
    }
    return any;
}

RunResult Simulator::collect() const {
    RunResult r;
    for (const auto& j : jobs_) {
        WorkloadResult w;
        w.name = j.spec.name;
        w.priority = j.spec.priority;
        w.open_loop = j.spec.open_loop();
        w.latencies_ms = j.latencies_ms;
        w.ttft_ms = j.ttft_ms;
        w.tpot_ms = j.tpot_ms;
        // A request still unfinished at the end waited at least this long.
        if (w.open_loop && j.in_flight && j.arrival >= sc_.warmup && j.arrival < measure_end())
            w.latencies_ms.push_back(
                static_cast<double>(sc_.duration - j.arrival + j.spec.host_overhead) / 1e6);
        w.latency = latency_stats(w.latencies_ms);
        w.completed = w.open_loop ? j.latencies_ms.size() : j.completions.size();
        w.dropped = j.dropped;
        if (!w.open_loop) {
            const auto& c = j.completions;
            if (c.size() >= 2)
                w.it_per_s = static_cast<double>(c.size() - 1) * 1e9 /
                             static_cast<double>(c.back() - c.front());
            else
                w.it_per_s = static_cast<double>(c.size()) * 1e9 /
                             static_cast<double>(measure_end() - sc_.warmup);
        }
        r.workloads.push_back(std::move(w));
    }
    r.suspend_calls = suspend_calls_;
    r.resume_calls = resume_calls_;
    r.confine_calls = confine_calls_;
    r.unconfine_calls = unconfine_calls_;
    for (const auto& [id, d] : devices_) {
        r.device_updates += d.updates;
        r.stall_ns += d.stall_ns;
    }
    if (policy_) {
        r.relapses = policy_->stats().relapses;
        r.starvation_hits = policy_->stats().starvation_hits;
    }
    return r;
}

RunResult simulate(const Scenario& sc) {
    Simulator sim(sc);
    return sim.run();
}

}  // namespace amdqp::sim
