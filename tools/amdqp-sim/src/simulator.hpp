// SPDX-License-Identifier: MIT
// The discrete-event model: workloads submit their timelines' kernels to
// the queues of simulated devices, the devices run them (device_model.hpp),
// and a simulated amdqpd samples the queues and runs the real policy
// (amdqp::policy), whose actions change the devices.
#ifndef AMDQP_SIM_SIMULATOR_HPP
#define AMDQP_SIM_SIMULATOR_HPP

#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <vector>

#include "amdqp/policy/policy.hpp"
#include "scenario.hpp"

namespace amdqp::sim {

// One kernel's life, recorded when tracing is on (tests, debugging).
struct KernelRecord {
    int workload = 0, rank = 0;
    std::uint64_t request = 0;
    std::size_t kernel = 0;
    Ns submit = 0, start = -1, end = -1;
};

// One scheduler action as a device applied it.
struct UpdateRecord {
    enum class Op { kSuspend, kResume, kConfine, kUnconfine };
    std::uint32_t gpu = 0;
    Op op = Op::kSuspend;
    Ns issued = 0, done = 0;
};

class Simulator {
  public:
    // Throws std::invalid_argument on an inconsistent scenario.
    explicit Simulator(Scenario sc);
    ~Simulator();
    Simulator(const Simulator&) = delete;
    Simulator& operator=(const Simulator&) = delete;

    void trace(bool on) { tracing_ = on; }
    RunResult run();

    const std::vector<KernelRecord>& kernels() const { return kernel_log_; }
    const std::vector<UpdateRecord>& updates() const { return update_log_; }

  private:
    struct Inflight {
        double remaining = 0;  // isolated-duration ns left
        KernelClass cls = KernelClass::kOther;
        bool started = false;
        int nccl_seq = -1;
        std::size_t log = SIZE_MAX;  // index in kernel_log_
        std::size_t index = 0;       // in its request
        bool sync = false;           // the host waits for it
        bool first_token = false;
    };
    struct Stream {
        int job = 0, rank = 0;
        std::uint32_t gpu = 0;
        int priority = 0;
        policy::QueueKey key;
        double occupancy = 1.0, cu_fraction = 1.0;
        const Request* req = nullptr;
        std::uint64_t req_no = 0;
        std::size_t next_k = 0;
        Ns req_start = 0, last_submit = 0;
        Ns shift = 0;               // host waits so far push the recorded offsets back
        std::size_t next_sync = 0;  // in req->syncs
        bool wait_sync = false;     // the host waits for a submitted kernel
        int nccl_count = 0;
        std::deque<Inflight> hwq;  // submitted, not completed; the head runs
        std::uint64_t write = 0, read = 0, doorbells = 0;
        Ns last_doorbell = 0;
        bool held = false, announced = false;
        Ns release_at = 0;
        bool suspended = false;
        // Share of the device its queue keeps while confined (1: not).
        double confined = 1.0;
        double saved_resident = 0;
        Ns removing_until = 0, avail_at = 0;  // MES remove/add in progress
        double rate = 0;
        bool on_gpu = false;  // its head kernel runs (or spins) on the device now
    };
    // A ring collective's progress: per rank, the steps it finished and
    // the last step whose data it sent to the next rank.
    struct Ring {
        std::vector<int> done, sent;
    };
    struct Job {
        WorkloadSpec spec;
        std::vector<int> streams;
        std::uint64_t next_req = 0;
        bool in_flight = false;
        Ns arrival = 0;
        Ns first_token_at = -1;
        int ranks_done = 0;
        std::map<int, int> nccl_arrivals;
        std::map<int, Ring> rings;  // by collective, Collectives::kRing
        std::vector<double> latencies_ms, ttft_ms, tpot_ms;
        std::vector<Ns> completions;
        std::uint64_t dropped = 0;
        bool gave_up = false;
    };
    struct Device {
        DeviceParams p;
        std::vector<int> streams;
        Ns stall_until = 0, mes_busy_until = 0;
        int owner = -1;
        Ns slice_end = 0, switch_until = 0;
        Ns dry_since = -1;  // when the owner last ran out of work (-1: it has work)
        bool others_waiting = false;
        std::uint64_t updates = 0;
        Ns stall_ns = 0;
    };
    class Adapter;
    class SimClock;

    Ns next_event() const;
    void advance(Ns t);
    bool process_completions();
    bool process_jobs();
    bool process_submissions();
    void start_request(Job& j);
    void submit(Stream& s);
    bool recompute();
    bool recompute(Device& d);
    bool timeslice_owner(Device& d, const std::vector<int>& cands);
    bool ring_steps();
    bool collective_done(const Stream& s) const;
    double resident(const Stream& s, const Device& d) const;
    void daemon_step();
    Ns apply(std::uint32_t gpu, bool suspend, int priority, Ns start);
    Ns apply_confine(std::uint32_t gpu, double share, int priority, Ns start);
    Ns runlist_update(Device& d, Ns start, double before, double after);
    Ns arrival_of(const Job& j, std::uint64_t n) const;
    Ns due(const Stream& s) const;
    Ns measure_end() const { return sc_.measure_end > 0 ? sc_.measure_end : sc_.duration; }
    bool schedules_done() const;
    RunResult collect() const;

    Scenario sc_;
    std::vector<Job> jobs_;
    std::vector<Stream> streams_;
    std::map<std::uint32_t, Device> devices_;
    Ns now_ = 0;
    bool tracing_ = false;
    std::vector<KernelRecord> kernel_log_;
    std::vector<UpdateRecord> update_log_;

    // The daemon.
    std::unique_ptr<SimClock> clock_;
    std::unique_ptr<Adapter> adapter_;
    std::unique_ptr<policy::Policy> policy_;
    Ns next_step_ = 0, busy_until_ = 0;
    int min_priority_ = 0;
    std::uint64_t suspend_calls_ = 0, resume_calls_ = 0;
    std::uint64_t confine_calls_ = 0, unconfine_calls_ = 0;
};

// Convenience: build and run.
RunResult simulate(const Scenario& sc);

}  // namespace amdqp::sim

#endif
