// SPDX-License-Identifier: GPL-2.0
/*
 * hwv_load: a HIP workload for tools/hw-validate. It owns NSTREAMS user
 * queues (one per stream; run it with GPU_MAX_HW_QUEUES >= NSTREAMS) and
 * keeps each busy with short kernels that
 *  - bump a per-stream progress counter in a shared-memory file that
 *    hw-validate reads live (a suspended queue's counter must stand still),
 *  - compute a deterministic value whose total is checked at the end
 *    (suspend/resume must not corrupt results).
 *
 *   hwv_load SHM_PATH NSTREAMS SECONDS
 *
 * Exit 0 and "RESULT ok" when every result was right, 1 otherwise.
 */
#include <hip/hip_runtime.h>

#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#define MAX_STREAMS	64
#define BLOCKS		4
#define THREADS		256
#define ITERS		2000	/* inner loop per thread: ~100 us kernels */

struct hwv_shm {
	volatile uint64_t progress[MAX_STREAMS];	/* kernels finished */
	volatile uint64_t ready;			/* 1 once running */
	volatile uint64_t pid;
};

#define CHECK(x) do {							\
		hipError_t e_ = (x);					\
		if (e_ != hipSuccess) {					\
			fprintf(stderr, "%s: %s\n", #x,			\
				hipGetErrorString(e_));			\
			exit(2);					\
		}							\
	} while (0)

__global__ void work(uint64_t *out, volatile uint64_t *progress, uint64_t seed)
{
	uint64_t x = seed + blockIdx.x * blockDim.x + threadIdx.x;

	for (int i = 0; i < ITERS; i++)
		x = x * 6364136223846793005ULL + 1442695040888963407ULL;
	atomicAdd((unsigned long long *)out, (unsigned long long)(x & 0xffff));
	__syncthreads();
	/*
	 * Kernels of one stream run one after the other: a plain store from
	 * one thread is enough (no PCIe atomics needed on host memory).
	 */
	if (threadIdx.x == 0 && blockIdx.x == 0) {
		__threadfence_system();
		*progress = *progress + 1;
		__threadfence_system();
	}
}

/* What work() adds to *out for one launch, computed on the host. */
static uint64_t expected(uint64_t seed)
{
	uint64_t sum = 0;

	for (uint64_t t = 0; t < BLOCKS * THREADS; t++) {
		uint64_t x = seed + t;

		for (int i = 0; i < ITERS; i++)
			x = x * 6364136223846793005ULL + 1442695040888963407ULL;
		sum += x & 0xffff;
	}
	return sum;
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec * 1e-9;
}

int main(int argc, char **argv)
{
	if (argc != 4) {
		fprintf(stderr, "usage: %s SHM_PATH NSTREAMS SECONDS\n", argv[0]);
		return 2;
	}
	int n = atoi(argv[2]);
	double secs = atof(argv[3]);

	if (n < 1 || n > MAX_STREAMS)
		return 2;

	int fd = open(argv[1], O_RDWR | O_CREAT, 0644);

	if (fd < 0 || ftruncate(fd, 4096)) {
		perror(argv[1]);
		return 2;
	}
	struct hwv_shm *shm = (struct hwv_shm *)mmap(NULL, 4096,
		PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (shm == MAP_FAILED)
		return 2;
	memset((void *)shm, 0, 4096);
	CHECK(hipHostRegister((void *)shm, 4096, hipHostRegisterMapped));
	struct hwv_shm *dshm;
	CHECK(hipHostGetDevicePointer((void **)&dshm, (void *)shm, 0));

	hipStream_t streams[MAX_STREAMS];
	uint64_t *out;
	uint64_t launches[MAX_STREAMS] = { 0 };

	CHECK(hipMalloc((void **)&out, n * sizeof(uint64_t)));
	CHECK(hipMemset(out, 0, n * sizeof(uint64_t)));
	for (int s = 0; s < n; s++)
		CHECK(hipStreamCreateWithFlags(&streams[s], hipStreamNonBlocking));

	/* Seeds repeat per stream so the host check stays cheap. */
	uint64_t exp_one[MAX_STREAMS];

	for (int s = 0; s < n; s++)
		exp_one[s] = expected(1000 + s);

	shm->pid = getpid();
	shm->ready = 1;
	double end = now() + secs;

	while (now() < end) {
		for (int s = 0; s < n; s++) {
			/* keep at most ~64 launches queued per stream */
			if (launches[s] - shm->progress[s] > 64)
				continue;
			hipLaunchKernelGGL(work, dim3(BLOCKS), dim3(THREADS), 0,
					   streams[s], out + s,
					   &dshm->progress[s], 1000 + s);
			launches[s]++;
		}
		usleep(100);
	}
	CHECK(hipDeviceSynchronize());

	uint64_t got[MAX_STREAMS];
	int bad = 0;

	CHECK(hipMemcpy(got, out, n * sizeof(uint64_t), hipMemcpyDeviceToHost));
	for (int s = 0; s < n; s++) {
		if (got[s] != exp_one[s] * launches[s] ||
		    shm->progress[s] != launches[s]) {
			fprintf(stderr, "stream %d: got %llu want %llu (launches %llu progress %llu)\n",
				s, (unsigned long long)got[s],
				(unsigned long long)(exp_one[s] * launches[s]),
				(unsigned long long)launches[s],
				(unsigned long long)shm->progress[s]);
			bad = 1;
		}
	}
	printf("RESULT %s streams=%d launches=", bad ? "bad" : "ok", n);
	for (int s = 0; s < n; s++)
		printf("%s%llu", s ? "," : "", (unsigned long long)launches[s]);
	printf("\n");
	return bad;
}
