// SPDX-License-Identifier: MIT
#include "activity_page.hpp"

#include <fcntl.h>
#include <pthread.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <new>

#include <amdqp/amdqp.hpp>

#include "activity_proc.hpp"

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

struct ExitUnlinker {
    ActivityWriter* writer;
    ~ExitUnlinker() { writer->unlink_if_owner(); }
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
    void* p = mmap(nullptr, page_bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    return p == MAP_FAILED ? nullptr : static_cast<amdqp_act_page*>(p);
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

enum class Existing { joined, stale, error };

// @fd is an existing page file of this process's pid. It belongs to this
// process if this process maps it (a copy of this code made it); otherwise
// it is left over by a dead process whose pid was reused, or by this very
// process before an exec (mappings do not survive exec).
Existing examine_existing(int fd, const struct stat& st, amdqp_act_page** out, int* err) {
    for (int waited = 0;; waited++) {
        std::optional<bool> mapped = proc_maps_file(0, st.st_dev, st.st_ino);
        if (mapped.value_or(false)) {
            amdqp_act_page* page = map_page(fd);
            if (!page) {
                *err = errno;
                return Existing::error;
            }
            if (!wait_for_magic(page) || !header_compatible(page->hdr)) {
                munmap(page, page_bytes);
                *err = EPROTO;
                return Existing::error;
            }
            *out = page;
            return Existing::joined;
        }
        // A creator in this process stores the magic only after mapping the
        // file, so a finished page nobody here maps is left over.
        std::uint32_t magic = 0;
        struct stat now;
        if (fstat(fd, &now) == 0 && now.st_size >= static_cast<off_t>(page_bytes) &&
            pread(fd, &magic, sizeof(magic), 0) == sizeof(magic) && magic == AMDQP_ACT_MAGIC)
            return Existing::stale;
        if (waited >= join_wait_ms)
            return Existing::stale;
        sleep_ms(1);
    }
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
    static ExitUnlinker unlinker{&writer.get()};
    return writer.get();
}

ActivityWriter::ActivityWriter(std::string dir) : dir_(std::move(dir)) {
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
        std::string dir = dir_.empty() ? activity_dir() : dir_;
        path_ = dir + "/" AMDQP_ACT_PREFIX + std::to_string(getpid());
        amdqp_act_page* page = nullptr;
        bool created = false;
        int err = create_or_join(path_, &page, &created);
        if (err) {
            error_.store(err, std::memory_order_relaxed);
            failed_.store(true, std::memory_order_relaxed);
            return nullptr;
        }
        owner_pid_ = getpid();
        created_.store(created, std::memory_order_relaxed);
        page_.store(page, std::memory_order_release);
        return page;
    } catch (const std::bad_alloc&) {
        error_.store(ENOMEM, std::memory_order_relaxed);
        return nullptr;
    }
}

int ActivityWriter::create_or_join(const std::string& path, amdqp_act_page** out, bool* created) {
    // A few rounds: each may find a left-over file and remove it.
    for (int round = 0; round < 4; round++) {
        int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
        if (fd >= 0) {
            amdqp_act_page* page = nullptr;
            if (ftruncate(fd, page_bytes) == 0)
                page = map_page(fd);
            int err = page ? 0 : errno;
            ::close(fd);
            if (!page) {
                ::unlink(path.c_str());
                return err;
            }
            init_header(page);
            *out = page;
            *created = true;
            return 0;
        }
        if (errno != EEXIST)
            return errno;

        fd = ::open(path.c_str(), O_RDWR | O_CLOEXEC | O_NOFOLLOW);
        if (fd < 0) {
            if (errno == ENOENT)
                continue;  // removed meanwhile: try to make it again
            return errno;
        }
        struct stat st;
        if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || st.st_uid != geteuid()) {
            // Not ours to use or remove: another user's file under our name.
            ::close(fd);
            return EEXIST;
        }
        int err = 0;
        amdqp_act_page* page = nullptr;
        Existing what = examine_existing(fd, st, &page, &err);
        ::close(fd);
        if (what == Existing::joined) {
            *out = page;
            *created = false;
            return 0;
        }
        if (what == Existing::error)
            return err;
        ::unlink(path.c_str());
    }
    return EEXIST;
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
        return -1;

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
    ref(s.pad).store(0, std::memory_order_relaxed);
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

void ActivityWriter::close() noexcept {
    std::lock_guard lock(mutex_);
    amdqp_act_page* p = page_.exchange(nullptr, std::memory_order_acq_rel);
    if (p) {
        if (created_.load(std::memory_order_relaxed) && owner_pid_ == getpid())
            ::unlink(path_.c_str());
        munmap(p, page_bytes);
    }
    created_.store(false, std::memory_order_relaxed);
    failed_.store(false, std::memory_order_relaxed);
    error_.store(0, std::memory_order_relaxed);
    owner_pid_ = 0;
}

void ActivityWriter::unlink_if_owner() noexcept {
    // No lock: at exit another thread may hold it forever. path_ is only
    // written while the page is made, before created_ is set.
    if (page_.load(std::memory_order_acquire) && created_.load(std::memory_order_relaxed) &&
        owner_pid_ == getpid())
        ::unlink(path_.c_str());
}

void ActivityWriter::after_fork_in_child() noexcept {
    // The inherited mapping is the parent's page: unmap it so that no stale
    // pointer can write into it, and let the child make its own.
    if (amdqp_act_page* p = page_.exchange(nullptr, std::memory_order_relaxed))
        munmap(p, page_bytes);
    created_.store(false, std::memory_order_relaxed);
    failed_.store(false, std::memory_order_relaxed);
    error_.store(0, std::memory_order_relaxed);
    owner_pid_ = 0;
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
