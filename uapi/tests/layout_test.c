// SPDX-License-Identifier: GPL-2.0
/*
 * The uapi headers must compile on their own, with nothing but the
 * kernel's uapi types, and keep their layout: sizes and offsets are ABI.
 * Built for the host ABI and, where a 32-bit toolchain exists, for i386,
 * so that a 32-bit process on a 64-bit kernel sees the same layout.
 */
#include <linux/amdqp.h>
#include <linux/amdqp_sim.h>
#include <stddef.h>
#include <stdio.h>

#define SIZE(t, n) _Static_assert(sizeof(struct t) == (n), #t " size")
#define OFF(t, f, n) \
	_Static_assert(offsetof(struct t, f) == (n), #t "." #f " offset")

SIZE(amdqp_version, 40);
OFF(amdqp_version, features, 32);
SIZE(amdqp_device_info, 72);
OFF(amdqp_device_info, sched_updates, 24);
SIZE(amdqp_list_devices, 24);
SIZE(amdqp_queue_info, 104);	/* 96 up to ABI 1.1 */
OFF(amdqp_queue_info, ring_va, 16);
OFF(amdqp_queue_info, suspend_count, 48);
OFF(amdqp_queue_info, created_ns, 88);
OFF(amdqp_queue_info, requested, 96);
OFF(amdqp_queue_info, ceiling, 100);
SIZE(amdqp_ceiling, 24);
OFF(amdqp_ceiling, result, 16);
SIZE(amdqp_ceilings, 40);
OFF(amdqp_ceilings, reclamped, 32);
SIZE(amdqp_list_queues, 32);
SIZE(amdqp_queue_ref, 32);
OFF(amdqp_queue_ref, ring_va, 16);
OFF(amdqp_queue_ref, result, 24);
SIZE(amdqp_set_priority, 40);
SIZE(amdqp_batch, 40);
OFF(amdqp_batch, latency_ns, 32);
SIZE(amdqp_gpu_set, 48);
OFF(amdqp_gpu_set, latency_ns, 40);
SIZE(amdqp_event, 40);
OFF(amdqp_event, data, 32);
SIZE(amdqp_event_mask, 8);
_Static_assert(AMDQP_IOC_CEILINGS == 0xc028b909, "CEILINGS number");
SIZE(amdqp_cu_target, 40);
OFF(amdqp_cu_target, mask_ptr, 16);
OFF(amdqp_cu_target, result, 24);
SIZE(amdqp_confine, 56);
OFF(amdqp_confine, latency_ns, 48);
_Static_assert(AMDQP_IOC_CONFINE == 0xc038b90a, "CONFINE number");
SIZE(amdqp_sim_create_queue, 40);
OFF(amdqp_sim_create_queue, mmap_offset, 32);
SIZE(amdqp_sim_queue_id, 8);
SIZE(amdqp_sim_submit, 32);
SIZE(amdqp_sim_wait, 32);
SIZE(amdqp_sim_query, 48);
SIZE(amdqp_sim_update_queue, 16);
/* The user-mode control page mirrors amd_queue_t's index offsets. */
SIZE(amdqp_sim_uq_ctl, AMDQP_SIM_CTL_SIZE);
OFF(amdqp_sim_uq_ctl, write_index, 56);
OFF(amdqp_sim_uq_ctl, read_index, 128);
OFF(amdqp_sim_uq_ctl, doorbell, 2048);
OFF(amdqp_sim_uq_ctl, completed_ns, 2056);
OFF(amdqp_sim_uq_ctl, error, 2064);

/* Every struct is a multiple of 8 so arrays and growth stay aligned. */
_Static_assert(sizeof(struct amdqp_queue_info) % 8 == 0, "align");
_Static_assert(sizeof(struct amdqp_queue_ref) % 8 == 0, "align");
_Static_assert(AMDQP_EVENT_MASK_ALL == 0x7ff, "event mask");

int main(void)
{
	/* The ioctl numbers encode the sizes above: print them for review. */
	printf("GET_VERSION %#lx\nSUSPEND %#lx\nSUSPEND_BELOW %#lx\n",
	       (unsigned long)AMDQP_IOC_GET_VERSION,
	       (unsigned long)AMDQP_IOC_SUSPEND,
	       (unsigned long)AMDQP_IOC_SUSPEND_BELOW);
	return 0;
}
