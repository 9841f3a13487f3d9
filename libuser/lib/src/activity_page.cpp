// SPDX-License-Identifier: MIT
#include "activity_page.hpp"

#include <fcntl.h>
#include <pthread.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <new>
#include <vector>

#include <amdqp/amdqp.hpp>

#include "activity_proc.hpp"
#include "daemon_link.hpp"

namespace amdqp::detail {

namespace {

constexpr std::size_t page_bytes = sizeof(amdqp_act_page);
static_assert(page_bytes == AMDQP_ACT_PAGE_SIZE);

// How long a copy waits for another copy of this process that is making the
// page right now, and how often it looks.
constexpr int join_wait_ms = 200;

template <typename T>
std::atomic_ref<T> ref(T& field) {
    return std::atomic_ref<T>(field);
}

void sleep_ms(int ms) {
    struct timespec ts = {0, static_cast<long>(ms) * 1000000L};
    while (nanosleep(&ts, &ts) < 0 && errno == EINTR) {
    }
}

// All writers of the process, so that fork can reset each.
std::mutex g_writers_mutex;
ActivityWriter* g_writers = nullptr;

// A value that is constructed on first use and never destroyed: the
// process's writer must outlive every thread that may still write at exit.
template <typename T>
class NoDestructor {
  public:
    NoDestructor() { std::construct_at(ptr()); }
    T& get() { return *ptr(); }

  private:
    T* ptr() { return std::launder(reinterpret_cast<T*>(storage_)); }
    alignas(T) unsigned char storage_[sizeof(T)];
};

void init_header(amdqp_act_page* page) {
    amdqp_act_header& h = page->hdr;
    h.version = AMDQP_ACT_VERSION;
    h.version_minor = AMDQP_ACT_VERSION_MINOR;
    h.size = sizeof(amdqp_act_page);
    h.slot_size = sizeof(amdqp_act_slot);
    h.max_slots = AMDQP_ACT_MAX_SLOTS;
    h.pid = static_cast<std::uint32_t>(getpid());
    h.start_time = proc_start_time(0).value_or(0);
    h.priority = env_priority(AMDQP_PRIO_NORMAL);
    h.coop_state = AMDQP_ACT_COOP_RUNNING;
    if (const char* group = std::getenv("AMDQP_GROUP"))
        std::strncpy(h.group, group, sizeof(h.group) - 1);
    ref(h.magic).store(AMDQP_ACT_MAGIC, std::memory_order_release);
}

// Whether a page another copy of this process made can be shared.
bool header_compatible(const amdqp_act_header& h) {
    return h.version == AMDQP_ACT_VERSION && h.size >= sizeof(amdqp_act_page) &&
           h.slot_size == sizeof(amdqp_act_slot) && h.max_slots == AMDQP_ACT_MAX_SLOTS &&
           h.pid == static_cast<std::uint32_t>(getpid());
}

amdqp_act_page* map_page(int fd) {
    // Aligned to its size: the tagging layer finds a slot's header by
    // masking the slot's address (busy_announce.hpp).
    return static_cast<amdqp_act_page*>(map_aligned(fd, page_bytes, PROT_READ | PROT_WRITE));
}

// Waits for another copy to finish the page it is making (magic stored last).
bool wait_for_magic(amdqp_act_page* page) {
    for (int waited = 0;; waited++) {
        if (ref(page->hdr.magic).load(std::memory_order_acquire) == AMDQP_ACT_MAGIC)
            return true;
        if (waited >= join_wait_ms)
            return false;
        sleep_ms(1);
    }
}

struct Found {
    int fd_num = -1;
    ino_t ino = 0;
};

// The pages this process has open: made by another copy of this code here,
// or inherited from a parent that forked without running our atfork
// handlers (its header names the parent: skipped by the caller).
std::vector<Found> own_pages() {
    std::vector<Found> out;
    for (int n : page_fds(0)) {
        struct stat st;
        if (::stat(("/proc/self/fd/" + std::to_string(n)).c_str(), &st) == 0)
            out.push_back({n, st.st_ino});
    }
    return out;
}

// Maps page fd @n of this process if it is a finished page of this pid.
amdqp_act_page* join(int n) {
    int fd = ::open(("/proc/self/fd/" + std::to_string(n)).c_str(), O_RDWR | O_CLOEXEC);
    if (fd < 0)
        return nullptr;
    std::size_t size = 0;
    const char* why = nullptr;
    amdqp_act_page* page = nullptr;
    if (check_page_fd(fd, page_bytes, &size, &why) == 0 && size == page_bytes)
        page = map_page(fd);
    ::close(fd);
    if (!page)
        return nullptr;
    if (!wait_for_magic(page) || !header_compatible(page->hdr)) {
        munmap(page, page_bytes);
        return nullptr;
    }
    return page;
}

// A new sealed page, header written; its fd in *@fd.
int create_page(amdqp_act_page** out, int* fd_out) {
    int fd = static_cast<int>(memfd_create(AMDQP_ACT_MEMFD_NAME, MFD_CLOEXEC | MFD_ALLOW_SEALING));
    if (fd < 0)
        return errno;
    // Sized and sealed before anyone else can reach it: /proc/PID/fd opens
    // of it come after this, so every mapping of it, ours included, is of
    // a file that can neither shrink (no SIGBUS) nor grow.
    if (ftruncate(fd, page_bytes) < 0 ||
        fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL) < 0) {
        int err = errno;
        ::close(fd);
        return err;
    }
    amdqp_act_page* page = map_page(fd);
    if (!page) {
        int err = errno;
        ::close(fd);
        return err;
    }
    init_header(page);
    *out = page;
    *fd_out = fd;
    return 0;
}

}  // namespace

std::uint32_t env_priority(std::uint32_t fallback) noexcept {
    const char* text = std::getenv("AMDQP_PRIORITY");
    if (!text || !*text)
        return fallback;
    std::optional<int> p = try_parse_priority(text);
    return p ? static_cast<std::uint32_t>(*p) : fallback;
}

ActivityWriter& ActivityWriter::instance() noexcept {
    static NoDestructor<ActivityWriter> writer;
    return writer.get();
}

ActivityWriter::ActivityWriter() {
    static std::once_flag atfork_once;
    std::call_once(atfork_once,
                   [] { pthread_atfork(atfork_prepare, atfork_parent, atfork_child); });
    std::lock_guard lock(g_writers_mutex);
    next_ = g_writers;
    g_writers = this;
}

ActivityWriter::~ActivityWriter() {
    {
        std::lock_guard lock(g_writers_mutex);
        for (ActivityWriter** w = &g_writers; *w; w = &(*w)->next_) {
            if (*w == this) {
                *w = next_;
                break;
            }
        }
    }
    close();
}

std::string ActivityWriter::path() const {
    std::lock_guard lock(mutex_);
    return path_;
}

amdqp_act_page* ActivityWriter::open_slow() noexcept {
    std::lock_guard lock(mutex_);
    if (amdqp_act_page* p = page_.load(std::memory_order_acquire))
        return p;
    if (failed_.load(std::memory_order_relaxed))
        return nullptr;
    try {
        amdqp_act_page* page = nullptr;
        int fd = -1;
        int err = create_or_join(&page, &fd);
        if (err) {
            error_.store(err, std::memory_order_relaxed);
            failed_.store(true, std::memory_order_relaxed);
            return nullptr;
        }
        owner_pid_ = getpid();
        fd_.store(fd, std::memory_order_relaxed);
        created_.store(fd >= 0, std::memory_order_relaxed);
        page_.store(page, std::memory_order_release);
        // Tell amdqpd at once (it adopts the page before this process's
        // first submission); without one the next wake, or its /proc scan
        // once it starts, does it.
        if (fd >= 0)
            register_page(fd);
        return page;
    } catch (const std::bad_alloc&) {
        error_.store(ENOMEM, std::memory_order_relaxed);
        return nullptr;
    }
}

int ActivityWriter::create_or_join(amdqp_act_page** out, int* fd) {
    *fd = -1;
    std::vector<Found> found = own_pages();
    std::sort(found.begin(), found.end(),
              [](const Found& a, const Found& b) { return a.ino < b.ino; });
    for (const Found& f : found) {
        if (amdqp_act_page* page = join(f.fd_num)) {
            path_ = "/proc/" + std::to_string(getpid()) + "/fd/" + std::to_string(f.fd_num);
            *out = page;
            return 0;
        }
    }
    amdqp_act_page* page = nullptr;
    int err = create_page(&page, fd);
    if (err)
        return err;
    // Another copy may have made one at the same time: both keep the lower
    // inode (pages are only shared after this, so no slot is lost).
    struct stat mine;
    if (fstat(*fd, &mine) == 0) {
        for (const Found& f : own_pages()) {
            if (f.ino >= mine.st_ino)
                continue;
            if (amdqp_act_page* other = join(f.fd_num)) {
                munmap(page, page_bytes);
                ::close(*fd);
                *fd = -1;
                path_ = "/proc/" + std::to_string(getpid()) + "/fd/" + std::to_string(f.fd_num);
                *out = other;
                return 0;
            }
        }
    }
    path_ = "/proc/" + std::to_string(getpid()) + "/fd/" + std::to_string(*fd);
    *out = page;
    return 0;
}

int ActivityWriter::take_slot(const SlotInit& init) noexcept {
    amdqp_act_page* p = page();
    if (!p)
        return -1;
    std::lock_guard lock(mutex_);
    if (page_.load(std::memory_order_relaxed) != p)
        return -1;
    amdqp_act_header& h = p->hdr;
    // Never-used slots first: a reader that still holds an old snapshot of
    // a freed slot is less likely to see it change owner.
    int index = -1;
    std::uint32_t used = ref(h.num_slots).load(std::memory_order_relaxed);
    while (used < AMDQP_ACT_MAX_SLOTS) {
        if (ref(h.num_slots)
                .compare_exchange_weak(used, used + 1, std::memory_order_release,
                                       std::memory_order_relaxed)) {
            index = static_cast<int>(used);
            break;
        }
    }
    for (std::uint32_t i = 0; index < 0 && i < AMDQP_ACT_MAX_SLOTS; i++)
        if (ref(p->slots[i].state).load(std::memory_order_acquire) == AMDQP_ACT_SLOT_FREE)
            index = static_cast<int>(i);
    if (index < 0)
        return -1;  // the caller counts it: note_untracked()

    amdqp_act_slot& s = p->slots[index];
    ref(s.gpu_id).store(init.gpu_id, std::memory_order_relaxed);
    ref(s.priority).store(init.priority, std::memory_order_relaxed);
    ref(s.mechanism).store(init.mechanism, std::memory_order_relaxed);
    ref(s.ring_va).store(init.ring_va, std::memory_order_relaxed);
    ref(s.write_index).store(0, std::memory_order_relaxed);
    ref(s.doorbells).store(0, std::memory_order_relaxed);
    ref(s.last_doorbell_ns).store(0, std::memory_order_relaxed);
    ref(s.read_index_va).store(init.read_index_va, std::memory_order_relaxed);
    ref(s.queue_id).store(init.queue_id, std::memory_order_relaxed);
    ref(s.demand_wgs).store(0, std::memory_order_relaxed);
    ref(s.state).store(AMDQP_ACT_SLOT_LIVE, std::memory_order_release);
    return index;
}

void ActivityWriter::release_slot(int index) noexcept {
    amdqp_act_page* p = peek();
    if (!p || index < 0 || index >= static_cast<int>(AMDQP_ACT_MAX_SLOTS))
        return;
    ref(p->slots[index].state).store(AMDQP_ACT_SLOT_FREE, std::memory_order_release);
}

amdqp_act_slot* ActivityWriter::slot(int index) noexcept {
    amdqp_act_page* p = peek();
    if (!p || index < 0 || index >= static_cast<int>(AMDQP_ACT_MAX_SLOTS))
        return nullptr;
    return &p->slots[index];
}

void ActivityWriter::set_flags(std::uint32_t bits) noexcept {
    if (amdqp_act_page* p = page())
        ref(p->hdr.flags).fetch_or(bits, std::memory_order_release);
}

void ActivityWriter::clear_flags(std::uint32_t bits) noexcept {
    if (amdqp_act_page* p = peek())
        ref(p->hdr.flags).fetch_and(~bits, std::memory_order_release);
}

void ActivityWriter::note_untracked(int delta) noexcept {
    amdqp_act_page* p = page();
    if (!p || delta == 0)
        return;
    ref(p->hdr.untracked)
        .fetch_add(static_cast<std::uint64_t>(static_cast<std::int64_t>(delta)),
                   std::memory_order_relaxed);
    if (delta > 0 && !told_untracked_.exchange(true, std::memory_order_relaxed)) {
        char msg[256];
        int len = std::snprintf(msg, sizeof(msg),
                                "amdqp: this process has more queues than its activity page "
                                "holds (%u); the rest are tagged but amdqpd and amdqpctl do not "
                                "see them (counted as untracked)\n",
                                static_cast<unsigned>(AMDQP_ACT_MAX_SLOTS));
        if (len > 0) [[maybe_unused]]
            ssize_t n = ::write(2, msg, static_cast<std::size_t>(len));
    }
}

void ActivityWriter::close() noexcept {
    std::lock_guard lock(mutex_);
    amdqp_act_page* p = page_.exchange(nullptr, std::memory_order_acq_rel);
    if (p)
        munmap(p, page_bytes);
    int fd = fd_.exchange(-1, std::memory_order_relaxed);
    if (fd >= 0 && owner_pid_ == getpid())
        ::close(fd);
    created_.store(false, std::memory_order_relaxed);
    failed_.store(false, std::memory_order_relaxed);
    error_.store(0, std::memory_order_relaxed);
    owner_pid_ = 0;
    path_.clear();
}

void ActivityWriter::after_fork_in_child() noexcept {
    // The inherited mapping and fd are the parent's page: drop both so that
    // no stale pointer can write into it and no reader takes it for the
    // child's, and let the child make its own.
    if (amdqp_act_page* p = page_.exchange(nullptr, std::memory_order_relaxed))
        munmap(p, page_bytes);
    int fd = fd_.exchange(-1, std::memory_order_relaxed);
    if (fd >= 0)
        ::close(fd);
    created_.store(false, std::memory_order_relaxed);
    failed_.store(false, std::memory_order_relaxed);
    error_.store(0, std::memory_order_relaxed);
    told_untracked_.store(false, std::memory_order_relaxed);
    owner_pid_ = 0;
    path_.clear();
}

void ActivityWriter::atfork_prepare() noexcept {
    g_writers_mutex.lock();
    for (ActivityWriter* w = g_writers; w; w = w->next_)
        w->mutex_.lock();
}

void ActivityWriter::atfork_parent() noexcept {
    for (ActivityWriter* w = g_writers; w; w = w->next_)
        w->mutex_.unlock();
    g_writers_mutex.unlock();
}

void ActivityWriter::atfork_child() noexcept {
    for (ActivityWriter* w = g_writers; w; w = w->next_) {
        w->after_fork_in_child();
        w->mutex_.unlock();
    }
    g_writers_mutex.unlock();
}

}  // namespace amdqp::detail
