// SPDX-License-Identifier: MIT
#include "preload.hpp"

#include <dlfcn.h>
#include <link.h>
#include <pthread.h>

#include <atomic>
#include <memory>
#include <new>
#include <string>
#include <vector>

#include <amdqp/activity.h>

#include "activity_page.hpp"
#include "export.hpp"
#include "hsa_hooks.hpp"
#include "hsa_table.hpp"

namespace amdqp::preload {

namespace {

template <typename T>
class NoDestructor {
  public:
    NoDestructor() { std::construct_at(ptr()); }
    T& get() { return *ptr(); }

  private:
    T* ptr() { return std::launder(reinterpret_cast<T*>(storage_)); }
    alignas(T) unsigned char storage_[sizeof(T)];
};

std::atomic<Preload*> g_preload{nullptr};
std::atomic<bool> g_installed{false};

int own_install(void* table) {
    try {
        return Preload::get().install(static_cast<HsaApiTable*>(table)) ? 1 : 0;
    } catch (...) {
        return 0;
    }
}

int own_installed() {
    return g_installed.load(std::memory_order_acquire) ? 1 : 0;
}

void own_uninstall() {
    if (Preload* p = g_preload.load(std::memory_order_acquire))
        p->uninstall();
}

const amdqp_preload_v1 g_own = {sizeof(amdqp_preload_v1), 1, &own_install, &own_installed,
                                &own_uninstall};

}  // namespace
}  // namespace amdqp::preload

extern "C" AMDQP_PRELOAD_EXPORT const amdqp_preload_v1* amdqp_preload_v1_instance(void) {
    return &amdqp::preload::g_own;
}

namespace amdqp::preload {

namespace {

using InstanceFn = const amdqp_preload_v1* (*)();

const amdqp_preload_v1* usable(void* sym) {
    if (!sym)
        return nullptr;
    const amdqp_preload_v1* p = reinterpret_cast<InstanceFn>(sym)();
    if (!p || p->size < sizeof(amdqp_preload_v1) || p->abi != 1)
        return nullptr;
    return p;
}

// Another copy, anywhere in the process (also ones loaded RTLD_LOCAL), that
// installed itself already.
const amdqp_preload_v1* find_installed_other() {
    std::vector<std::string> names;
    dl_iterate_phdr(
        [](struct dl_phdr_info* info, size_t, void* data) {
            if (info->dlpi_name && *info->dlpi_name)
                static_cast<std::vector<std::string>*>(data)->emplace_back(info->dlpi_name);
            return 0;
        },
        &names);
    // dlopen outside the iteration: it holds the loader's lock.
    for (const std::string& name : names) {
        void* h = dlopen(name.c_str(), RTLD_NOLOAD | RTLD_LAZY);
        if (!h)
            continue;
        const amdqp_preload_v1* p = usable(dlsym(h, "amdqp_preload_v1_instance"));
        dlclose(h);
        if (p && p != &g_own && p->installed())
            return p;
    }
    return nullptr;
}

}  // namespace

const amdqp_preload_v1* own_instance() {
    return &g_own;
}

const amdqp_preload_v1* primary_instance() {
    static std::atomic<const amdqp_preload_v1*> cached{nullptr};
    if (const amdqp_preload_v1* p = cached.load(std::memory_order_acquire))
        return p;
    const amdqp_preload_v1* p = usable(dlsym(RTLD_DEFAULT, "amdqp_preload_v1_instance"));
    if (!p || p == &g_own) {
        const amdqp_preload_v1* other = find_installed_other();
        p = other ? other : &g_own;
    }
    cached.store(p, std::memory_order_release);
    return p;
}

bool is_primary() {
    return primary_instance() == &g_own;
}

Preload& Preload::get() {
    static NoDestructor<Preload> preload;
    return preload.get();
}

Preload::Preload()
    : config_(read_config()),
      link_(make_device_link()),
      registry_(detail::ActivityWriter::instance(), *link_, ioctl_queue_control(), config_),
      watcher_(detail::ActivityWriter::instance(), registry_) {
    registry_.set_coop_starter([this] { return watcher_.start(); });
    g_preload.store(this, std::memory_order_release);
    static std::once_flag once;
    std::call_once(once, [] { pthread_atfork(atfork_prepare, atfork_parent, atfork_child); });
}

bool Preload::install(HsaApiTable* table) {
    std::lock_guard lock(install_mutex_);
    TableEntries entries;
    std::string why;
    if (!locate_entries(table, &entries, &why)) {
        warn_once("amdqp: " + why +
                  ": the tagging layer does not know this HSA runtime, so the program runs "
                  "untagged (update amdqp)");
        return false;
    }
    if (installed_core_ == entries.core)
        return true;
    if (!config_.problem.empty())
        warn_once(config_.problem);
    patch_table(entries, &registry_, config_.stream_priority);
    installed_core_ = entries.core;
    g_installed.store(true, std::memory_order_release);
    // The process is tagged from now on, queues or not: the page says so.
    detail::ActivityWriter::instance().set_flags(AMDQP_ACT_F_PRELOAD);
    return true;
}

void Preload::uninstall() {
    std::lock_guard lock(install_mutex_);
    registry_.clear();
    installed_core_ = nullptr;
    g_installed.store(false, std::memory_order_release);
}

bool Preload::installed() const {
    std::lock_guard lock(install_mutex_);
    return installed_core_ != nullptr;
}

void Preload::atfork_prepare() {
    if (Preload* p = g_preload.load(std::memory_order_acquire))
        p->registry_.lock_for_fork();
}

void Preload::atfork_parent() {
    if (Preload* p = g_preload.load(std::memory_order_acquire))
        p->registry_.unlock_after_fork_parent();
}

void Preload::atfork_child() {
    warn_reset_after_fork();
    if (Preload* p = g_preload.load(std::memory_order_acquire)) {
        p->registry_.reset_after_fork_child();
        p->watcher_.reset_after_fork_child();
    }
}

}  // namespace amdqp::preload
