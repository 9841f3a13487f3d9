// SPDX-License-Identifier: MIT
// What the policy is fed and how it acts: plain values the daemon (or an
// in-process controller, a test, a trace-driven simulator) fills from
// amdqp.ko's LIST_QUEUES and the activity pages (amdqp/activity.h), and the
// two small interfaces it is given. The policy itself does no I/O.
#ifndef AMDQP_POLICY_TYPES_HPP
#define AMDQP_POLICY_TYPES_HPP

#include <compare>
#include <cstdint>
#include <span>
#include <string>

namespace amdqp::policy {

// KFD priorities: 0 lowest, 15 highest.
inline constexpr int kPriorityMin = 0;
inline constexpr int kPriorityMax = 15;

// Who can take the queue off the hardware (AMDQP_ACT_MECH_AMDQP / _COOP).
enum class Mechanism : std::uint8_t {
    kAmdqp,  // amdqp.ko knows it: SUSPEND_BELOW / RESUME_ALL reach it
    kCoop,   // only the process itself can, on a cooperative request
};

struct QueueKey {
    std::int32_t pid = 0;
    std::uint32_t gpu_id = 0;
    std::uint32_t queue_id = 0;
    auto operator<=>(const QueueKey&) const = default;
};

// A queue appeared (LIST_QUEUES, QUEUE_CREATED event, or a new activity slot).
struct QueueInfo {
    QueueKey key;
    int priority = 7;
    // Tensor-parallel group (AMDQP_GROUP or one the daemon derived from the
    // cgroup/job); empty: the queue is its own unit. Queues of one group
    // are suspended and resumed together on every GPU the group spans.
    std::string group;
    Mechanism mechanism = Mechanism::kAmdqp;
};

// One queue's slot of the activity page, as read at the sample time.
struct QueueSample {
    QueueKey key;
    std::uint64_t write_index = 0;  // packets published at the last doorbell
    std::uint64_t doorbells = 0;    // doorbell stores so far (only grows)
    std::int64_t last_doorbell_ns = 0;
    // The packet processor's read index; without it (no ptrace rights) a
    // queue counts as idle as soon as a sample sees no new doorbell.
    bool read_index_known = true;
    std::uint64_t read_index = 0;
    // The largest work-group count of its recent kernel dispatches, as of
    // the sample (the page's decaying demand_wgs); 0: none seen lately.
    // Used where its level's demand is adaptive (Config::cu_demand_is_auto).
    std::uint32_t demand_wgs = 0;
};

// A process's hint counters (amdqp_busy_begin/end): busy while they differ.
struct ProcessSample {
    std::int32_t pid = 0;
    std::uint64_t hint_begin = 0;
    std::uint64_t hint_end = 0;
};

// CLOCK_MONOTONIC in the daemon, a fake one in tests and simulators.
class Clock {
  public:
    virtual ~Clock() = default;
    virtual std::int64_t now_ns() const = 0;
};

// One GPU of a confinement: the lower queues keep @share of its CUs.
struct Confinement {
    std::uint32_t gpu = 0;
    // Fraction of the GPU's compute units the queues below the level keep,
    // in (0, 1); the high-priority work finds the rest free. The caller
    // turns it into a CU mask for the GPU's geometry (cu_mask.hpp).
    double share = 0;
};

// What the policy asks for. The daemon maps these onto libamdqp
// (AMDQP_IOC_SUSPEND_BELOW / RESUME_ALL, one scheduler update per device)
// and the activity page's cooperative request fields (with their lease).
class Actions {
  public:
    virtual ~Actions() = default;
    // Suspend every queue with priority < @priority on each of @gpus (one
    // ioctl; gpus sorted, never empty).
    virtual void suspend_below(std::span<const std::uint32_t> gpus, int priority) = 0;
    // Drop every suspension held on @gpus (one ioctl; sorted, never empty).
    virtual void resume_all(std::span<const std::uint32_t> gpus) = 0;
    // Ask process @pid to take its queues off / put them back.
    virtual void coop_suspend(std::int32_t pid) = 0;
    virtual void coop_resume(std::int32_t pid) = 0;

    // Confinement (AMDQP_IOC_CONFINE): the queues below @priority keep
    // running on part of each GPU. Actions that cannot confine keep these
    // defaults, and a Policy given them refuses a Config that confines
    // (Config::confines()), so a confinement is never silently dropped.
    virtual bool can_confine() const { return false; }
    // Confine every queue with priority < @priority on each target's GPU
    // to its share (one CONFINE BELOW; targets sorted by gpu, never
    // empty). A GPU already confined by an earlier call moves to the new
    // level and share (the ioctl moves the fd's queues and lifts those no
    // longer below).
    virtual void confine_below(std::span<const Confinement> targets, int priority) {
        static_cast<void>(targets);
        static_cast<void>(priority);
    }
    // Lift every confinement held on @gpus (one CONFINE RELEASE; sorted,
    // never empty).
    virtual void unconfine(std::span<const std::uint32_t> gpus) { static_cast<void>(gpus); }
};

}  // namespace amdqp::policy

#endif
