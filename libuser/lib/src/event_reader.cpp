// SPDX-License-Identifier: MIT
#include <algorithm>
#include <cerrno>
#include <cstring>
#include <utility>

#include <amdqp/amdqp.hpp>

#include "errors.h"

namespace amdqp {

namespace {

// Room for this many records per read(2); the kernel's ring holds 512.
constexpr std::size_t kReadRecords = 64;
// Reads per read_some() call, so a busy stream cannot keep a caller's
// event loop in here forever.
constexpr int kMaxReads = 16;
// type + size: the part of a record every version shares.
constexpr std::size_t kRecordHead = 8;

}  // namespace

const char* event_type_name(std::uint32_t type) noexcept {
    switch (type) {
        case AMDQP_EVENT_OVERFLOW:
            return "overflow";
        case AMDQP_EVENT_QUEUE_CREATED:
            return "queue_created";
        case AMDQP_EVENT_QUEUE_DESTROYED:
            return "queue_destroyed";
        case AMDQP_EVENT_PROCESS_EXIT:
            return "process_exit";
        case AMDQP_EVENT_GPU_RESET:
            return "gpu_reset";
        case AMDQP_EVENT_PREEMPT_FAILED:
            return "preempt_failed";
        case AMDQP_EVENT_WATCHDOG:
            return "watchdog";
        case AMDQP_EVENT_DEVICE_ADDED:
            return "device_added";
        case AMDQP_EVENT_DEVICE_REMOVED:
            return "device_removed";
        case AMDQP_EVENT_PRIORITY:
            return "priority";
        case AMDQP_EVENT_CONFINE_WATCHDOG:
            return "confine_watchdog";
        default:
            return "unknown";
    }
}

EventReader::EventReader(Device device, std::uint64_t mask) : device_(std::move(device)) {
    device_.set_event_mask(mask);
}

EventReader::EventReader(EventReader&&) noexcept = default;
EventReader& EventReader::operator=(EventReader&&) noexcept = default;
EventReader::~EventReader() = default;

void EventReader::set_mask(std::uint64_t mask) {
    device_.set_event_mask(mask);
    if (!mask)
        pending_.clear();  // the kernel dropped what was queued, too
}

bool EventReader::wait(int timeout_ms) {
    struct pollfd p {};
    p.fd = device_.fd();
    p.events = POLLIN;
    const int r = device_.sys()->poll(&p, 1, timeout_ms);
    if (r == -EINTR)
        return false;
    if (r < 0)
        throw detail::call_error("poll events", -r);
    return r > 0 && (p.revents & POLLIN);
}

std::vector<Event> EventReader::read_some() {
    std::vector<Event> out;
    std::vector<unsigned char> buf(kReadRecords * sizeof(amdqp_event));
    for (int reads = 0; reads < kMaxReads; reads++) {
        // Ask poll first so that a blocking fd never blocks here.
        if (!wait(0))
            break;
        const ssize_t n = device_.sys()->read(device_.fd(), buf.data(), buf.size());
        if (n == -EAGAIN || n == -EINTR || n == 0)
            break;
        if (n < 0)
            throw detail::call_error("read events", static_cast<int>(-n));
        pending_.insert(pending_.end(), buf.begin(), buf.begin() + n);

        std::size_t off = 0;
        while (pending_.size() - off >= kRecordHead) {
            std::uint32_t type, size;
            std::memcpy(&type, &pending_[off], sizeof(type));
            std::memcpy(&size, &pending_[off + sizeof(type)], sizeof(size));
            if (size < kRecordHead || size % 8) {
                pending_.clear();
                throw Error(errc::abi_mismatch,
                            "amdqp: malformed event record (size " + std::to_string(size) +
                                "): the module and libamdqp disagree on the event ABI",
                            EPROTO);
            }
            if (pending_.size() - off < size)
                break;  // the rest of it comes with the next read
            // A newer kernel's longer record is cut to what we know; an
            // older one's shorter record reads as zeros past its end.
            amdqp_event rec{};
            std::memcpy(&rec, &pending_[off], std::min<std::size_t>(size, sizeof(rec)));
            off += size;
            if (type > AMDQP_EVENT_MAX)
                continue;
            if (type == AMDQP_EVENT_OVERFLOW)
                lost_ += rec.data;
            out.push_back({rec.type, rec.timestamp_ns, rec.pid, rec.gpu_id, rec.queue_id, rec.error,
                           rec.data});
        }
        pending_.erase(pending_.begin(), pending_.begin() + static_cast<std::ptrdiff_t>(off));
    }
    return out;
}

std::vector<Event> EventReader::read(int timeout_ms) {
    if (!wait(timeout_ms))
        return {};
    return read_some();
}

}  // namespace amdqp
