// SPDX-License-Identifier: GPL-2.0
/*
 * control_path: what one suspend+resume of N queues costs on the amdqp
 * control path, as one batch ioctl pair or as one ioctl pair per queue,
 * under the HWS and the MES scheduler model of amdqp_sim.
 *
 * For each mode it creates a sim device with every latency knob at 0
 * (unmap, map, CWSR save/restore), so the times are the control path
 * itself: syscalls, amdqp's lookups, holds and reconciliation, and the
 * sim's bookkeeping; the firmware's own time per runlist update (not
 * measured here: tools/hw-validate does on real parts) is not in them.
 * The queues are idle.
 *
 * Per point it records the time of one cycle (suspend all N, then resume
 * all N; estimated from the median single ioctl, see measure()) and the
 * scheduler updates per cycle, read from AMDQP_IOC_LIST_DEVICES
 * sched_updates. It checks the model: under HWS a
 * batch is one runlist update per call whatever N, one call per queue is
 * N; under MES every queue is its own remove/add. Any deviation, or any
 * per-entry error, makes it exit 1.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <time.h>
#include <unistd.h>

#include <linux/amdqp.h>
#include <linux/amdqp_sim.h>

#define NSEC_PER_MSEC	UINT64_C(1000000)
#define NSEC_PER_SEC	UINT64_C(1000000000)
#define MAX_QUEUES	1024
#define MAX_ITERS	100000
#define MAX_SAMPLES	(1 << 18)	/* ioctl durations kept per series */

/* Durations of single ioctls of one kind (method x direction). */
struct series {
	uint64_t *ns;
	size_t n;
};

enum method { M_BATCH, M_PER_QUEUE, M_COUNT };
static const char *const method_name[M_COUNT] = { "batch", "per-queue" };

struct config {
	const char *debugfs;	/* amdqp_sim's debugfs folder */
	const char *json_path;
	const char *amdqp_path;
	const char *sim_path;
	uint32_t gpu_base;
	uint32_t max_batch;
	uint32_t xcc;
	uint32_t slots;
	uint64_t min_ns;	/* per point */
	uint32_t min_iters;
	bool hws, mes;
};

struct point {
	const char *mode;
	uint32_t batch;
	enum method method;
	double updates;		/* per cycle, over the timed loop */
	uint64_t ns;		/* one cycle, from the ioctl medians */
	uint32_t iters;
};

static struct point points[2 * 16 * M_COUNT];
static unsigned int npoints;
static unsigned int failures;

static void die(const char *fmt, ...)
	__attribute__((format(printf, 1, 2), noreturn));

static void die(const char *fmt, ...)
{
	va_list ap;

	fflush(stdout);
	fprintf(stderr, "control_path: error: ");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, "\n");
	exit(2);
}

/* A check failed in a way that stops the run: report it, exit 1. */
static void die_check(const char *fmt, ...)
	__attribute__((format(printf, 1, 2), noreturn));

static void die_check(const char *fmt, ...)
{
	va_list ap;

	fflush(stdout);
	fprintf(stderr, "control_path: FAIL: ");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, "\n");
	exit(1);
}

static void fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static void fail(const char *fmt, ...)
{
	va_list ap;

	failures++;
	fflush(stdout);
	fprintf(stderr, "control_path: FAIL: ");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, "\n");
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * NSEC_PER_SEC + ts.tv_nsec;
}

static int xioctl(int fd, unsigned long cmd, void *arg)
{
	int ret;

	do {
		ret = ioctl(fd, cmd, arg);
	} while (ret < 0 && errno == EINTR);
	return ret < 0 ? -errno : 0;
}

/* Write @val to debugfs file @dir/@name; returns 0 or -errno. */
static int dbg_write(const char *dir, const char *name, const char *val)
{
	char path[512];
	ssize_t len = strlen(val), n;
	int fd, err = 0;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	n = write(fd, val, len);
	if (n != len)
		err = n < 0 ? -errno : -EIO;
	close(fd);
	return err;
}

static void sim_device_new(const struct config *c, uint32_t gpu,
			   const char *mode)
{
	static const char *const knobs[] = {
		"unmap_latency_us", "map_latency_us", "cwsr_save_us",
		"cwsr_restore_us",
	};
	char buf[96], dir[320];
	unsigned int i;
	int ret;

	snprintf(buf, sizeof(buf), "%u %s %u %u", gpu, mode, c->xcc,
		 c->slots);
	ret = dbg_write(c->debugfs, "new_device", buf);
	if (ret == -EEXIST) {
		snprintf(buf, sizeof(buf), "%u", gpu);
		dbg_write(c->debugfs, "del_device", buf);
		snprintf(buf, sizeof(buf), "%u %s %u %u", gpu, mode, c->xcc,
			 c->slots);
		ret = dbg_write(c->debugfs, "new_device", buf);
	}
	if (ret)
		die("%s/new_device '%s': %s", c->debugfs, buf, strerror(-ret));
	snprintf(dir, sizeof(dir), "%s/gpu%u", c->debugfs, gpu);
	for (i = 0; i < sizeof(knobs) / sizeof(knobs[0]); i++) {
		ret = dbg_write(dir, knobs[i], "0");
		if (ret)
			die("%s/%s: %s", dir, knobs[i], strerror(-ret));
	}
}

static void sim_device_del(const struct config *c, uint32_t gpu)
{
	char buf[32];
	int ret;

	snprintf(buf, sizeof(buf), "%u", gpu);
	ret = dbg_write(c->debugfs, "del_device", buf);
	if (ret)
		fprintf(stderr, "control_path: warning: del_device %u: %s\n",
			gpu, strerror(-ret));
}

/*
 * amdqp's global watchdog_resumes counter (debugfs), or -1 if unreadable.
 * Nothing here is suspended for more than a few ms, so it must not move.
 */
static long long watchdog_resumes(void)
{
	char line[128];
	long long v = -1;
	FILE *f = fopen("/sys/kernel/debug/amdqp/stats", "r");

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "watchdog_resumes %lld", &v) == 1)
			break;
	fclose(f);
	return v;
}

static uint64_t sched_updates(int fd, uint32_t gpu)
{
	struct amdqp_device_info infos[64];
	struct amdqp_list_devices l = {
		.devices = (uintptr_t)infos,
		.count = 64,
		.info_size = sizeof(infos[0]),
	};
	unsigned int i;
	int ret;

	ret = xioctl(fd, AMDQP_IOC_LIST_DEVICES, &l);
	if (ret)
		die("AMDQP_IOC_LIST_DEVICES: %s", strerror(-ret));
	for (i = 0; i < l.filled; i++)
		if (infos[i].gpu_id == gpu)
			return infos[i].sched_updates;
	die("gpu %u vanished from LIST_DEVICES", gpu);
}

/* One SUSPEND or RESUME ioctl over @n refs; checks every entry. */
static void batch_call(int fd, bool suspend, struct amdqp_queue_ref *refs,
		       uint32_t n)
{
	struct amdqp_batch b = {
		.refs = (uintptr_t)refs,
		.count = n,
		.ref_size = sizeof(*refs),
	};
	uint32_t i;
	int ret;

	ret = xioctl(fd, suspend ? AMDQP_IOC_SUSPEND : AMDQP_IOC_RESUME, &b);
	if (ret)
		die("AMDQP_IOC_%s of %u: %s", suspend ? "SUSPEND" : "RESUME",
		    n, strerror(-ret));
	if (b.done == n)
		return;
	/* An entry failing is the kernel's failure, not the bench's: exit 1. */
	for (i = 0; i < n; i++)
		if (refs[i].result)
			die_check("AMDQP_IOC_%s: queue %u: %s (watchdog_resumes now %lld%s)",
			    suspend ? "SUSPEND" : "RESUME", refs[i].queue_id,
			    strerror(-refs[i].result), watchdog_resumes(),
			    !suspend && refs[i].result == -EALREADY ?
			    ": a hold this fd took vanished; only the watchdog drops holds of a live queue" :
			    "");
	die_check("AMDQP_IOC_%s: done %u of %u", suspend ? "SUSPEND" : "RESUME",
		  b.done, n);
}

/*
 * Suspend or resume the first @n queues by @m, timing each ioctl into
 * @rec (when given and not full).
 */
static void half_cycle(int fd, bool suspend, enum method m,
		       struct amdqp_queue_ref *refs, uint32_t n,
		       struct series *rec)
{
	uint32_t i, calls = m == M_BATCH ? 1 : n;

	for (i = 0; i < calls; i++) {
		uint64_t t0 = now_ns();

		if (m == M_BATCH)
			batch_call(fd, suspend, refs, n);
		else
			batch_call(fd, suspend, &refs[i], 1);
		if (rec && rec->n < MAX_SAMPLES)
			rec->ns[rec->n++] = now_ns() - t0;
	}
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* Scheduler updates one suspend (or one resume) must cause. */
static uint64_t expected_updates(bool hws, enum method m, uint32_t n)
{
	return hws && m == M_BATCH ? 1 : n;
}

static uint64_t median(struct series *sr)
{
	if (!sr->n)
		return 0;
	qsort(sr->ns, sr->n, sizeof(*sr->ns), cmp_u64);
	return sr->ns[sr->n / 2];
}

/*
 * One point: @n queues, both methods. The cycles of the two methods
 * alternate, so that both see the same machine.
 *
 * The time of a cycle is estimated from the median duration of single
 * ioctls: median(suspend ioctl) + median(resume ioctl), times the ioctls
 * per direction (1 for a batch, @n one queue at a time). In a TCG VM on a
 * shared host the vCPU is descheduled for milliseconds now and then, so
 * the wall time of a whole cycle longer than a host time slice measures
 * the host, not amdqp; single ioctls mostly fit between two stalls.
 */
static void measure(const struct config *c, int fd, uint32_t gpu,
		    const char *mode, bool hws, struct amdqp_queue_ref *refs,
		    uint32_t n, struct series rec[M_COUNT][2])
{
	uint64_t u0, u1, u2, start, elapsed = 0;
	uint64_t total[M_COUNT] = { 0, 0 };
	struct point *p[M_COUNT];
	uint32_t it = 0;
	enum method m;

	for (m = 0; m < M_COUNT; m++) {
		uint64_t want = expected_updates(hws, m, n);

		p[m] = &points[npoints++];
		p[m]->mode = mode;
		p[m]->batch = n;
		p[m]->method = m;
		rec[m][0].n = 0;
		rec[m][1].n = 0;

		/* Checked cycle (also the warm-up): updates per direction. */
		u0 = sched_updates(fd, gpu);
		half_cycle(fd, true, m, refs, n, NULL);
		u1 = sched_updates(fd, gpu);
		half_cycle(fd, false, m, refs, n, NULL);
		u2 = sched_updates(fd, gpu);
		if (u1 - u0 != want || u2 - u1 != want)
			fail("%s %s batch=%u: suspend made %" PRIu64
			     " scheduler updates, resume %" PRIu64
			     ", expected %" PRIu64 " each%s",
			     mode, method_name[m], n, u1 - u0, u2 - u1, want,
			     hws && m == M_BATCH ?
			     " (acceptance: one runlist update per device per batch)" :
			     "");
	}

	/* Warm-up (caches, TCG translation), then timed cycles, alternating. */
	for (it = 0; it < (n < 16 ? 16 : 3); it++)
		for (m = 0; m < M_COUNT; m++) {
			half_cycle(fd, true, m, refs, n, NULL);
			half_cycle(fd, false, m, refs, n, NULL);
		}
	it = 0;
	start = now_ns();
	do {
		for (m = 0; m < M_COUNT; m++) {
			u0 = sched_updates(fd, gpu);
			half_cycle(fd, true, m, refs, n, &rec[m][0]);
			half_cycle(fd, false, m, refs, n, &rec[m][1]);
			u1 = sched_updates(fd, gpu);
			total[m] += u1 - u0;
			if (u1 - u0 != 2 * expected_updates(hws, m, n))
				fail("%s %s batch=%u: a cycle made %" PRIu64
				     " scheduler updates, expected %" PRIu64,
				     mode, method_name[m], n, u1 - u0,
				     2 * expected_updates(hws, m, n));
		}
		it++;
		elapsed = now_ns() - start;
	} while (it < MAX_ITERS && (it < c->min_iters || elapsed < c->min_ns));

	for (m = 0; m < M_COUNT; m++) {
		uint32_t calls = m == M_BATCH ? 1 : n;

		p[m]->iters = it;
		p[m]->ns = calls * (median(&rec[m][0]) + median(&rec[m][1]));
		p[m]->updates = (double)total[m] / it;
	}
}

static void run_mode(const struct config *c, const char *mode, bool hws,
		     uint32_t gpu, struct series rec[M_COUNT][2])
{
	static struct amdqp_queue_ref refs[MAX_QUEUES];
	int afd, sfd, ret;
	uint32_t i, n;

	printf("[bench] %s: sim device gpu %u (%u XCC, %u slots), all latency knobs 0, %u idle queues\n",
	       mode, gpu, c->xcc, c->slots, c->max_batch);
	sim_device_new(c, gpu, mode);
	afd = open(c->amdqp_path, O_RDWR | O_CLOEXEC);
	if (afd < 0)
		die("%s: %s", c->amdqp_path, strerror(errno));
	sfd = open(c->sim_path, O_RDWR | O_CLOEXEC);
	if (sfd < 0)
		die("%s: %s", c->sim_path, strerror(errno));

	for (i = 0; i < c->max_batch; i++) {
		struct amdqp_sim_create_queue cq = {
			.gpu_id = gpu,
			.priority = 1,
		};

		ret = xioctl(sfd, AMDQP_SIM_IOC_CREATE_QUEUE, &cq);
		if (ret)
			die("AMDQP_SIM_IOC_CREATE_QUEUE #%u: %s", i,
			    strerror(-ret));
		memset(&refs[i], 0, sizeof(refs[i]));
		refs[i].pid = getpid();
		refs[i].gpu_id = gpu;
		refs[i].queue_id = cq.queue_id;
	}

	for (n = 1; n <= c->max_batch; n *= 2) {
		measure(c, afd, gpu, mode, hws, refs, n, rec);
		printf("[bench]   batch %3u: batch %8.1f us, per-queue %9.1f us\n",
		       n, points[npoints - 2].ns / 1e3,
		       points[npoints - 1].ns / 1e3);
		fflush(stdout);
	}

	close(sfd);	/* destroys the queues */
	close(afd);
	sim_device_del(c, gpu);
}

static void fmt_updates(char *buf, size_t len, double u)
{
	if (u == (double)(uint64_t)u)
		snprintf(buf, len, "%" PRIu64, (uint64_t)u);
	else
		snprintf(buf, len, "%.2f", u);
}

static void print_table(void)
{
	unsigned int i;

	printf("\nsuspend+resume of N idle queues, one cycle = calls x (median suspend ioctl +\n");
	printf("median resume ioctl); sim latency knobs 0: control path only (syscalls,\n");
	printf("amdqp core, sim bookkeeping), no firmware time\n\n");
	printf("%-4s %5s | %11s %8s | %11s %8s | %10s %9s\n", "mode", "N",
	       "batch us", "updates", "per-q us", "updates", "time ratio",
	       "upd ratio");
	printf("%-4s %5s | %11s %8s | %11s %8s | %10s %9s\n", "", "",
	       "/cycle", "/cycle", "/cycle", "/cycle", "per-q/bat",
	       "per-q/bat");
	for (i = 0; i + 1 < npoints; i += 2) {
		const struct point *b = &points[i], *q = &points[i + 1];
		char bu[24], qu[24];

		fmt_updates(bu, sizeof(bu), b->updates);
		fmt_updates(qu, sizeof(qu), q->updates);
		printf("%-4s %5u | %11.1f %8s | %11.1f %8s | %9.2fx %8.1fx\n",
		       b->mode, b->batch, b->ns / 1e3, bu, q->ns / 1e3, qu,
		       (double)q->ns / b->ns,
		       b->updates ? q->updates / b->updates : 0.0);
	}
	printf("\n");
}

static void write_json(const char *path)
{
	FILE *f = fopen(path, "w");
	unsigned int i;

	if (!f)
		die("%s: %s", path, strerror(errno));
	fprintf(f, "[");
	for (i = 0; i < npoints; i++) {
		const struct point *p = &points[i];
		char u[24];

		fmt_updates(u, sizeof(u), p->updates);
		fprintf(f, "%s\n  {\"mode\": \"%s\", \"batch\": %u, \"method\": \"%s\", \"runlist_updates\": %s, \"ns_per_call\": %" PRIu64 "}",
			i ? "," : "", p->mode, p->batch, method_name[p->method],
			u, p->ns);
	}
	fprintf(f, "\n]\n");
	if (fclose(f))
		die("%s: %s", path, strerror(errno));
	printf("[bench] wrote %s (%u records)\n", path, npoints);
}

static void usage(FILE *out)
{
	fprintf(out,
		"Usage: control_path [options]\n"
		"Times suspend+resume of 1..N queues (batch vs one call per queue) on\n"
		"amdqp_sim devices in HWS and MES mode, all latency knobs at 0.\n\n"
		"  --json PATH       write the records here (/tmp/control-path.json)\n"
		"  --max-batch N     largest batch, a power of two (256)\n"
		"  --mode M          hws, mes or both (both)\n"
		"  --min-ms MS       time per point at least (200)\n"
		"  --min-iters N     cycles per point at least (5)\n"
		"  --gpu-base ID     gpu_id of the HWS device, +1 for MES (4301)\n"
		"  --xcc N           XCCs per device (4)   --slots N (8)\n"
		"  --debugfs DIR     (/sys/kernel/debug/amdqp_sim)\n"
		"  --amdqp PATH      (/dev/amdqp)   --sim PATH (/dev/amdqp_sim)\n\n"
		"Exit status: 0 all checks held, 1 a check failed (FAIL lines), 2 error.\n");
}

static uint32_t parse_u32(const char *opt, const char *s, uint32_t lo,
			  uint32_t hi)
{
	unsigned long long v;
	char *end;

	errno = 0;
	v = strtoull(s, &end, 0);
	if (errno || end == s || *end || v < lo || v > hi)
		die("%s: '%s' is not an integer in [%u, %u]", opt, s, lo, hi);
	return (uint32_t)v;
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "json", required_argument, NULL, 'j' },
		{ "max-batch", required_argument, NULL, 'n' },
		{ "mode", required_argument, NULL, 'm' },
		{ "min-ms", required_argument, NULL, 't' },
		{ "min-iters", required_argument, NULL, 'i' },
		{ "gpu-base", required_argument, NULL, 'g' },
		{ "xcc", required_argument, NULL, 'x' },
		{ "slots", required_argument, NULL, 's' },
		{ "debugfs", required_argument, NULL, 'd' },
		{ "amdqp", required_argument, NULL, 'a' },
		{ "sim", required_argument, NULL, 'S' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct config c = {
		.debugfs = "/sys/kernel/debug/amdqp_sim",
		.json_path = "/tmp/control-path.json",
		.amdqp_path = "/dev/amdqp",
		.sim_path = "/dev/amdqp_sim",
		.gpu_base = 4301,
		.max_batch = 256,
		.xcc = 4,
		.slots = 8,
		.min_ns = 200 * NSEC_PER_MSEC,
		.min_iters = 5,
		.hws = true,
		.mes = true,
	};
	struct series rec[M_COUNT][2];
	long long wd0, wd1;
	int i, j, o;

	setvbuf(stdout, NULL, _IOLBF, 0);
	while ((o = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		switch (o) {
		case 'j':
			c.json_path = optarg;
			break;
		case 'n':
			c.max_batch = parse_u32("--max-batch", optarg, 1,
						MAX_QUEUES);
			if (c.max_batch & (c.max_batch - 1))
				die("--max-batch must be a power of two");
			break;
		case 'm':
			c.hws = !strcmp(optarg, "hws") || !strcmp(optarg, "both");
			c.mes = !strcmp(optarg, "mes") || !strcmp(optarg, "both");
			if (!c.hws && !c.mes)
				die("--mode: hws, mes or both");
			break;
		case 't':
			c.min_ns = parse_u32("--min-ms", optarg, 0, 600000) *
				   NSEC_PER_MSEC;
			break;
		case 'i':
			c.min_iters = parse_u32("--min-iters", optarg, 1,
						MAX_ITERS);
			break;
		case 'g':
			c.gpu_base = parse_u32("--gpu-base", optarg, 1,
					       UINT32_MAX - 1);
			break;
		case 'x':
			c.xcc = parse_u32("--xcc", optarg, 1, 16);
			break;
		case 's':
			c.slots = parse_u32("--slots", optarg, 1, 1024);
			break;
		case 'd':
			c.debugfs = optarg;
			break;
		case 'a':
			c.amdqp_path = optarg;
			break;
		case 'S':
			c.sim_path = optarg;
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return 2;
		}
	}
	if (optind != argc) {
		usage(stderr);
		return 2;
	}

	wd0 = watchdog_resumes();
	for (i = 0; i < M_COUNT; i++) {
		for (j = 0; j < 2; j++) {
			rec[i][j].n = 0;
			rec[i][j].ns = calloc(MAX_SAMPLES, sizeof(uint64_t));
			if (!rec[i][j].ns)
				die("out of memory");
		}
	}
	if (c.hws)
		run_mode(&c, "hws", true, c.gpu_base, rec);
	if (c.mes)
		run_mode(&c, "mes", false, c.gpu_base + 1, rec);
	for (i = 0; i < M_COUNT; i++)
		for (j = 0; j < 2; j++)
			free(rec[i][j].ns);

	wd1 = watchdog_resumes();
	if (wd0 >= 0 && wd1 > wd0)
		fail("the watchdog resumed %lld queue(s) that were suspended for far less than max_suspend_ms",
		     wd1 - wd0);

	print_table();
	write_json(c.json_path);
	if (failures) {
		printf("control_path: %u check(s) FAILED\n", failures);
		return 1;
	}
	printf("control_path: all checks passed (HWS: 1 runlist update per batch call, whatever N)\n");
	return 0;
}
