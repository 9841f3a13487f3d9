// SPDX-License-Identifier: MIT
//
// The writer side of the activity channel (amdqp/activity.h): the process's
// own page, made at first need by the hint API or the tagging layer.
//
// The page is a sealed memfd the writer keeps open (amdqp/activity.h).
// Several copies of this code may live in one process (libamdqp.so for the
// hint API plus the tagging layer's static copy, or a library loaded from two
// paths); they share one page: a copy finds a page of this process among its
// open files (/proc/self/fd) and maps it too. Two copies that make one at the
// same instant both keep the page with the lower inode number and drop the
// other. A fork child never writes its parent's page: the atfork handler
// drops the inherited mapping and fd, and the child makes its own at its
// next need.
#ifndef AMDQP_SRC_ACTIVITY_PAGE_HPP
#define AMDQP_SRC_ACTIVITY_PAGE_HPP

#include <sys/types.h>

#include <atomic>
#include <cerrno>
#include <cstdint>
#include <mutex>
#include <string>

#include <amdqp/activity.h>

namespace amdqp::detail {

// What a queue's slot starts with.
struct SlotInit {
    std::uint32_t gpu_id = 0;
    std::uint32_t priority = 0;
    std::uint32_t mechanism = AMDQP_ACT_MECH_NONE;
    std::uint32_t queue_id = UINT32_MAX;
    std::uint64_t ring_va = 0;
    std::uint64_t read_index_va = 0;
};

class ActivityWriter {
  public:
    // The process's writer (never destroyed: threads may write at exit).
    static ActivityWriter& instance() noexcept;

    ActivityWriter();
    // A writer that never makes a page (tests of a process without one).
    enum Never { never };
    explicit ActivityWriter(Never) : ActivityWriter() {
        failed_.store(true, std::memory_order_relaxed);
        error_.store(EPERM, std::memory_order_relaxed);
    }
    ~ActivityWriter();
    ActivityWriter(const ActivityWriter&) = delete;
    ActivityWriter& operator=(const ActivityWriter&) = delete;

    // The page, made (or joined) at the first call; nullptr when it cannot
    // exist, error() then says why. Never throws, never prints.
    amdqp_act_page* page() noexcept {
        amdqp_act_page* p = page_.load(std::memory_order_acquire);
        if (p || failed_.load(std::memory_order_relaxed))
            return p;
        return open_slow();
    }
    // The page if it exists already.
    amdqp_act_page* peek() const noexcept { return page_.load(std::memory_order_acquire); }

    // Positive errno of the last failure to make the page, 0 if none.
    int error() const noexcept { return error_.load(std::memory_order_relaxed); }
    // Where readers open the page: /proc/PID/fd/N (empty without one).
    std::string path() const;
    // Whether this copy created the page (and holds its fd).
    bool created() const noexcept { return created_.load(std::memory_order_relaxed); }
    // The page's fd in this process (-1 without one).
    int fd() const noexcept { return fd_.load(std::memory_order_relaxed); }

    // Takes a free slot, fills it from @init and publishes it (state LIVE
    // stored last). Returns its index, or -1 when there is no page or no free
    // slot.
    int take_slot(const SlotInit& init) noexcept;
    // A queue found no slot (@delta 1) or such a queue went away (-1):
    // kept in the header's untracked; the first one is reported on stderr.
    void note_untracked(int delta) noexcept;
    // Marks slot @index free.
    void release_slot(int index) noexcept;
    // Slot @index of the page (nullptr without a page).
    amdqp_act_slot* slot(int index) noexcept;

    // Sets / clears AMDQP_ACT_F_* bits of the header.
    void set_flags(std::uint32_t bits) noexcept;
    void clear_flags(std::uint32_t bits) noexcept;

    // Unmaps the page and closes its fd if this copy made it; the writer
    // may make a new one afterwards.
    void close() noexcept;

  private:
    amdqp_act_page* open_slow() noexcept;
    int create_or_join(amdqp_act_page** out, int* fd);
    void after_fork_in_child() noexcept;

    static void atfork_prepare() noexcept;
    static void atfork_parent() noexcept;
    static void atfork_child() noexcept;

    mutable std::mutex mutex_;  // creation, slot allocation, close
    std::atomic<amdqp_act_page*> page_{nullptr};
    std::atomic<int> error_{0};
    std::atomic<bool> failed_{false};  // gave up for this process
    std::atomic<bool> created_{false};
    std::atomic<int> fd_{-1};  // the memfd, when this copy made the page
    std::atomic<bool> told_untracked_{false};
    pid_t owner_pid_ = 0;  // the process the page belongs to
    std::string path_;

    ActivityWriter* next_ = nullptr;  // all writers, for the atfork handlers
};

// AMDQP_PRIORITY of the environment (named level or number), @fallback if
// unset or not a priority.
std::uint32_t env_priority(std::uint32_t fallback) noexcept;

}  // namespace amdqp::detail

#endif  // AMDQP_SRC_ACTIVITY_PAGE_HPP
