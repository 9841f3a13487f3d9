// SPDX-License-Identifier: MIT
#include "metrics.hpp"

#include <sstream>

namespace amdqp::daemon {

void Metrics::suspend_call(std::uint32_t, std::uint32_t affected) {
    std::lock_guard lock(mutex_);
    suspend_calls_++;
    suspended_queues_ += affected;
}

void Metrics::resume_call(std::uint32_t, std::uint32_t affected) {
    std::lock_guard lock(mutex_);
    resume_calls_++;
    resumed_queues_ += affected;
}

void Metrics::coop_request(bool suspend) {
    std::lock_guard lock(mutex_);
    (suspend ? coop_suspends_ : coop_resumes_)++;
}

void Metrics::control_loop(double seconds) {
    std::lock_guard lock(mutex_);
    for (std::size_t i = 0; i < kBuckets.size(); ++i) {
        if (seconds <= kBuckets[i])
            buckets_[i]++;
    }
    loop_count_++;
    loop_sum_ += seconds;
    if (samples_.size() < kSamples)
        samples_.push_back(seconds * 1e6);
    else
        samples_[next_sample_] = seconds * 1e6;
    next_sample_ = (next_sample_ + 1) % kSamples;
}

std::vector<double> Metrics::control_loop_samples() const {
    std::lock_guard lock(mutex_);
    return samples_;
}

void Metrics::error(const std::string& kind) {
    std::lock_guard lock(mutex_);
    errors_[kind]++;
}

void Metrics::set_policy_counters(std::uint64_t starvation_hits, std::uint64_t relapses) {
    std::lock_guard lock(mutex_);
    starvation_hits_ = starvation_hits;
    relapses_ = relapses;
}

void Metrics::set_processes(std::uint64_t tagged) {
    std::lock_guard lock(mutex_);
    processes_ = tagged;
}

void Metrics::set_hold_counters(std::uint64_t holds, std::uint64_t timeouts) {
    std::lock_guard lock(mutex_);
    holds_ = holds;
    hold_timeouts_ = timeouts;
}

void Metrics::set_queues(const std::map<int, std::uint64_t>& by_priority) {
    std::lock_guard lock(mutex_);
    queues_ = by_priority;
}

void Metrics::set_queue_suspended(
    const std::map<std::tuple<std::uint32_t, std::uint32_t, std::uint32_t>, double>& seconds) {
    std::lock_guard lock(mutex_);
    queue_suspended_ = seconds;
}

void Metrics::set_suspend_level(std::uint32_t gpu, int level) {
    std::lock_guard lock(mutex_);
    levels_[gpu] = level;
}

void Metrics::set_confinement(std::uint32_t gpu, int level, double share) {
    std::lock_guard lock(mutex_);
    confined_[gpu] = {level, share};
}

void Metrics::set_auto_demand(std::uint32_t gpu, int level, double share) {
    std::lock_guard lock(mutex_);
    demand_[{gpu, level}] = share;
}

void Metrics::forget_gpus() {
    std::lock_guard lock(mutex_);
    levels_.clear();
    confined_.clear();
    demand_.clear();
}

void Metrics::forget_gpu(std::uint32_t gpu) {
    std::lock_guard lock(mutex_);
    levels_.erase(gpu);
    confined_.erase(gpu);
    std::erase_if(demand_, [gpu](const auto& kv) { return kv.first.first == gpu; });
    std::erase_if(queue_suspended_, [gpu](const auto& kv) { return std::get<1>(kv.first) == gpu; });
}

namespace {

void head(std::ostringstream& os, const char* name, const char* type, const char* help) {
    os << "# HELP " << name << ' ' << help << "\n# TYPE " << name << ' ' << type << '\n';
}

}  // namespace

std::string Metrics::render() const {
    std::lock_guard lock(mutex_);
    std::ostringstream os;
    os.precision(9);
    head(os, "amdqpd_suspend_calls_total", "counter",
         "SUSPEND_BELOW calls (one per decision, covering every GPU that rose)");
    os << "amdqpd_suspend_calls_total " << suspend_calls_ << '\n';
    head(os, "amdqpd_resume_calls_total", "counter", "RESUME_ALL calls");
    os << "amdqpd_resume_calls_total " << resume_calls_ << '\n';
    head(os, "amdqpd_queues_suspended_total", "counter", "Queues taken off by suspend calls");
    os << "amdqpd_queues_suspended_total " << suspended_queues_ << '\n';
    head(os, "amdqpd_coop_requests_total", "counter", "Cooperative requests sent");
    os << "amdqpd_coop_requests_total{kind=\"suspend\"} " << coop_suspends_ << '\n';
    os << "amdqpd_coop_requests_total{kind=\"resume\"} " << coop_resumes_ << '\n';
    head(os, "amdqpd_starvation_guard_hits_total", "counter",
         "Run slices forced by the starvation bound");
    os << "amdqpd_starvation_guard_hits_total " << starvation_hits_ << '\n';
    head(os, "amdqpd_relapses_total", "counter",
         "Doorbells right after a hysteresis ran out (resumed inside a burst)");
    os << "amdqpd_relapses_total " << relapses_ << '\n';
    head(os, "amdqpd_doorbell_holds_total", "counter",
         "Doorbells held by tagged processes until the suspension (before-doorbell)");
    os << "amdqpd_doorbell_holds_total " << holds_ << '\n';
    head(os, "amdqpd_doorbell_hold_timeouts_total", "counter",
         "Doorbell holds that ended at their deadline");
    os << "amdqpd_doorbell_hold_timeouts_total " << hold_timeouts_ << '\n';
    head(os, "amdqpd_control_loop_seconds", "histogram",
         "First doorbell of an idle queue to lower priorities suspended");
    for (std::size_t i = 0; i < kBuckets.size(); ++i)
        os << "amdqpd_control_loop_seconds_bucket{le=\"" << kBuckets[i] << "\"} " << buckets_[i]
           << '\n';
    os << "amdqpd_control_loop_seconds_bucket{le=\"+Inf\"} " << loop_count_ << '\n';
    os << "amdqpd_control_loop_seconds_sum " << loop_sum_ << '\n';
    os << "amdqpd_control_loop_seconds_count " << loop_count_ << '\n';
    head(os, "amdqpd_errors_total", "counter", "Errors by kind");
    if (errors_.empty())
        os << "amdqpd_errors_total{kind=\"none\"} 0\n";
    for (const auto& [kind, n] : errors_)
        os << "amdqpd_errors_total{kind=\"" << kind << "\"} " << n << '\n';
    head(os, "amdqpd_tagged_processes", "gauge", "Processes with a live activity page");
    os << "amdqpd_tagged_processes " << processes_ << '\n';
    head(os, "amdqpd_queues", "gauge", "Tagged queues by priority");
    for (const auto& [prio, n] : queues_)
        os << "amdqpd_queues{priority=\"" << prio << "\"} " << n << '\n';
    head(os, "amdqpd_suspend_level", "gauge",
         "Per GPU: queues below this priority are held off (0: none)");
    for (const auto& [gpu, level] : levels_)
        os << "amdqpd_suspend_level{gpu=\"" << gpu << "\"} " << level << '\n';
    head(os, "amdqpd_confine_level", "gauge",
         "Per GPU: queues below this priority are confined to part of its CUs (0: none)");
    for (const auto& [gpu, c] : confined_)
        os << "amdqpd_confine_level{gpu=\"" << gpu << "\"} " << c.first << '\n';
    head(os, "amdqpd_confine_share", "gauge",
         "Per GPU: share of its CUs the confined queues keep (0: none confined)");
    for (const auto& [gpu, c] : confined_)
        os << "amdqpd_confine_share{gpu=\"" << gpu << "\"} " << c.second << '\n';
    head(os, "amdqpd_auto_demand", "gauge",
         "Per GPU and priority level set to cu_demand \"auto\": the demand the policy holds, "
         "as a share of the GPU (0: none known)");
    for (const auto& [key, share] : demand_)
        os << "amdqpd_auto_demand{gpu=\"" << key.first << "\",level=\"" << key.second << "\"} "
           << share << '\n';
    head(os, "amdqpd_queue_suspended_seconds_total", "counter",
         "Time each tagged queue spent suspended (amdqp.ko's count)");
    for (const auto& [key, s] : queue_suspended_)
        os << "amdqpd_queue_suspended_seconds_total{pid=\"" << std::get<0>(key) << "\",gpu=\""
           << std::get<1>(key) << "\",queue=\"" << std::get<2>(key) << "\"} " << s << '\n';
    return os.str();
}

}  // namespace amdqp::daemon
