// SPDX-License-Identifier: MIT
//
// An in-memory model of /dev/amdqp behind amdqp::Sys, for unit tests that
// run without the kernel module. It follows Documentation/ioctl.rst where
// tests look (argument checks, per-entry results, fd-owned holds,
// permissions, the event ring and its overflow record), and offers knobs to
// provoke what a real kernel rarely does on demand: short reads, records of
// other sizes and types, lists that grow between calls, per-call caps.
//
// Not modelled: pid namespaces, the watchdog's timing, real blocking reads
// (a read on an empty ring returns -EAGAIN even on a blocking fd).
#ifndef AMDQP_TESTING_FAKE_AMDQP_HPP
#define AMDQP_TESTING_FAKE_AMDQP_HPP

#include <linux/amdqp.h>

#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <limits>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include <amdqp/sys.hpp>

namespace amdqp::testing {

struct FakeGpu {
    std::uint32_t gpu_id = 0;
    std::uint32_t backend = AMDQP_BACKEND_SIM;
    std::uint32_t sched_mode = AMDQP_SCHED_HWS;
    std::uint32_t num_xcc = 1;
    std::uint32_t cu_per_xcc = 8;  // 0: cannot be confined (kfd today)
    std::uint64_t sched_updates = 0;
    std::uint64_t unmap_packets = 0;
    std::uint64_t map_packets = 0;
};

struct FakeQueue {
    std::uint32_t pid = 0;
    std::uint32_t uid = 0;
    std::uint32_t gpu_id = 0;
    std::uint32_t queue_id = 0;
    std::uint64_t ring_va = 0;
    std::uint64_t ring_size = 4096;
    std::uint32_t priority = 7;
    bool dumpable = true;
    bool cooldown = false;  // suspend answers -EAGAIN
    int fail_suspend = 0;   // if set, suspend answers this negative errno
    std::uint64_t suspend_count = 0;
    // The backend's work counts (LIST_QUEUES); 0, 0: a backend that does
    // not count (kfd).
    std::uint64_t submitted = 0;
    std::uint64_t completed = 0;
    std::set<int> holders;  // fds holding it suspended
    // fds confining it (AMDQP_IOC_CONFINE) and their masks.
    std::map<int, std::vector<std::uint32_t>> confiners;
};

class FakeAmdqp : public Sys {
  public:
    // Where the node lives; open() of any other path fails with -ENOENT.
    std::string path = "/fake/amdqp";
    // Node state: present = false behaves like "module not loaded".
    bool present = true;
    int open_errno = 0;   // if set, open() fails with it (e.g. EACCES)
    int ioctl_errno = 0;  // if set, every ioctl on an open fd fails with it (ENODEV: gone)
    bool answers_version = true;
    std::uint32_t abi_major = AMDQP_VERSION_MAJOR;
    std::uint32_t abi_minor = AMDQP_VERSION_MINOR;
    std::uint32_t max_batch = AMDQP_MAX_BATCH;
    std::uint32_t backends = AMDQP_BACKEND_SIM;

    // The caller, as the kernel would see it.
    std::uint32_t caller_pid = 1000;
    std::uint32_t caller_uid = 1000;
    bool cap_sys_nice = false;
    bool cap_sys_admin = false;

    // Entries one LIST call writes at most (the kernel caps at 4096/65536).
    std::size_t list_cap = 65536;
    // The kernel's sizeof(amdqp_queue_info): smaller models an older kernel.
    std::uint32_t queue_info_size = sizeof(amdqp_queue_info);
    // Called at the start of every LIST_QUEUES (a list that grows under us).
    std::function<void(FakeAmdqp&)> before_list_queues;
    // Called at the start of every SUSPEND_BELOW/RESUME_ALL (a GPU that
    // goes away between the caller's last look and its call).
    std::function<void(FakeAmdqp&)> before_gpu_set;
    // Bytes one read() returns at most. Below a record's size it splits
    // records, which the kernel never does; the reader must cope anyway.
    std::size_t read_chunk = std::numeric_limits<std::size_t>::max();
    // Records one fd's ring holds.
    std::size_t event_ring = 512;

    FakeGpu& add_gpu(std::uint32_t gpu_id, std::uint32_t sched_mode = AMDQP_SCHED_HWS);
    // As amdqp_device_unregister(): its queues go (QUEUE_DESTROYED each,
    // holds with them), then DEVICE_REMOVED; calls naming it get -ENODEV.
    void remove_gpu(std::uint32_t gpu_id);
    // Queue ids count from 1 per GPU. Emits QUEUE_CREATED.
    FakeQueue& add_queue(std::uint32_t pid, std::uint32_t gpu_id, std::uint64_t ring_va,
                         std::uint32_t priority, std::uint32_t uid = 1000);
    // Emits QUEUE_DESTROYED; holds vanish with it.
    void remove_queue(std::uint32_t pid, std::uint32_t gpu_id, std::uint32_t queue_id);

    // Queues a record for every fd whose mask has its type.
    void emit(std::uint32_t type, std::uint32_t pid = 0, std::uint32_t gpu_id = 0,
              std::uint32_t queue_id = 0, std::int32_t error = 0, std::uint64_t data = 0);
    // Queues raw bytes as one record for every subscribed fd (any type or
    // size: what a newer kernel might send).
    void emit_raw(const std::vector<unsigned char>& record);

    FakeQueue* find(std::uint32_t pid, std::uint32_t gpu_id, std::uint32_t queue_id);
    FakeGpu* gpu(std::uint32_t gpu_id);
    bool suspended(std::uint32_t pid, std::uint32_t gpu_id, std::uint32_t queue_id);
    // The mask the newest confinement of the queue applies; empty if none.
    std::vector<std::uint32_t> confined(std::uint32_t pid, std::uint32_t gpu_id,
                                        std::uint32_t queue_id);
    std::size_t open_fds() const { return fds_.size(); }
    // ioctl calls made, by _IOC_NR.
    std::size_t calls(unsigned long request) const;

    int open(const char* path, int flags) override;
    int close(int fd) override;
    int ioctl(int fd, unsigned long request, void* arg) override;
    ssize_t read(int fd, void* buf, std::size_t len) override;
    int poll(struct pollfd* fds, nfds_t nfds, int timeout_ms) override;

  private:
    struct FdState {
        int flags = 0;
        std::uint64_t mask = 0;
        std::deque<std::vector<unsigned char>> records;
        std::size_t front_offset = 0;  // bytes of records.front() already read
        std::uint64_t dropped = 0;
    };

    int list_devices(amdqp_list_devices* req);
    int list_queues(int fd, amdqp_list_queues* req);
    int set_priority(int fd, amdqp_set_priority* req);
    int batch(int fd, amdqp_batch* b, bool suspending);
    int gpu_set(int fd, amdqp_gpu_set* s, bool suspending);
    int set_event_mask(FdState& st, const amdqp_event_mask* m);
    int confine(int fd, amdqp_confine* c);
    // Checks an entry and finds its queue; result is 0 or -errno.
    FakeQueue* resolve(const amdqp_queue_ref& ref, int* result);
    bool may_suspend(const FakeQueue& q) const;
    std::uint32_t state_of(const FakeQueue& q, int fd) const;
    bool hold(int fd, FakeQueue& q);
    bool release(int fd, FakeQueue& q);
    void push(FdState& st, std::vector<unsigned char> record);

    std::vector<FakeGpu> gpus_;
    std::vector<std::unique_ptr<FakeQueue>> queues_;
    std::map<int, FdState> fds_;
    std::map<unsigned long, std::size_t> calls_;
    int next_fd_ = 1000;
    std::uint64_t clock_ns_ = 1'000'000;
};

}  // namespace amdqp::testing

#endif  // AMDQP_TESTING_FAKE_AMDQP_HPP
