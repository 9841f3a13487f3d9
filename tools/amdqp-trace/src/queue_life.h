// Lifetimes of the queues of one process on one GPU as a capture saw them.
// Queues are named by an id (amdqp queue_id, HIP HWq address). The census needs
// the most queues live at one moment, not the number of ids ever seen: a queue
// destroyed and created again is one queue twice, not two at once. A capture
// may start after queues were created (tracing a running server): a queue whose
// first event is not its creation existed from the capture's start.
#pragma once
#include <cstdint>
#include <set>

namespace amdqp {

class QueueLife {
public:
    void create(uint64_t id);
    void destroy(uint64_t id);
    void touch(uint64_t id); // any other event that names the queue

    // Most queues live at once, those created before the capture included.
    uint32_t peak() const;
    uint32_t seen() const { return static_cast<uint32_t>(seen_.size()); }
    uint32_t live() const { return static_cast<uint32_t>(live_.size()); }
    const std::set<uint64_t> &before_capture() const { return before_; }
    const std::set<uint64_t> &live_ids() const { return live_; }
    bool capped() const { return capped_; }

private:
    bool room();
    std::set<uint64_t> live_, seen_, before_;
    // Queues created in the capture and live, minus the pre-capture queues
    // destroyed so far. The pre-capture ones are all live at the start, so the
    // peak is their number plus the largest value this takes.
    int64_t level_ = 0, best_ = 0;
    bool capped_ = false;
};

} // namespace amdqp
