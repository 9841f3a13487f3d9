// SPDX-License-Identifier: MIT
// The CU mask of a confinement: from the share of a GPU that the lower
// queues keep (Actions::confine_below) and the GPU's geometry (what
// AMDQP_IOC_CONFINE's INFO reports), the words of that GPU's target for
// CONFINE BELOW. Layout (Documentation/ioctl.rst): one run of
// (cu_per_xcc + 31) / 32 words per XCC, XCC 0 first; bit i of word j of a
// run is CU 32 * j + i of that XCC.
#ifndef AMDQP_POLICY_CU_MASK_HPP
#define AMDQP_POLICY_CU_MASK_HPP

#include <cstdint>
#include <vector>

namespace amdqp::policy {

struct CuGeometry {
    std::uint32_t num_xcc = 1;
    std::uint32_t cu_per_xcc = 0;  // 0: the GPU cannot be confined
};

// CUs of each XCC the lower queues keep: share x cu_per_xcc rounded down
// (the high-priority work gets at least its demand), at least 1 (a
// dispatch spreads its work groups over every XCC of the partition: an XCC
// without a CU would never run its share) and at most cu_per_xcc - 1 (the
// high work needs one in each XCC too). 0 when the geometry cannot be
// confined (no XCC, fewer than 2 CUs per XCC).
std::uint32_t kept_cus(double share, const CuGeometry& geo);

// The mask: every XCC alike, the lower queues on its top kept_cus() CUs,
// the high-priority work finding CUs 0.. free. Contiguous CUs are the
// simplest choice; whether spreading them over the shader engines serves
// either side better is a question for hardware (tools/hw-validate).
// Empty when the geometry cannot be confined.
std::vector<std::uint32_t> confine_mask(double share, const CuGeometry& geo);

}  // namespace amdqp::policy

#endif
