// SPDX-License-Identifier: MIT
#include "errors.h"

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace amdqp {

Error::Error(errc code, const std::string& message, int sys_errno)
    : std::runtime_error(message), code_(code), sys_errno_(sys_errno) {}

const char* errc_name(errc code) noexcept {
    switch (code) {
        case errc::no_module:
            return "no_module";
        case errc::permission:
            return "permission";
        case errc::no_gpu:
            return "no_gpu";
        case errc::no_queue:
            return "no_queue";
        case errc::invalid:
            return "invalid";
        case errc::abi_mismatch:
            return "abi_mismatch";
        case errc::busy:
            return "busy";
        case errc::system:
            return "system";
    }
    return "system";
}

int errc_to_status(errc code) noexcept {
    switch (code) {
        case errc::no_module:
            return AMDQP_ERR_NO_MODULE;
        case errc::permission:
            return AMDQP_ERR_PERMISSION;
        case errc::no_gpu:
            return AMDQP_ERR_NO_GPU;
        case errc::no_queue:
            return AMDQP_ERR_NO_QUEUE;
        case errc::invalid:
            return AMDQP_ERR_INVALID;
        case errc::abi_mismatch:
            return AMDQP_ERR_ABI_MISMATCH;
        case errc::busy:
            return AMDQP_ERR_BUSY;
        case errc::system:
            return AMDQP_ERR_SYSTEM;
    }
    return AMDQP_ERR_SYSTEM;
}

std::string to_string(const QueueRef& ref) {
    char buf[96];
    if (ref.by_ring)
        std::snprintf(buf, sizeof(buf), "pid %u ring 0x%llx", ref.pid,
                      static_cast<unsigned long long>(ref.ring_va));
    else
        std::snprintf(buf, sizeof(buf), "pid %u gpu %u queue %u", ref.pid, ref.gpu_id,
                      ref.queue_id);
    return buf;
}

errc entry_errc(int error) noexcept {
    switch (-error) {
        case EPERM:
        case EACCES:
            return errc::permission;
        case ENOENT:
        case ESRCH:
            return errc::no_queue;
        case ENODEV:
            return errc::no_gpu;
        case EAGAIN:
        case EBUSY:
        case ETIME:
        case EALREADY:
            return errc::busy;
        case EINVAL:
        case E2BIG:
            return errc::invalid;
        default:
            return errc::system;
    }
}

std::string entry_message(const RefResult& result, bool suspending) {
    const std::string verb = suspending ? "suspend" : "resume";
    const std::string head = "amdqp: cannot " + verb + " " + to_string(result.ref) + ": ";
    switch (-result.error) {
        case 0:
            return "amdqp: " + verb + " " + to_string(result.ref) + ": done";
        case EPERM:
        case EACCES:
            return head +
                   "not allowed: another user's queues need CAP_SYS_ADMIN, CAP_SYS_PTRACE, or "
                   "ptrace "
                   "rights over the owner (same uid and gid, dumpable)";
        case ENOENT:
        case ESRCH:
            return head +
                   "no such queue (gone, or not visible in this pid namespace; see amdqpctl list)";
        case EALREADY:
            return head + (suspending ? "this handle already holds it suspended"
                                      : "this handle does not hold it suspended");
        case EAGAIN:
            return head + "the starvation watchdog just resumed it (cooldown); try again later";
        case ETIME:
            return head + "the firmware did not preempt it in time, so it kept running";
        case EBUSY:
            return head + "the backend could not act on it now; try again";
        case ENODEV:
            return head + "its GPU went away or was reset";
        case EINVAL:
            return head + "invalid reference (pid 0, or unknown flags)";
        default:
            return head + detail::errno_text(-result.error);
    }
}

namespace detail {

std::string errno_text(int err) {
    char buf[128];
    // GNU strerror_r returns the message, possibly not in buf.
    const char* text = strerror_r(err, buf, sizeof(buf));
    return text ? text : "unknown error";
}

Error open_error(const std::string& path, int err) {
    const char* env = ::secure_getenv("AMDQP_DEVICE");
    const std::string from_env =
        (env && *env && path == env) ? " ($AMDQP_DEVICE names it; unset it for /dev/amdqp)" : "";
    const std::string load = "load the module (sudo modprobe amdqp, or insmod kmod/amdqp.ko)";
    switch (err) {
        case ENOENT:
            return Error(errc::no_module, "amdqp: " + path + " not found: " + load + from_env, err);
        case ENXIO:
        case ENODEV:
            return Error(errc::no_module,
                         "amdqp: " + path + " exists but no driver answers: " + load + from_env,
                         err);
        case EACCES:
        case EPERM:
            return Error(errc::permission,
                         "amdqp: cannot open " + path +
                             ": permission denied (amdqp.ko creates it mode 0666: check the node's "
                             "mode, or pass it into the container with --device " +
                             path + ")",
                         err);
        default:
            return Error(errc::system, "amdqp: cannot open " + path + ": " + errno_text(err), err);
    }
}

Error call_error(const std::string& what, int err) {
    const std::string head = "amdqp: " + what + ": ";
    switch (err) {
        case EPERM:
        case EACCES:
            return Error(errc::permission, head + "permission denied", err);
        case ENOENT:
        case ESRCH:
            return Error(errc::no_queue,
                         head +
                             "no such queue (gone, or not visible in this pid namespace; see "
                             "amdqpctl list)",
                         err);
        case ENODEV:
            return Error(errc::no_gpu, head + "unknown GPU (see amdqpctl list)", err);
        case ENOTTY:
            return Error(errc::abi_mismatch,
                         head +
                             "the kernel does not know this request: the amdqp module is older "
                             "than libamdqp " AMDQP_LIBRARY_VERSION "; install matching versions",
                         err);
        case E2BIG:
            return Error(errc::abi_mismatch,
                         head +
                             "the kernel's structures are older than libamdqp's (E2BIG): "
                             "install matching versions of amdqp.ko and libamdqp",
                         err);
        case EINVAL:
            return Error(errc::invalid, head + "the kernel rejected the request as invalid", err);
        case EAGAIN:
        case EBUSY:
        case ETIME:
            return Error(errc::busy, head + errno_text(err) + "; try again", err);
        default:
            return Error(errc::system, head + errno_text(err), err);
    }
}

}  // namespace detail
}  // namespace amdqp
