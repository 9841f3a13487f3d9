// SPDX-License-Identifier: MIT
//
// The functions the tagging layer puts into the runtime's API table: queue
// creation and destruction (register, forget), the signal stores that ring
// doorbells (count them: the hot path), and, with AMDQP_STREAM_PRIORITY=1,
// hsa_amd_queue_set_priority (retag). Each calls the entry it replaced.
#ifndef AMDQP_PRELOAD_HSA_HOOKS_HPP
#define AMDQP_PRELOAD_HSA_HOOKS_HPP

#include "aql_demand.hpp"
#include "hsa_table.hpp"
#include "queue_registry.hpp"

namespace amdqp::preload {

// Saves the entries of @e and replaces them with the hooks, which report to
// @registry. @stream_priority: also hsa_amd_queue_set_priority. Entries that
// hold a hook already are left as they are (never wrap twice).
void patch_table(const TableEntries& e, QueueRegistry* registry, bool stream_priority);

// What a doorbell store of @value records in the queue's slot: the write
// index, the count, the time and, from the packets it publishes in @ring
// (none when empty), the demand (exposed for tests and the benchmark).
void record_doorbell(amdqp_act_slot* slot, std::int64_t value, AqlRing ring = {}) noexcept;
// The same at CLOCK_MONOTONIC time @now_ns (tests).
void record_doorbell_at(amdqp_act_slot* slot, std::int64_t value, AqlRing ring,
                        std::uint64_t now_ns) noexcept;

}  // namespace amdqp::preload

#endif  // AMDQP_PRELOAD_HSA_HOOKS_HPP
