#include "queue_life.h"

#include <algorithm>

namespace amdqp {

namespace {
constexpr size_t kMaxQueueIds = 1 << 16; // per process and GPU
}

bool QueueLife::room() {
    if (seen_.size() < kMaxQueueIds)
        return true;
    capped_ = true;
    return false;
}

void QueueLife::create(uint64_t id) {
    if (live_.count(id))
        return; // a repeated creation event of a live queue
    if (!seen_.count(id) && !room())
        return;
    seen_.insert(id);
    live_.insert(id);
    best_ = std::max(best_, ++level_);
}

void QueueLife::destroy(uint64_t id) {
    if (!seen_.count(id)) {
        if (!room())
            return;
        // Never created in the capture: it existed when the capture started.
        seen_.insert(id);
        before_.insert(id);
    } else if (!live_.erase(id)) {
        return; // destroyed twice
    }
    --level_;
}

void QueueLife::touch(uint64_t id) {
    if (seen_.count(id) || !room())
        return;
    seen_.insert(id);
    before_.insert(id);
    live_.insert(id);
}

uint32_t QueueLife::peak() const {
    return static_cast<uint32_t>(static_cast<int64_t>(before_.size()) + best_);
}

} // namespace amdqp
