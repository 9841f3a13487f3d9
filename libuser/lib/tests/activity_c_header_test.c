/* SPDX-License-Identifier: MIT */
/*
 * amdqp/activity.h is a C header too (the policy may be written in C, and
 * other languages bind to it): it must compile as strict C11 with the same
 * layout as in C++.
 */
#include <stddef.h>

#include <amdqp/activity.h>

_Static_assert(sizeof(struct amdqp_act_slot) == 64, "slot size");
_Static_assert(sizeof(struct amdqp_act_header) == 512, "header size");
_Static_assert(sizeof(struct amdqp_act_page) == AMDQP_ACT_PAGE_SIZE, "page size");
_Static_assert(offsetof(struct amdqp_act_header, coop_seq) == 72, "coop_seq");
_Static_assert(offsetof(struct amdqp_act_header, group) == 104, "group");
_Static_assert(offsetof(struct amdqp_act_header, coop_lease_ns) == 136, "coop_lease_ns");
_Static_assert(offsetof(struct amdqp_act_header, coop_expired) == 144, "coop_expired");
_Static_assert(offsetof(struct amdqp_act_slot, queue_id) == 56, "queue_id");

int main(void) {
    struct amdqp_act_page page = {0};

    return page.hdr.magic == 0 ? 0 : 1;
}
