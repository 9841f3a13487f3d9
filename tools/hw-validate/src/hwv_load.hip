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
 *
 * Helper modes for hwv (which starts them, kills them and reaps them):
 *
 *   hwv_load --orphan SHM_PATH SECONDS
 *	creates one queue, then a CLONE_VM child that shares the address
 *	space, publishes both pids and waits to be SIGKILLed: once hwv has
 *	reaped this thread group, the child alone keeps the mm (and with it
 *	the KFD process and its queues) alive until hwv kills it too.
 *   hwv_load --hog SHM_PATH SECONDS
 *	stream 0 runs one kernel that spins until SECONDS pass (progress[0]
 *	counts its rounds): without CWSR it cannot be preempted; stream 1
 *	keeps short kernels queued (progress[1]) so a remapped queue shows.
 *	A runtime that aborts on the queue error amdkfd raises stays parked
 *	instead, so the owner outlives the reset for the checks.
 */
#include <hip/hip_runtime.h>

#include <fcntl.h>
#include <sched.h>
#include <signal.h>
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
	volatile uint64_t child;				/* --orphan: mm keeper */
	volatile uint64_t stop;				/* --hog: spin ends */
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

/*
 * One wave that only ends when the host says so: a queue running it cannot
 * be drained, and without CWSR not preempted either.
 */
__global__ void spin(volatile uint64_t *progress, volatile uint64_t *stop)
{
	uint64_t x = threadIdx.x;

	while (!*stop) {
		for (int i = 0; i < 100000; i++)
			x = x * 6364136223846793005ULL + 1;
		if (threadIdx.x == 0) {
			__threadfence_system();
			/* x keeps the delay loop from being optimised away */
			*progress = *progress + 1 + (x == 1);
			__threadfence_system();
		}
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

static struct hwv_shm *open_shm(const char *path, struct hwv_shm **dshm)
{
	int fd = open(path, O_RDWR | O_CREAT, 0644);

	if (fd < 0 || ftruncate(fd, 4096)) {
		perror(path);
		exit(2);
	}
	struct hwv_shm *shm = (struct hwv_shm *)mmap(NULL, 4096,
		PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (shm == MAP_FAILED)
		exit(2);
	close(fd);
	memset((void *)shm, 0, 4096);
	CHECK(hipHostRegister((void *)shm, 4096, hipHostRegisterMapped));
	CHECK(hipHostGetDevicePointer((void **)dshm, (void *)shm, 0));
	return shm;
}

static int keeper_seconds;

/*
 * The CLONE_VM child: it shares the leader's memory (stack, TLS), so it
 * does nothing but sleep and exit by itself should hwv never kill it.
 */
static int keep_mm(void *)
{
	for (int s = keeper_seconds; s > 0; s--)
		sleep(1);
	_exit(0);
}

static int orphan_main(const char *path, int secs)
{
	struct hwv_shm *dshm, *shm = open_shm(path, &dshm);
	hipStream_t st;
	uint64_t *out;

	CHECK(hipMalloc((void **)&out, sizeof(uint64_t)));
	CHECK(hipStreamCreateWithFlags(&st, hipStreamNonBlocking));
	hipLaunchKernelGGL(work, dim3(BLOCKS), dim3(THREADS), 0, st, out,
			   &dshm->progress[0], 1000);
	CHECK(hipStreamSynchronize(st));

	const size_t stack_size = 256 * 1024;
	void *stack = mmap(NULL, stack_size, PROT_READ | PROT_WRITE,
			   MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK, -1, 0);
	if (stack == MAP_FAILED)
		return 2;
	keeper_seconds = secs;
	/* no CLONE_THREAD: a thread group of its own that shares the mm */
	int child = clone(keep_mm, (char *)stack + stack_size,
			  CLONE_VM | SIGCHLD, NULL);
	if (child < 0) {
		perror("clone");
		return 2;
	}
	shm->child = child;
	shm->pid = getpid();
	shm->ready = 1;
	/*
	 * Never exit(): the runtime's exit handlers would destroy the queues,
	 * and the case under test is a thread group that dies without that.
	 */
	alarm(secs);
	for (;;)
		pause();
}

static void park(int)
{
	for (;;)
		pause();
}

static int hog_main(const char *path, double secs)
{
	struct hwv_shm *dshm, *shm = open_shm(path, &dshm);
	hipStream_t st[2];
	uint64_t *out;
	uint64_t launches = 0;

	/* HIP aborts on a queue error; the checks need the owner alive. */
	signal(SIGABRT, park);
	CHECK(hipMalloc((void **)&out, sizeof(uint64_t)));
	for (int s = 0; s < 2; s++)
		CHECK(hipStreamCreateWithFlags(&st[s], hipStreamNonBlocking));
	hipLaunchKernelGGL(spin, dim3(1), dim3(64), 0, st[0],
			   &dshm->progress[0], &dshm->stop);
	shm->pid = getpid();
	shm->ready = 1;
	double end = now() + secs;

	while (now() < end) {
		if (launches - shm->progress[1] <= 64) {
			hipLaunchKernelGGL(work, dim3(BLOCKS), dim3(THREADS), 0,
					   st[1], out, &dshm->progress[1], 1000);
			launches++;
		}
		usleep(100);
	}
	shm->stop = 1;
	/* no synchronisation: after a reset the queues never finish */
	_exit(0);
}

int main(int argc, char **argv)
{
	if (argc == 4 && !strcmp(argv[1], "--orphan"))
		return orphan_main(argv[2], atoi(argv[3]));
	if (argc == 4 && !strcmp(argv[1], "--hog"))
		return hog_main(argv[2], atof(argv[3]));
	if (argc != 4) {
		fprintf(stderr, "usage: %s SHM_PATH NSTREAMS SECONDS | --orphan SHM_PATH SECONDS | --hog SHM_PATH SECONDS\n",
			argv[0]);
		return 2;
	}
	int n = atoi(argv[2]);
	double secs = atof(argv[3]);

	if (n < 1 || n > MAX_STREAMS)
		return 2;

	struct hwv_shm *dshm, *shm = open_shm(argv[1], &dshm);

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
