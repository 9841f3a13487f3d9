// SPDX-License-Identifier: MIT
#include "runtime.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "api_table.h"
#include "aql.h"
#include "util.h"

namespace hsasim {

std::atomic<Runtime*> Runtime::instance_{nullptr};

namespace {

// hsa_init and hsa_shut_down nest (reference count). Recursive: a tool's
// OnLoad may itself call hsa_init.
std::recursive_mutex g_init_mutex;
uint32_t g_refcount = 0;

// hsa_queue_t.id is unique in the process, across runtime instances too.
std::atomic<uint64_t> g_next_queue_id{0};

constexpr uint32_t kDefaultPriority = 7;  // HSA_AMD_QUEUE_PRIORITY_NORMAL

std::unique_ptr<Backend> make_backend(std::string* why) {
    const char* name = getenv("HSA_SIM_BACKEND");
    if (!name || !*name || strcmp(name, "sim") == 0)
        return make_sim_backend(why);
    if (strcmp(name, "thread") == 0)
        return make_thread_backend(why);
    *why = std::string("HSA_SIM_BACKEND=") + name + ": unknown backend (sim or thread)";
    return nullptr;
}

}  // namespace

hsa_status_t Runtime::acquire() {
    std::lock_guard lock(g_init_mutex);
    if (g_refcount == UINT32_MAX)
        return HSA_STATUS_ERROR_REFCOUNT_OVERFLOW;
    if (g_refcount > 0) {
        ++g_refcount;
        return HSA_STATUS_SUCCESS;
    }
    std::string why;
    std::unique_ptr<Backend> backend = make_backend(&why);
    if (!backend) {
        // ROCr would fail silently; a stand-in had better say what is missing.
        fprintf(stderr, "hsa-sim: hsa_init: %s\n", why.c_str());
        return HSA_STATUS_ERROR_OUT_OF_RESOURCES;
    }
    debug("backend %s, %zu GPU(s)", backend->name(), backend->gpus().size());
    auto rt = std::make_unique<Runtime>(std::move(backend));
    Runtime* raw = rt.get();
    // Deliberately not owned by a static: a program that exits without
    // hsa_shut_down must not have its queues torn down under other threads
    // by exit-time destructors (ROCr leaves them too).
    instance_.store(rt.release(), std::memory_order_release);
    g_refcount = 1;
    raw->tools_.load(&g_api.root);
    return HSA_STATUS_SUCCESS;
}

hsa_status_t Runtime::release() {
    std::lock_guard lock(g_init_mutex);
    if (g_refcount == 0)
        return HSA_STATUS_ERROR_NOT_INITIALIZED;
    if (g_refcount > 1) {
        --g_refcount;
        return HSA_STATUS_SUCCESS;
    }
    Runtime* raw = get();
    // Tools may still use the runtime in OnUnload.
    raw->tools_.unload_notify();
    if (g_refcount > 1) {  // OnUnload called hsa_init
        --g_refcount;
        return HSA_STATUS_SUCCESS;
    }
    g_refcount = 0;
    std::unique_ptr<Runtime> rt(instance_.exchange(nullptr, std::memory_order_acq_rel));
    reset_api_table();
    rt->tools_.close();
    return HSA_STATUS_SUCCESS;
}

Runtime::Runtime(std::unique_ptr<Backend> backend) : backend_(std::move(backend)) {
    agents_.push_back(std::make_unique<Agent>(Agent{HSA_DEVICE_TYPE_CPU, 0, nullptr}));
    uint32_t node = 1;
    for (const GpuDesc& gpu : backend_->gpus())
        agents_.push_back(std::make_unique<Agent>(Agent{HSA_DEVICE_TYPE_GPU, node++, &gpu}));
}

Runtime::~Runtime() {
    std::lock_guard lock(queues_mutex_);
    queues_.clear();
}

Agent* Runtime::find_agent(hsa_agent_t handle) const {
    for (const auto& a : agents_) {
        if (a->handle().handle == handle.handle)
            return a.get();
    }
    return nullptr;
}

Agent* Runtime::find_region(hsa_region_t handle) const {
    for (const auto& a : agents_) {
        if (a->region().handle == handle.handle)
            return a.get();
    }
    return nullptr;
}

hsa_status_t Runtime::create_queue(const Agent& agent, uint32_t size, hsa_queue_type32_t type,
                                   CompletionSource::Callback callback, void* data,
                                   hsa_queue_t** out) {
    // Smaller requests get the smallest ring the sim maps (a page), as ROCr
    // also rounds queues up; hsa_queue_t.size reports the real size.
    const uint32_t packets = std::max(size, kQueueMinPackets);
    std::unique_ptr<HwQueue> hw;
    hsa_status_t st =
        backend_->create_queue(*agent.gpu, packets * AMDQP_SIM_PACKET_SIZE, kDefaultPriority, &hw);
    if (st != HSA_STATUS_SUCCESS)
        return st;
    auto queue = std::make_unique<Queue>(std::move(hw), packets, type, agent_compute_units(agent),
                                         callback, data);
    queue->set_doorbell(signals_.create(0, queue.get()));
    hsa_queue_t* q = queue->hsa();
    std::lock_guard lock(queues_mutex_);
    q->id = g_next_queue_id.fetch_add(1, std::memory_order_relaxed);
    queues_.emplace(q, std::move(queue));
    *out = q;
    return HSA_STATUS_SUCCESS;
}

hsa_status_t Runtime::destroy_queue(hsa_queue_t* queue) {
    std::unique_ptr<Queue> victim;
    {
        std::lock_guard lock(queues_mutex_);
        auto it = queues_.find(queue);
        if (it == queues_.end())
            return HSA_STATUS_ERROR_INVALID_QUEUE;
        victim = std::move(it->second);
        queues_.erase(it);
    }
    // The doorbell dies first: a late store then finds a dead signal.
    signals_.destroy(victim->doorbell_signal());
    victim.reset();
    return HSA_STATUS_SUCCESS;
}

Queue* Runtime::find_queue(hsa_queue_t* queue, std::unique_lock<std::mutex>* hold) {
    *hold = std::unique_lock(queues_mutex_);
    auto it = queues_.find(queue);
    return it == queues_.end() ? nullptr : it->second.get();
}

}  // namespace hsasim
