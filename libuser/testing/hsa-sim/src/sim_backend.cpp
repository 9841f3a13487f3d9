// SPDX-License-Identifier: MIT
// Queues on amdqp_sim devices, fed without syscalls: the ring and control
// page are mapped from /dev/amdqp_sim at the address the sim was told, and
// the sim's executor polls the doorbell in that page.
#include <fcntl.h>
#include <linux/amdqp.h>
#include <sys/ioctl.h>
#include <sys/mman.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "backend.h"
#include "util.h"

namespace hsasim {

namespace {

constexpr const char* kAmdqpPath = "/dev/amdqp";
constexpr const char* kSimPath = "/dev/amdqp_sim";

hsa_status_t status_of_errno(int err) {
    switch (err) {
        case ENOMEM:
        case ENOSPC:
        case EMFILE:
        case EAGAIN:
            return HSA_STATUS_ERROR_OUT_OF_RESOURCES;
        case EINVAL:
            return HSA_STATUS_ERROR_INVALID_ARGUMENT;
        case ENODEV:
        case ENOENT:
            return HSA_STATUS_ERROR_INVALID_AGENT;
        default:
            return HSA_STATUS_ERROR;
    }
}

class SimQueue final : public HwQueue {
  public:
    SimQueue(int fd, uint32_t gpu_id, uint32_t queue_id, Mapping mapping, uint32_t ring_bytes)
        : fd_(fd), gpu_id_(gpu_id), queue_id_(queue_id), mapping_(std::move(mapping)) {
        ring_ = static_cast<uint8_t*>(mapping_.get());
        ctl_ = reinterpret_cast<amdqp_sim_uq_ctl*>(ring_ + ring_bytes);
    }

    ~SimQueue() override {
        amdqp_sim_queue_id id{gpu_id_, queue_id_};
        if (ioctl(fd_, AMDQP_SIM_IOC_DESTROY_QUEUE, &id) != 0)
            debug("destroy queue %u on gpu %u: %s", queue_id_, gpu_id_, strerror(errno));
        // mapping_ is unmapped after the sim let go of the queue.
    }

    hsa_status_t set_priority(uint32_t priority) override {
        // queue_percentage 0 would take the queue off the hardware: keep it on.
        amdqp_sim_update_queue u{};
        u.gpu_id = gpu_id_;
        u.queue_id = queue_id_;
        u.queue_percentage = 100;
        u.priority = priority;
        if (ioctl(fd_, AMDQP_SIM_IOC_UPDATE_QUEUE, &u) != 0) {
            debug("update queue %u on gpu %u: %s", queue_id_, gpu_id_, strerror(errno));
            return status_of_errno(errno);
        }
        return HSA_STATUS_SUCCESS;
    }

    // CU i runs on slot i % slots: a device has far fewer slots than an
    // agent reports CUs, and a leading run of N CUs (what
    // hipExtStreamCreateWithCUMask users pass) becomes the first N slots.
    hsa_status_t set_cu_mask(const std::vector<uint32_t>& cus) override {
        amdqp_sim_cu_mask m{};
        m.gpu_id = gpu_id_;
        m.queue_id = queue_id_;
        if (ioctl(fd_, AMDQP_SIM_IOC_GET_CU_MASK, &m) != 0) {
            const int err = errno;  // ENOTTY: a module older than CU masks
            debug("cu mask of queue %u on gpu %u: %s", queue_id_, gpu_id_, strerror(err));
            return status_of_errno(err);
        }
        const uint32_t slots = std::max(m.num_slots, 1u);
        std::vector<uint32_t> words((slots + 31) / 32, 0);
        for (size_t cu = 0; cu < cus.size() * 32; ++cu) {
            if (cus[cu / 32] & (1u << (cu % 32))) {
                const size_t slot = cu % slots;
                words[slot / 32] |= 1u << (slot % 32);
            }
        }
        m.mask_ptr = reinterpret_cast<uintptr_t>(words.data());
        m.num_bits = static_cast<uint32_t>(words.size() * 32);
        if (ioctl(fd_, AMDQP_SIM_IOC_SET_CU_MASK, &m) != 0) {
            const int err = errno;
            debug("set cu mask of queue %u on gpu %u: %s", queue_id_, gpu_id_, strerror(err));
            return status_of_errno(err);
        }
        return HSA_STATUS_SUCCESS;
    }

  private:
    int fd_;  // owned by the backend, which outlives its queues
    uint32_t gpu_id_;
    uint32_t queue_id_;
    Mapping mapping_;
};

class SimBackend final : public Backend {
  public:
    SimBackend(UniqueFd sim, std::vector<GpuDesc> gpus)
        : sim_(std::move(sim)), gpus_(std::move(gpus)) {}

    const char* name() const override { return "sim"; }
    const std::vector<GpuDesc>& gpus() const override { return gpus_; }

    hsa_status_t create_queue(const GpuDesc& gpu, uint32_t ring_bytes, uint32_t priority,
                              std::unique_ptr<HwQueue>* out) override {
        const size_t len = size_t{ring_bytes} + AMDQP_SIM_CTL_SIZE;
        // The sim wants to know the ring's address before it can be mapped:
        // reserve one, then map the queue over the reservation.
        void* va =
            mmap(nullptr, len, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
        if (va == MAP_FAILED)
            return HSA_STATUS_ERROR_OUT_OF_RESOURCES;
        Mapping reservation(va, len);

        amdqp_sim_create_queue c{};
        c.gpu_id = gpu.gpu_id;
        c.priority = priority;
        c.ring_va = reinterpret_cast<uintptr_t>(va);
        c.ring_size = ring_bytes;
        c.flags = AMDQP_SIM_QUEUE_USERMODE;
        if (ioctl(sim_.get(), AMDQP_SIM_IOC_CREATE_QUEUE, &c) != 0) {
            int err = errno;
            debug("create queue on gpu %u: %s", gpu.gpu_id, strerror(err));
            return status_of_errno(err);
        }
        void* p = mmap(va, len, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED, sim_.get(),
                       static_cast<off_t>(c.mmap_offset));
        if (p == MAP_FAILED) {
            int err = errno;
            debug("map queue %u of gpu %u: %s", c.queue_id, gpu.gpu_id, strerror(err));
            amdqp_sim_queue_id id{gpu.gpu_id, c.queue_id};
            ioctl(sim_.get(), AMDQP_SIM_IOC_DESTROY_QUEUE, &id);
            return status_of_errno(err);
        }
        // A forked child writing into the parent's ring would corrupt the
        // parent's queue: give the child nothing there, as KFD does.
        madvise(p, len, MADV_DONTFORK);
        reservation.release();  // the same range, now owned by mapping
        Mapping mapping(p, len);
        *out = std::make_unique<SimQueue>(sim_.get(), gpu.gpu_id, c.queue_id, std::move(mapping),
                                          ring_bytes);
        return HSA_STATUS_SUCCESS;
    }

  private:
    UniqueFd sim_;
    std::vector<GpuDesc> gpus_;
};

bool list_sim_gpus(int fd, std::vector<GpuDesc>* gpus, std::string* why) {
    std::vector<amdqp_device_info> info(16);
    for (;;) {
        amdqp_list_devices l{};
        l.devices = reinterpret_cast<uintptr_t>(info.data());
        l.count = static_cast<uint32_t>(info.size());
        l.info_size = sizeof(amdqp_device_info);
        if (ioctl(fd, AMDQP_IOC_LIST_DEVICES, &l) != 0) {
            *why = std::string(kAmdqpPath) + ": AMDQP_IOC_LIST_DEVICES: " + strerror(errno);
            return false;
        }
        if (l.count > info.size()) {  // devices appeared meanwhile: ask again
            info.resize(l.count);
            continue;
        }
        const size_t stride = std::min<size_t>(l.info_size, sizeof(amdqp_device_info));
        for (uint32_t i = 0; i < l.filled; ++i) {
            amdqp_device_info d{};
            memcpy(&d, info.data() + i, stride);
            if (d.backend != AMDQP_BACKEND_SIM)
                continue;
            gpus->push_back(
                GpuDesc{d.gpu_id, d.num_xcc, "amdqp sim GPU " + std::to_string(d.gpu_id)});
        }
        break;
    }
    // KFD numbers nodes in a stable order; gpu ids are what the sim has.
    std::sort(gpus->begin(), gpus->end(),
              [](const GpuDesc& a, const GpuDesc& b) { return a.gpu_id < b.gpu_id; });
    return true;
}

}  // namespace

std::unique_ptr<Backend> make_sim_backend(std::string* why) {
    UniqueFd amdqp(open(kAmdqpPath, O_RDONLY | O_CLOEXEC));
    if (!amdqp) {
        *why = std::string(kAmdqpPath) + ": " + strerror(errno) +
               " (load amdqp and amdqp_sim, or set HSA_SIM_BACKEND=thread)";
        return nullptr;
    }
    // Queues belong to the fd they were created through: one for the whole
    // runtime instance, closed (destroying leftovers) at hsa_shut_down.
    UniqueFd sim(open(kSimPath, O_RDWR | O_CLOEXEC));
    if (!sim) {
        *why = std::string(kSimPath) + ": " + strerror(errno) +
               " (load amdqp_sim, or set HSA_SIM_BACKEND=thread)";
        return nullptr;
    }
    std::vector<GpuDesc> gpus;
    if (!list_sim_gpus(amdqp.get(), &gpus, why))
        return nullptr;
    return std::make_unique<SimBackend>(std::move(sim), std::move(gpus));
}

}  // namespace hsasim
