// SPDX-License-Identifier: MIT
#include "json_util.hpp"

#include <amdqp/amdqp.hpp>

#include "names.hpp"

namespace amdqpctl {

nlohmann::json row_json(const QueueRow& r) {
    return {
        {"pid", r.pid},
        {"comm", or_null(r.proc.comm)},
        {"cgroup", or_null(r.proc.cgroup)},
        {"container", or_null(r.proc.container)},
        {"gpu", r.gpu_id},
        {"queue_id", or_null(r.queue_id)},
        {"ring_va", hex(r.ring_va)},
        {"priority", r.priority},
        {"priority_name", amdqp::priority_name(static_cast<int>(r.priority))},
        {"state", r.state},
        {"suspended", r.suspended},
        {"suspended_ns", or_null(r.suspended_ns)},
        {"holders", or_null(r.holders)},
        {"requested_priority", or_null(r.requested)},
        {"ceiling", or_null(r.ceiling)},
        {"mechanism", r.mechanism},
        {"group", or_null(r.group)},
    };
}

}  // namespace amdqpctl
