// SPDX-License-Identifier: MIT
#include "kernel_link.hpp"

#include <cerrno>

#include <amdqp/amdqp.hpp>

namespace amdqp::preload {

namespace {

class DeviceLink final : public KernelLink {
  public:
    explicit DeviceLink(std::shared_ptr<Sys> sys) : sys_(std::move(sys)) {}

    RegisterResult register_queue(pid_t pid, std::uint64_t ring_va, int priority) override {
        RegisterResult r;
        if (!open()) {
            r.message = open_error_;
            return r;
        }
        const QueueRef ref = QueueRef::by_ring_va(static_cast<std::uint32_t>(pid), ring_va);
        try {
            device_->set_priority(ref, priority);
            r.status = RegisterResult::ok;
        } catch (const Error& e) {
            if (e.code() == errc::permission) {
                r.status = RegisterResult::refused;
                r.message = e.what();
            } else {
                // ENOENT above all: the queue's device is not one amdqp.ko
                // manages (unbound backend, or told to stay away).
                r.status = RegisterResult::not_managed;
                r.message = e.what();
                return r;
            }
        }
        try {
            if (auto q = device_->find_queue(static_cast<std::uint32_t>(pid), ring_va)) {
                r.gpu_id = q->gpu_id;
                r.queue_id = q->queue_id;
                r.priority = q->priority;
            } else if (r.status == RegisterResult::ok) {
                r.priority = static_cast<std::uint32_t>(priority);
            }
        } catch (const Error&) {
            if (r.status == RegisterResult::ok)
                r.priority = static_cast<std::uint32_t>(priority);
        }
        return r;
    }

  private:
    bool open() {
        if (device_)
            return true;
        if (!open_error_.empty())
            return false;
        try {
            device_.emplace(Device::open(default_device_path(), sys_));
            return true;
        } catch (const Error& e) {
            open_error_ = e.what();
        } catch (const std::exception& e) {
            open_error_ = std::string("amdqp: ") + e.what();
        }
        return false;
    }

    std::shared_ptr<Sys> sys_;
    std::optional<Device> device_;
    std::string open_error_;
};

}  // namespace

std::unique_ptr<KernelLink> make_device_link(std::shared_ptr<Sys> sys) {
    return std::make_unique<DeviceLink>(std::move(sys));
}

}  // namespace amdqp::preload
