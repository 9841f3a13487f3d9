// SPDX-License-Identifier: MIT
// One runtime instance: from the first hsa_init to the matching last
// hsa_shut_down. It owns the backend, the agents, the queues and signals.
#pragma once

#include <hsa/hsa.h>

#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <vector>

#include "agent.h"
#include "backend.h"
#include "queue.h"
#include "signal.h"
#include "tools.h"

namespace hsasim {

class Runtime {
  public:
    // The live instance, or nullptr when hsa_init has not been called.
    static Runtime* get() { return instance_.load(std::memory_order_acquire); }
    static hsa_status_t acquire();  // hsa_init
    static hsa_status_t release();  // hsa_shut_down

    explicit Runtime(std::unique_ptr<Backend> backend);
    ~Runtime();
    Runtime(const Runtime&) = delete;
    Runtime& operator=(const Runtime&) = delete;

    const std::vector<std::unique_ptr<Agent>>& agents() const { return agents_; }
    Agent* find_agent(hsa_agent_t handle) const;
    Agent* find_region(hsa_region_t handle) const;
    SignalPool& signals() { return signals_; }

    hsa_status_t create_queue(const Agent& agent, uint32_t size, hsa_queue_type32_t type,
                              CompletionSource::Callback callback, void* data, hsa_queue_t** out);
    hsa_status_t destroy_queue(hsa_queue_t* queue);
    // The queue behind an hsa_queue_t, and the lock that keeps it alive.
    Queue* find_queue(hsa_queue_t* queue, std::unique_lock<std::mutex>* hold);

  private:
    static std::atomic<Runtime*> instance_;

    std::unique_ptr<Backend> backend_;
    std::vector<std::unique_ptr<Agent>> agents_;
    SignalPool signals_;
    std::mutex queues_mutex_;
    std::map<hsa_queue_t*, std::unique_ptr<Queue>> queues_;  // destroyed before the backend
    Tools tools_;
};

}  // namespace hsasim
