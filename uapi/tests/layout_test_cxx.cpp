// SPDX-License-Identifier: GPL-2.0
// The uapi headers must be usable from C++20 as-is.
#include <linux/amdqp.h>
#include <linux/amdqp_sim.h>

#include <type_traits>

static_assert(std::is_trivially_copyable_v<amdqp_queue_ref>);
static_assert(std::is_standard_layout_v<amdqp_queue_info>);
static_assert(sizeof(amdqp_batch) == 40);

int main()
{
    return AMDQP_VERSION_MAJOR == 1 ? 0 : 1;
}
