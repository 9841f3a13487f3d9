// SPDX-License-Identifier: MIT
#include "amdqp/policy/cu_mask.hpp"

#include <algorithm>
#include <cmath>

namespace amdqp::policy {

std::uint32_t kept_cus(double share, const CuGeometry& geo) {
    if (geo.num_xcc == 0 || geo.cu_per_xcc < 2)
        return 0;
    const std::uint32_t most = geo.cu_per_xcc - 1;
    if (!(share > 0.0))  // NaN included
        return 1;
    if (share >= 1.0)
        return most;
    // The epsilon keeps 0.8 x 20 (16.000000000000004 or 15.999...) at 16.
    const double cus = std::floor(share * static_cast<double>(geo.cu_per_xcc) + 1e-9);
    return std::clamp(static_cast<std::uint32_t>(cus), std::uint32_t{1}, most);
}

std::vector<std::uint32_t> confine_mask(double share, const CuGeometry& geo) {
    const std::uint32_t keep = kept_cus(share, geo);
    if (keep == 0)
        return {};
    const std::uint32_t words = (geo.cu_per_xcc + 31) / 32;
    std::vector<std::uint32_t> mask(static_cast<std::size_t>(geo.num_xcc) * words, 0);
    for (std::uint32_t x = 0; x < geo.num_xcc; ++x) {
        for (std::uint32_t cu = geo.cu_per_xcc - keep; cu < geo.cu_per_xcc; ++cu)
            mask[static_cast<std::size_t>(x) * words + cu / 32] |= std::uint32_t{1} << (cu % 32);
    }
    return mask;
}

}  // namespace amdqp::policy
