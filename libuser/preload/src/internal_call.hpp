// SPDX-License-Identifier: MIT
//
// Marks the tagging layer's own system calls (to /dev/amdqp, or the
// cooperative update ioctls) on this thread, so that its ioctl hook passes
// them straight through instead of observing them: no recursion into the
// registry, whose lock the caller may hold.
#ifndef AMDQP_PRELOAD_INTERNAL_CALL_HPP
#define AMDQP_PRELOAD_INTERNAL_CALL_HPP

namespace amdqp::preload {

inline thread_local bool t_internal_call = false;

class InternalCall {
  public:
    InternalCall() : saved_(t_internal_call) { t_internal_call = true; }
    ~InternalCall() { t_internal_call = saved_; }
    InternalCall(const InternalCall&) = delete;
    InternalCall& operator=(const InternalCall&) = delete;

  private:
    bool saved_;
};

}  // namespace amdqp::preload

#endif  // AMDQP_PRELOAD_INTERNAL_CALL_HPP
