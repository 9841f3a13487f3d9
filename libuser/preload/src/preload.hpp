// SPDX-License-Identifier: MIT
//
// The tagging layer of one process: its settings, its link to amdqp.ko, the
// queue registry and the cooperative watcher, made at first need and never
// destroyed (hooks and the watcher may run until the very end of the
// process).
//
// Copies: the layer may be loaded more than once (LD_PRELOAD and
// HSA_TOOLS_LIB naming different paths, or the rocprofiler-sdk entry
// library beside the preload one). Each copy exports
// amdqp_preload_v1_instance(); the copy that does the work (the primary) is
// the one in the global scope (LD_PRELOAD, whose ioctl hook sees queue
// creation), else one that installed itself already, else this one. Other
// copies hand their tables to it, so one registry and one page serve the
// process and the interception is installed once.
#ifndef AMDQP_PRELOAD_PRELOAD_HPP
#define AMDQP_PRELOAD_PRELOAD_HPP

#include <cstdint>
#include <memory>
#include <mutex>

#include "config.hpp"
#include "coop_watcher.hpp"
#include "kernel_link.hpp"
#include "queue_control.hpp"
#include "queue_registry.hpp"

struct HsaApiTable;

extern "C" {
// What a copy offers the others; grows at the end (@size).
struct amdqp_preload_v1 {
    std::uint32_t size;
    std::uint32_t abi;  // 1
    // Installs the interception into an HsaApiTable; 1 when installed.
    int (*install)(void* hsa_api_table);
    // 1 when this copy installed itself into a runtime's table.
    int (*installed)(void);
    // The runtime shut down (OnUnload reached another copy).
    void (*uninstall)(void);
};
}

namespace amdqp::preload {

class Preload {
  public:
    // This copy's layer (made at the first call).
    static Preload& get();

    // Installs into @table once per runtime; false when the table cannot be
    // used (one line on stderr says so).
    bool install(HsaApiTable* table);
    // The runtime shuts down (OnUnload): forget its queues; a later
    // install (hsa_init again) starts over.
    void uninstall();
    bool installed() const;

    QueueRegistry& registry() { return registry_; }
    const Config& config() const { return config_; }

    Preload();
    Preload(const Preload&) = delete;
    Preload& operator=(const Preload&) = delete;

  private:
    static void atfork_prepare();
    static void atfork_parent();
    static void atfork_child();

    Config config_;
    std::unique_ptr<KernelLink> link_;
    QueueRegistry registry_;
    CoopWatcher watcher_;
    mutable std::mutex install_mutex_;
    void* installed_core_ = nullptr;  // core table installed into
};

// The copy that does the work in this process (see above).
const amdqp_preload_v1* primary_instance();
// This copy's own entry.
const amdqp_preload_v1* own_instance();
// Whether this copy is the primary one (ioctl hooks of other copies only
// pass calls through).
bool is_primary();

}  // namespace amdqp::preload

#endif  // AMDQP_PRELOAD_PRELOAD_HPP
