// SPDX-License-Identifier: GPL-2.0
/*
 * "Your own HSA program" for scripts/run-hsa-program.sh's test: written
 * against the public hsa.h only, as a ROCm developer would. It prints the
 * first GPU agent's HSA_AGENT_INFO_NAME, tries a cooperative queue, then
 * dispatches N kernel packets one at a time on a multi-producer queue and
 * waits for each. On the hsa-sim stand-in a kernel's kernel_object is its
 * run time in ns and grid/workgroup its compute slots.
 *
 *   hsa_own_program [N [KERNEL_NS [EXIT_STATUS]]]   (default 40 50000000 0)
 *
 * Exit: EXIT_STATUS when every kernel completed (to check that it is passed
 * on), 1 on an HSA error.
 */
#include <hsa/hsa.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CHECK(call)                                                          \
	do {                                                                 \
		hsa_status_t s_ = (call);                                    \
		if (s_ != HSA_STATUS_SUCCESS) {                              \
			fprintf(stderr, "%s: status 0x%x\n", #call, s_);     \
			return 1;                                            \
		}                                                            \
	} while (0)

static hsa_status_t first_gpu(hsa_agent_t agent, void *data)
{
	hsa_device_type_t type;

	if (hsa_agent_get_info(agent, HSA_AGENT_INFO_DEVICE, &type))
		return HSA_STATUS_ERROR;
	if (type != HSA_DEVICE_TYPE_GPU)
		return HSA_STATUS_SUCCESS;
	*(hsa_agent_t *)data = agent;
	return HSA_STATUS_INFO_BREAK;
}

int main(int argc, char **argv)
{
	unsigned long n = argc > 1 ? strtoul(argv[1], NULL, 10) : 40;
	uint64_t ns = argc > 2 ? strtoull(argv[2], NULL, 10) : 50000000;
	int status = argc > 3 ? atoi(argv[3]) : 0;
	hsa_agent_t gpu = { 0 };
	hsa_queue_t *q, *coop;
	hsa_signal_t done;
	char name[64] = "";
	unsigned long i;

	CHECK(hsa_init());
	hsa_iterate_agents(first_gpu, &gpu);
	if (!gpu.handle) {
		fprintf(stderr, "no GPU agent\n");
		return 1;
	}
	CHECK(hsa_agent_get_info(gpu, HSA_AGENT_INFO_NAME, name));
	printf("agent: %s\n", name);
	printf("cooperative queue: %s\n",
	       hsa_queue_create(gpu, 64, HSA_QUEUE_TYPE_COOPERATIVE, NULL, NULL,
				UINT32_MAX, UINT32_MAX, &coop) ==
			       HSA_STATUS_SUCCESS ? "created" : "refused");
	CHECK(hsa_queue_create(gpu, 64, HSA_QUEUE_TYPE_MULTI, NULL, NULL,
			       UINT32_MAX, UINT32_MAX, &q));
	CHECK(hsa_signal_create(1, 0, NULL, &done));
	fflush(stdout);

	for (i = 0; i < n; i++) {
		uint64_t idx = hsa_queue_add_write_index_relaxed(q, 1);
		hsa_kernel_dispatch_packet_t *p =
			(hsa_kernel_dispatch_packet_t *)q->base_address +
			(idx & (q->size - 1));
		uint16_t header =
			HSA_PACKET_TYPE_KERNEL_DISPATCH << HSA_PACKET_HEADER_TYPE |
			HSA_FENCE_SCOPE_SYSTEM << HSA_PACKET_HEADER_ACQUIRE_FENCE_SCOPE |
			HSA_FENCE_SCOPE_SYSTEM << HSA_PACKET_HEADER_RELEASE_FENCE_SCOPE;
		uint16_t setup = 1 << HSA_KERNEL_DISPATCH_PACKET_SETUP_DIMENSIONS;

		hsa_signal_store_relaxed(done, 1);
		memset((char *)p + 4, 0, sizeof(*p) - 4);
		p->workgroup_size_x = p->workgroup_size_y = p->workgroup_size_z = 1;
		p->grid_size_x = p->grid_size_y = p->grid_size_z = 1;
		p->kernel_object = ns;
		p->completion_signal = done;
		/* Header and setup last, in one store: the packet is published. */
		__atomic_store_n((uint32_t *)p, header | (uint32_t)setup << 16,
				 __ATOMIC_RELEASE);
		hsa_signal_store_screlease(q->doorbell_signal, (hsa_signal_value_t)idx);
		hsa_signal_wait_scacquire(done, HSA_SIGNAL_CONDITION_LT, 1,
					  UINT64_MAX, HSA_WAIT_STATE_BLOCKED);
	}
	printf("completed %lu kernels\n", n);
	CHECK(hsa_signal_destroy(done));
	CHECK(hsa_queue_destroy(q));
	CHECK(hsa_shut_down());
	return status;
}
