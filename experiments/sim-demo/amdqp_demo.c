// SPDX-License-Identifier: GPL-2.0
/*
 * amdqp_demo: what taking low-priority queues off the GPU buys a
 * latency-sensitive queue, shown on an amdqp_sim device.
 *
 * A high-priority queue (this process) submits a short request (a few
 * small work items, like a small model's kernels) at a fixed rate; a
 * low-priority queue (a child process) keeps long, GPU-wide work items
 * queued all the time. The GPU only biases dispatch by priority, so a
 * request that arrives while a low-priority item runs waits for it. The
 * demo measures, phase by phase:
 *
 *   hi-alone  the request stream alone: the isolated latency
 *   lo-alone  the low-priority stream alone: its full throughput
 *   none      both, no amdqp
 *   before    both; SUSPEND_BELOW before the request's doorbell,
 *             RESUME_ALL after its completion plus a hysteresis
 *   after     both; doorbell first, then SUSPEND_BELOW (same resume)
 *
 * and prints high-priority P50/P99/max latency, low-priority throughput
 * and loss, and the scheduler updates amdqp caused, side by side.
 *
 * The low-priority queue must belong to another process: SUSPEND_BELOW
 * never suspends the caller's own queues.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <math.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <linux/amdqp.h>
#include <linux/amdqp_sim.h>

#define NSEC_PER_USEC	UINT64_C(1000)
#define NSEC_PER_MSEC	UINT64_C(1000000)
#define NSEC_PER_SEC	UINT64_C(1000000000)

/* Exit codes: 0 amdqp helped clearly, 1 it did not, 2 the demo broke. */
#define EXIT_NO_GAIN	1
#define EXIT_BROKEN	2

enum phase {
	PH_HI_ALONE,
	PH_LO_ALONE,
	PH_NONE,
	PH_BEFORE,
	PH_AFTER,
	PH_COUNT
};

static const struct {
	const char *name;	/* for --phases */
	const char *label;	/* for the table */
} phase_desc[PH_COUNT] = {
	[PH_HI_ALONE] = { "hi-alone", "high-prio alone" },
	[PH_LO_ALONE] = { "lo-alone", "low-prio alone" },
	[PH_NONE] = { "none", "both, no amdqp" },
	[PH_BEFORE] = { "before", "amdqp, suspend before doorbell" },
	[PH_AFTER] = { "after", "amdqp, suspend after doorbell" },
};

struct config {
	uint32_t gpu_id;
	const char *amdqp_path;
	const char *sim_path;
	const char *json_path;
	double rate;		/* high-priority requests per second */
	uint32_t hi_items;	/* work items per request */
	uint64_t hi_ns;		/* duration of each */
	uint32_t hi_width;	/* slots each occupies */
	uint32_t hi_prio;
	uint64_t lo_ns;
	uint32_t lo_width;
	uint32_t lo_prio;
	uint32_t lo_depth;	/* items kept queued */
	double phase_s;		/* contention phases */
	double alone_s;		/* the two baselines */
	uint64_t hyst_ns;	/* idle time before RESUME_ALL */
	double pass_ratio;	/* P99(amdqp) must be below this * P99(none) */
	unsigned int phases;	/* bit per enum phase */
};

struct result {
	bool ran;
	unsigned int requests;
	double p50_ms, p99_ms, max_ms;
	double issue_p50_ms, issue_p99_ms;	/* CPU-side issue delay */
	double e2e_p99_ms;	/* P99 counted from the due time */
	double lo_items_s;	/* < 0: no low-priority queue in this phase */
	uint64_t sched_updates;
	uint64_t preemptions;
	unsigned int suspends;	/* SUSPEND_BELOW calls */
	unsigned int resumes;	/* RESUME_ALL calls */
	uint64_t affected;	/* queues suspended, summed over calls */
	uint64_t skipped;
	uint64_t resumed;	/* holds RESUME_ALL found and dropped */
	uint64_t suspend_ns;	/* kernel-reported scheduler time, summed */
};

struct demo {
	struct config cfg;
	int amdqp_fd;
	int sim_fd;
	uint32_t hi_qid;
	uint32_t lo_qid;
	pid_t lo_pid;
	/* per request of the running phase */
	uint64_t *lat_ns;	/* latencies, in completion order */
	uint64_t *req_seq;	/* last item's seqno */
	uint64_t *req_due;	/* due time */
	uint64_t *req_issue;	/* when this process got to it */
	uint64_t *issue_ns;	/* req_issue - req_due: CPU-side delay */
	uint64_t *e2e_ns;	/* latency from the due time */
	unsigned int lat_cap;
	struct result res[PH_COUNT];
};

static void die(const char *fmt, ...)
	__attribute__((format(printf, 1, 2), noreturn));

static void die(const char *fmt, ...)
{
	va_list ap;

	fflush(stdout);
	fprintf(stderr, "amdqp_demo: error: ");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, "\n");
	exit(EXIT_BROKEN);
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * NSEC_PER_SEC + ts.tv_nsec;
}

static void sleep_until(uint64_t t)
{
	struct timespec ts = {
		.tv_sec = t / NSEC_PER_SEC,
		.tv_nsec = t % NSEC_PER_SEC,
	};

	while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) ==
	       EINTR)
		;
}

/* ioctl that retries on EINTR; returns 0 or -errno. */
static int xioctl(int fd, unsigned long cmd, void *arg)
{
	int ret;

	do {
		ret = ioctl(fd, cmd, arg);
	} while (ret < 0 && errno == EINTR);
	return ret < 0 ? -errno : 0;
}

/* ---- /dev/amdqp_sim ---------------------------------------------------- */

static uint32_t sim_create(int fd, uint32_t gpu_id, uint32_t prio)
{
	struct amdqp_sim_create_queue c = {
		.gpu_id = gpu_id,
		.priority = prio,
	};
	int ret = xioctl(fd, AMDQP_SIM_IOC_CREATE_QUEUE, &c);

	if (ret)
		die("AMDQP_SIM_IOC_CREATE_QUEUE on gpu %u: %s", gpu_id,
		    strerror(-ret));
	return c.queue_id;
}

static uint64_t sim_submit(int fd, uint32_t gpu_id, uint32_t qid,
			   uint64_t ns, uint32_t count, uint32_t width)
{
	struct amdqp_sim_submit s = {
		.gpu_id = gpu_id,
		.queue_id = qid,
		.duration_ns = ns,
		.count = count,
		.width = width,
	};
	int ret = xioctl(fd, AMDQP_SIM_IOC_SUBMIT, &s);

	if (ret)
		die("AMDQP_SIM_IOC_SUBMIT: %s", strerror(-ret));
	return s.seqno;
}

/* Returns 0 and the completion time, or -errno (-ETIMEDOUT). */
static int sim_wait(int fd, uint32_t gpu_id, uint32_t qid, uint64_t seqno,
		    uint64_t timeout_ns, uint64_t *completed_ns)
{
	struct amdqp_sim_wait w = {
		.gpu_id = gpu_id,
		.queue_id = qid,
		.seqno = seqno,
		.timeout_ns = timeout_ns,
	};
	int ret = xioctl(fd, AMDQP_SIM_IOC_WAIT, &w);

	if (!ret && completed_ns)
		*completed_ns = w.completed_ns;
	return ret;
}

static struct amdqp_sim_query sim_query(int fd, uint32_t gpu_id, uint32_t qid)
{
	struct amdqp_sim_query q = {
		.gpu_id = gpu_id,
		.queue_id = qid,
	};
	int ret = xioctl(fd, AMDQP_SIM_IOC_QUERY, &q);

	if (ret)
		die("AMDQP_SIM_IOC_QUERY gpu %u queue %u: %s", gpu_id, qid,
		    strerror(-ret));
	return q;
}

/* ---- /dev/amdqp -------------------------------------------------------- */

static struct amdqp_device_info device_info(int fd, uint32_t gpu_id)
{
	struct amdqp_device_info infos[64];
	struct amdqp_list_devices l = {
		.devices = (uintptr_t)infos,
		.count = 64,
		.info_size = sizeof(infos[0]),
	};
	unsigned int i;
	int ret;

	memset(infos, 0, sizeof(infos));
	ret = xioctl(fd, AMDQP_IOC_LIST_DEVICES, &l);
	if (ret)
		die("AMDQP_IOC_LIST_DEVICES: %s", strerror(-ret));
	for (i = 0; i < l.filled; i++)
		if (infos[i].gpu_id == gpu_id)
			return infos[i];
	die("gpu %u is not an amdqp device (create it first: echo \"%u hws 4 8\" > /sys/kernel/debug/amdqp_sim/new_device)",
	    gpu_id, gpu_id);
}

static void suspend_below(struct demo *d, struct result *r)
{
	uint32_t gpu = d->cfg.gpu_id;
	struct amdqp_gpu_set s = {
		.gpu_ids = (uintptr_t)&gpu,
		.num_gpus = 1,
		.priority = d->cfg.hi_prio,
	};
	int ret = xioctl(d->amdqp_fd, AMDQP_IOC_SUSPEND_BELOW, &s);

	if (ret)
		die("AMDQP_IOC_SUSPEND_BELOW: %s", strerror(-ret));
	r->suspends++;
	r->affected += s.affected;
	r->skipped += s.skipped;
	r->suspend_ns += s.latency_ns;
}

static void resume_all(struct demo *d, struct result *r)
{
	uint32_t gpu = d->cfg.gpu_id;
	struct amdqp_gpu_set s = {
		.gpu_ids = (uintptr_t)&gpu,
		.num_gpus = 1,
	};
	int ret = xioctl(d->amdqp_fd, AMDQP_IOC_RESUME_ALL, &s);

	if (ret)
		die("AMDQP_IOC_RESUME_ALL: %s", strerror(-ret));
	if (s.skipped)
		fprintf(stderr, "amdqp_demo: warning: RESUME_ALL failed for %u queue(s)\n",
			s.skipped);
	r->resumes++;
	r->resumed += s.affected;
}

/* ---- the low-priority process ------------------------------------------ */

/*
 * Keep cfg.lo_depth long items queued until killed. Runs in the child;
 * reports its queue id (or a negative errno) through @wfd.
 */
static void __attribute__((noreturn)) lo_child(const struct config *cfg,
					       int wfd)
{
	uint64_t last, oldest;
	int32_t msg[2] = { 0, 0 };
	uint32_t qid;
	int fd, ret;

	fd = open(cfg->sim_path, O_RDWR | O_CLOEXEC);
	if (fd < 0) {
		msg[0] = -errno;
		if (write(wfd, msg, sizeof(msg)) < 0)
			_exit(EXIT_BROKEN);
		_exit(EXIT_BROKEN);
	}
	qid = sim_create(fd, cfg->gpu_id, cfg->lo_prio);
	msg[1] = (int32_t)qid;
	if (write(wfd, msg, sizeof(msg)) != sizeof(msg))
		_exit(EXIT_BROKEN);
	close(wfd);

	last = sim_submit(fd, cfg->gpu_id, qid, cfg->lo_ns, cfg->lo_depth,
			  cfg->lo_width);
	for (;;) {
		oldest = last - cfg->lo_depth + 1;
		ret = sim_wait(fd, cfg->gpu_id, qid, oldest, NSEC_PER_SEC,
			       NULL);
		if (ret == -ETIMEDOUT)
			continue;	/* suspended for a while: fine */
		if (ret)
			die("low-priority wait: %s", strerror(-ret));
		last = sim_submit(fd, cfg->gpu_id, qid, cfg->lo_ns, 1,
				  cfg->lo_width);
	}
}

static void lo_start(struct demo *d)
{
	pid_t parent = getpid();
	int32_t msg[2];
	int p[2];

	if (pipe2(p, O_CLOEXEC))
		die("pipe: %s", strerror(errno));
	fflush(stdout);
	d->lo_pid = fork();
	if (d->lo_pid < 0)
		die("fork: %s", strerror(errno));
	if (!d->lo_pid) {
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		if (getppid() != parent)
			_exit(EXIT_BROKEN);
		close(p[0]);
		close(d->amdqp_fd);
		close(d->sim_fd);
		lo_child(&d->cfg, p[1]);
	}
	close(p[1]);
	if (read(p[0], msg, sizeof(msg)) != sizeof(msg))
		die("low-priority process died before creating its queue");
	close(p[0]);
	if (msg[0])
		die("low-priority process: open %s: %s", d->cfg.sim_path,
		    strerror(-msg[0]));
	d->lo_qid = (uint32_t)msg[1];
}

static void lo_check_alive(struct demo *d)
{
	int status;

	if (d->lo_pid > 0 && waitpid(d->lo_pid, &status, WNOHANG) == d->lo_pid) {
		d->lo_pid = 0;
		die("low-priority process exited (status 0x%x)", status);
	}
}

static void lo_stop(struct demo *d)
{
	if (d->lo_pid <= 0)
		return;
	kill(d->lo_pid, SIGKILL);
	waitpid(d->lo_pid, NULL, 0);
	d->lo_pid = 0;
}

/* ---- phases ------------------------------------------------------------- */

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* Nearest-rank percentile of a sorted array, in ms. */
static double pct_ms(const uint64_t *v, unsigned int n, double p)
{
	unsigned int rank = (unsigned int)ceil(p / 100.0 * n);

	if (!n)
		return NAN;
	if (rank < 1)
		rank = 1;
	return v[rank - 1] / 1e6;
}

/* Print a progress line every two seconds. */
static void progress(struct demo *d, const struct result *r, bool requests,
		     uint64_t t_start, uint64_t *next_report)
{
	uint64_t t = now_ns();

	if (t < *next_report)
		return;
	*next_report += 2 * NSEC_PER_SEC;
	if (requests && r->requests)
		printf("[demo]   %4.1f s: %u requests done, last %.2f ms\n",
		       (t - t_start) / 1e9, r->requests,
		       d->lat_ns[r->requests - 1] / 1e6);
	else
		printf("[demo]   %4.1f s\n", (t - t_start) / 1e9);
}

/*
 * One phase: @secs of requests at cfg.rate (none for lo-alone), with the
 * given suspension order.
 *
 * Requests arrive open-loop: each is submitted at its due time whether or
 * not earlier ones completed (they queue on the high-priority queue, like
 * requests at a server), so a slow phase cannot hide its backlog by
 * submitting less. A request's latency runs from the moment this process
 * takes it up (before any suspend call, which it therefore pays for) to
 * the completion timestamp of its last item, recorded by the simulated
 * GPU. How late the process took it up after its due time is CPU
 * scheduling noise of the machine (large in a TCG VM on a busy host); it
 * is reported apart, and the latency counted from the due time too.
 *
 * The policy in the amdqp phases is the one DESIGN.md describes: the
 * queue turns busy at the first submission while idle (suspend the lower
 * priorities on this GPU, before or after that doorbell), and idle when
 * its last request completed; RESUME_ALL follows after the hysteresis
 * unless another request arrived meanwhile.
 *
 * One thread does it all with an event loop: submit when a request is
 * due, else wait for the oldest outstanding request with a timeout at the
 * next due time or the pending resume, whichever comes first.
 */
static void run_phase(struct demo *d, enum phase ph, double secs)
{
	const struct config *c = &d->cfg;
	struct result *r = &d->res[ph];
	uint64_t period = (uint64_t)(NSEC_PER_SEC / c->rate);
	uint64_t t_start, t_end, t_lo0 = 0, next_report, next_due;
	uint64_t resume_at = 0;		/* 0: no resume pending */
	struct amdqp_device_info dev0, dev1;
	struct amdqp_sim_query lo0 = {}, lo1;
	bool requests = ph != PH_LO_ALONE;
	bool use_amdqp = ph == PH_BEFORE || ph == PH_AFTER;
	bool have_lo = ph != PH_HI_ALONE;
	bool suspended = false;
	unsigned int head = 0, tail = 0;	/* outstanding: [head, tail) */

	memset(r, 0, sizeof(*r));
	r->ran = true;
	r->lo_items_s = -1;
	printf("[demo] phase %-8s (%s): %.0f s ...\n", phase_desc[ph].name,
	       phase_desc[ph].label, secs);

	dev0 = device_info(d->amdqp_fd, c->gpu_id);
	t_start = now_ns();
	t_end = t_start + (uint64_t)(secs * NSEC_PER_SEC);
	next_report = t_start + 2 * NSEC_PER_SEC;
	next_due = t_start + period / 2;
	if (have_lo) {
		lo0 = sim_query(d->sim_fd, c->gpu_id, d->lo_qid);
		t_lo0 = now_ns();
	}

	while (requests) {
		bool arriving = next_due < t_end && tail < d->lat_cap;
		uint64_t t = now_ns(), wake = UINT64_MAX, done_ns = 0;
		int ret;

		progress(d, r, requests, t_start, &next_report);
		if (!arriving && head == tail)
			break;
		if (arriving && t >= next_due) {
			if (ph == PH_BEFORE && !suspended) {
				suspend_below(d, r);
				suspended = true;
			}
			d->req_issue[tail] = t;
			d->issue_ns[tail] = t - next_due;
			d->req_seq[tail] = sim_submit(d->sim_fd, c->gpu_id,
						      d->hi_qid, c->hi_ns,
						      c->hi_items, c->hi_width);
			d->req_due[tail++] = next_due;
			if (ph == PH_AFTER && !suspended) {
				suspend_below(d, r);
				suspended = true;
			}
			resume_at = 0;
			next_due += period;
			continue;
		}
		if (arriving)
			wake = next_due;
		if (resume_at && resume_at < wake)
			wake = resume_at;

		if (head != tail) {
			uint64_t timeout = wake == UINT64_MAX ?
					   10 * NSEC_PER_SEC :
					   wake > t ? wake - t : 1;

			ret = sim_wait(d->sim_fd, c->gpu_id, d->hi_qid,
				       d->req_seq[head], timeout, &done_ns);
			if (ret == -ETIMEDOUT && wake != UINT64_MAX)
				continue;
			if (ret)
				die("high-priority wait: %s", strerror(-ret));
			if (!done_ns)	/* too old for the sim to remember */
				done_ns = now_ns();
			d->lat_ns[r->requests] = done_ns > d->req_issue[head] ?
						 done_ns - d->req_issue[head] : 0;
			d->e2e_ns[r->requests++] = done_ns > d->req_due[head] ?
						   done_ns - d->req_due[head] : 0;
			head++;
			/*
			 * Idle: resume once the hysteresis has passed since
			 * the completion, not since this thread woke up.
			 */
			if (head == tail && suspended)
				resume_at = done_ns + c->hyst_ns;
			continue;
		}
		if (resume_at && t >= resume_at) {
			resume_all(d, r);
			suspended = false;
			resume_at = 0;
			continue;
		}
		sleep_until(wake);
	}
	if (suspended)
		resume_all(d, r);
	while (!requests && now_ns() < t_end) {
		uint64_t t = now_ns() + NSEC_PER_SEC / 4;

		sleep_until(t < t_end ? t : t_end);
		progress(d, r, requests, t_start, &next_report);
	}

	if (have_lo) {
		lo1 = sim_query(d->sim_fd, c->gpu_id, d->lo_qid);
		r->lo_items_s = (lo1.rptr - lo0.rptr) /
				((now_ns() - t_lo0) / 1e9);
		lo_check_alive(d);
	}
	dev1 = device_info(d->amdqp_fd, c->gpu_id);
	r->sched_updates = dev1.sched_updates - dev0.sched_updates;
	r->preemptions = dev1.preemptions - dev0.preemptions;

	if (r->requests) {
		qsort(d->lat_ns, r->requests, sizeof(d->lat_ns[0]), cmp_u64);
		r->p50_ms = pct_ms(d->lat_ns, r->requests, 50);
		r->p99_ms = pct_ms(d->lat_ns, r->requests, 99);
		r->max_ms = d->lat_ns[r->requests - 1] / 1e6;
		printf("[demo]   done: %u requests, P50 %.2f ms, P99 %.2f ms, max %.2f ms\n",
		       r->requests, r->p50_ms, r->p99_ms, r->max_ms);
		/* How late this process itself got to a request: VM noise. */
		qsort(d->issue_ns, tail, sizeof(d->issue_ns[0]), cmp_u64);
		qsort(d->e2e_ns, r->requests, sizeof(d->e2e_ns[0]), cmp_u64);
		r->issue_p50_ms = pct_ms(d->issue_ns, tail, 50);
		r->issue_p99_ms = pct_ms(d->issue_ns, tail, 99);
		r->e2e_p99_ms = pct_ms(d->e2e_ns, r->requests, 99);
		printf("[demo]   CPU-side issue delay (VM/host scheduling noise, not in the above): P50 %.2f ms, P99 %.2f ms; P99 from due time %.2f ms\n",
		       r->issue_p50_ms, r->issue_p99_ms, r->e2e_p99_ms);
	}
	if (use_amdqp) {
		printf("[demo]   SUSPEND_BELOW x%u (%.2f queues each, %.2f ms scheduler time each), RESUME_ALL x%u\n",
		       r->suspends,
		       r->suspends ? (double)r->affected / r->suspends : 0.0,
		       r->suspends ? r->suspend_ns / 1e6 / r->suspends : 0.0,
		       r->resumes);
		if (r->suspends && !r->affected)
			printf("[demo]   WARNING: SUSPEND_BELOW suspended nothing (%" PRIu64 " skipped)\n",
			       r->skipped);
		else if (r->skipped)
			printf("[demo]   WARNING: SUSPEND_BELOW skipped %" PRIu64 " eligible queue(s) (cooldown, permission or firmware error)\n",
			       r->skipped);
		if (r->resumed < r->affected)
			printf("[demo]   WARNING: %" PRIu64 " suspension(s) ended before RESUME_ALL (the watchdog resumed them?)\n",
			       r->affected - r->resumed);
	}
}

/* ---- report ------------------------------------------------------------- */

static void fmt_ms(char *buf, size_t len, const struct result *r, double v)
{
	if (!r->requests)
		snprintf(buf, len, "-");
	else
		snprintf(buf, len, "%.2f", v);
}

static double lo_loss(const struct demo *d, const struct result *r)
{
	const struct result *base = &d->res[PH_LO_ALONE];

	if (r->lo_items_s < 0 || !base->ran || base->lo_items_s <= 0)
		return NAN;
	return 100.0 * (1.0 - r->lo_items_s / base->lo_items_s);
}

static void print_table(const struct demo *d)
{
	int ph;

	printf("\n%-31s %8s %8s %8s %10s %8s %8s %8s\n", "phase",
	       "hi P50", "hi P99", "hi max", "lo items", "lo loss",
	       "sched", "preempt");
	printf("%-31s %8s %8s %8s %10s %8s %8s %8s\n", "",
	       "ms", "ms", "ms", "/s", "%", "updates", "ions");
	for (ph = 0; ph < PH_COUNT; ph++) {
		const struct result *r = &d->res[ph];
		char p50[16], p99[16], mx[16], thr[16], loss[16];
		double l = lo_loss(d, r);

		if (!r->ran)
			continue;
		fmt_ms(p50, sizeof(p50), r, r->p50_ms);
		fmt_ms(p99, sizeof(p99), r, r->p99_ms);
		fmt_ms(mx, sizeof(mx), r, r->max_ms);
		if (r->lo_items_s < 0)
			snprintf(thr, sizeof(thr), "-");
		else
			snprintf(thr, sizeof(thr), "%.2f", r->lo_items_s);
		if (isnan(l))
			snprintf(loss, sizeof(loss), "-");
		else
			snprintf(loss, sizeof(loss), "%.1f", l);
		printf("%-31s %8s %8s %8s %10s %8s %8" PRIu64 " %8" PRIu64 "\n",
		       phase_desc[ph].label, p50, p99, mx, thr, loss,
		       r->sched_updates, r->preemptions);
	}
	printf("\n");
}

/* Returns the exit code. */
static int print_verdict(const struct demo *d)
{
	const struct result *none = &d->res[PH_NONE];
	const struct result *alone = &d->res[PH_HI_ALONE];
	const struct result *best = NULL;
	int ph, best_ph = -1;
	double loss, noisy = 0;
	bool pass;

	for (ph = PH_BEFORE; ph <= PH_AFTER; ph++) {
		const struct result *r = &d->res[ph];

		if (r->ran && r->requests && (!best || r->p99_ms < best->p99_ms)) {
			best = r;
			best_ph = ph;
		}
	}
	if (!none->ran || !none->requests || !best) {
		printf("verdict: incomplete (run phases none and before/after to compare)\n");
		return 0;
	}
	loss = lo_loss(d, best);
	pass = best->p99_ms < d->cfg.pass_ratio * none->p99_ms;
	printf("verdict: %s: high-prio P99 %.2f ms without amdqp, %.2f ms with it (%s), %.1fx lower",
	       pass ? "PASS" : "FAIL", none->p99_ms, best->p99_ms,
	       best_ph == PH_BEFORE ? "suspend before doorbell" :
	       "suspend after doorbell",
	       best->p99_ms > 0 ? none->p99_ms / best->p99_ms : 0.0);
	if (alone->ran && alone->requests)
		printf(", %.2fx isolated", best->p99_ms / alone->p99_ms);
	printf("; P50 %.2f -> %.2f ms", none->p50_ms, best->p50_ms);
	if (!isnan(loss))
		printf("; low-prio throughput loss %.1f%% (%.1f%% without amdqp)",
		       loss, lo_loss(d, none));
	printf("\n");

	/*
	 * The amdqp phases have CPU work on each request's path (the suspend
	 * call), the others none: stalls of this machine's CPUs land in
	 * their tail only. Say so when they are as large as the effect.
	 */
	for (ph = PH_BEFORE; ph <= PH_AFTER; ph++)
		if (d->res[ph].ran && d->res[ph].issue_p99_ms > noisy)
			noisy = d->res[ph].issue_p99_ms;
	if (noisy > 5.0)
		printf("note: this machine stalls this process by up to %.1f ms (P99 issue delay); such stalls hit the suspend call on the path of each amdqp request, so P99 here measures the machine as much as amdqp, P50 less so\n",
		       noisy);
	return pass ? 0 : EXIT_NO_GAIN;
}

static void write_json(const struct demo *d)
{
	const struct config *c = &d->cfg;
	FILE *f = fopen(c->json_path, "w");
	bool first = true;
	int ph;

	if (!f)
		die("%s: %s", c->json_path, strerror(errno));
	fprintf(f, "{\"gpu_id\": %u, \"rate\": %g, \"hi_items\": %u, \"hi_us\": %" PRIu64
		", \"hi_width\": %u, \"lo_us\": %" PRIu64 ", \"lo_width\": %u, \"hysteresis_us\": %" PRIu64
		", \"phases\": [",
		c->gpu_id, c->rate, c->hi_items, c->hi_ns / NSEC_PER_USEC,
		c->hi_width, c->lo_ns / NSEC_PER_USEC, c->lo_width,
		c->hyst_ns / NSEC_PER_USEC);
	for (ph = 0; ph < PH_COUNT; ph++) {
		const struct result *r = &d->res[ph];
		double l = lo_loss(d, r);

		if (!r->ran)
			continue;
		fprintf(f, "%s\n  {\"phase\": \"%s\", \"requests\": %u", first ? "" : ",",
			phase_desc[ph].name, r->requests);
		if (r->requests)
			fprintf(f, ", \"p50_ms\": %.3f, \"p99_ms\": %.3f, \"max_ms\": %.3f, \"p99_from_due_ms\": %.3f, \"issue_delay_p50_ms\": %.3f, \"issue_delay_p99_ms\": %.3f",
				r->p50_ms, r->p99_ms, r->max_ms, r->e2e_p99_ms,
				r->issue_p50_ms, r->issue_p99_ms);
		if (r->lo_items_s >= 0)
			fprintf(f, ", \"lo_items_per_s\": %.3f", r->lo_items_s);
		if (!isnan(l))
			fprintf(f, ", \"lo_loss_pct\": %.2f", l);
		fprintf(f, ", \"sched_updates\": %" PRIu64 ", \"preemptions\": %" PRIu64
			", \"suspend_calls\": %u, \"resume_calls\": %u}",
			r->sched_updates, r->preemptions, r->suspends,
			r->resumes);
		first = false;
	}
	fprintf(f, "\n]}\n");
	if (fclose(f))
		die("%s: %s", c->json_path, strerror(errno));
}

/* ---- options ------------------------------------------------------------ */

static void usage(FILE *out)
{
	fprintf(out,
		"Usage: amdqp_demo [options]\n"
		"High-priority requests next to long low-priority work on an amdqp_sim\n"
		"device, without and with amdqp suspending the low-priority queue.\n"
		"The device must exist (debugfs amdqp_sim/new_device).\n\n"
		"  --gpu ID            sim device gpu_id (default 1)\n"
		"  --rate N            high-priority requests per second (20)\n"
		"  --hi-items N        work items per request (3)\n"
		"  --hi-us US          duration of each item (2000)\n"
		"  --hi-width N        compute slots per item, 0 = all (2)\n"
		"  --hi-prio P         high-priority queue priority (12)\n"
		"  --lo-us US          low-priority item duration (30000)\n"
		"  --lo-width N        slots per low-priority item, 0 = all (0)\n"
		"  --lo-prio P         low-priority queue priority (2)\n"
		"  --lo-depth N        low-priority items kept queued (4)\n"
		"  --phase-s S         length of each contention phase (10)\n"
		"  --alone-s S         length of each baseline phase (5)\n"
		"  --hysteresis-us US  idle time before RESUME_ALL (500)\n"
		"  --phases LIST       comma list of hi-alone,lo-alone,none,before,after\n"
		"                      (default: all, in that order)\n"
		"  --pass-ratio R      PASS if best P99 with amdqp < R * P99 without (0.5)\n"
		"  --json PATH         also write the results as JSON\n"
		"  --amdqp PATH        (/dev/amdqp)   --sim PATH  (/dev/amdqp_sim)\n\n"
		"Exit status: 0 PASS, 1 FAIL (no clear P99 gain), 2 error.\n");
}

static double parse_num(const char *opt, const char *s, double lo, double hi)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(s, &end);
	if (errno || end == s || *end || v < lo || v > hi)
		die("%s: '%s' is not a number in [%g, %g]", opt, s, lo, hi);
	return v;
}

static unsigned int parse_phases(const char *s)
{
	char *copy = strdup(s), *tok, *save = NULL;
	unsigned int mask = 0;
	int ph;

	if (!copy)
		die("out of memory");
	for (tok = strtok_r(copy, ",", &save); tok;
	     tok = strtok_r(NULL, ",", &save)) {
		for (ph = 0; ph < PH_COUNT; ph++)
			if (!strcmp(tok, phase_desc[ph].name))
				break;
		if (ph == PH_COUNT)
			die("--phases: unknown phase '%s'", tok);
		mask |= 1U << ph;
	}
	free(copy);
	return mask;
}

static void parse_args(struct config *c, int argc, char **argv)
{
	enum {
		O_GPU = 256, O_RATE, O_HI_ITEMS, O_HI_US, O_HI_WIDTH,
		O_HI_PRIO, O_LO_US, O_LO_WIDTH, O_LO_PRIO, O_LO_DEPTH,
		O_PHASE_S, O_ALONE_S, O_HYST, O_PHASES, O_PASS, O_JSON,
		O_AMDQP, O_SIM,
	};
	static const struct option opts[] = {
		{ "gpu", required_argument, NULL, O_GPU },
		{ "rate", required_argument, NULL, O_RATE },
		{ "hi-items", required_argument, NULL, O_HI_ITEMS },
		{ "hi-us", required_argument, NULL, O_HI_US },
		{ "hi-width", required_argument, NULL, O_HI_WIDTH },
		{ "hi-prio", required_argument, NULL, O_HI_PRIO },
		{ "lo-us", required_argument, NULL, O_LO_US },
		{ "lo-width", required_argument, NULL, O_LO_WIDTH },
		{ "lo-prio", required_argument, NULL, O_LO_PRIO },
		{ "lo-depth", required_argument, NULL, O_LO_DEPTH },
		{ "phase-s", required_argument, NULL, O_PHASE_S },
		{ "alone-s", required_argument, NULL, O_ALONE_S },
		{ "hysteresis-us", required_argument, NULL, O_HYST },
		{ "phases", required_argument, NULL, O_PHASES },
		{ "pass-ratio", required_argument, NULL, O_PASS },
		{ "json", required_argument, NULL, O_JSON },
		{ "amdqp", required_argument, NULL, O_AMDQP },
		{ "sim", required_argument, NULL, O_SIM },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int o;

	while ((o = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		const char *n = optarg;

		switch (o) {
		case O_GPU:
			c->gpu_id = parse_num("--gpu", n, 1, UINT32_MAX);
			break;
		case O_RATE:
			c->rate = parse_num("--rate", n, 0.1, 1000);
			break;
		case O_HI_ITEMS:
			c->hi_items = parse_num("--hi-items", n, 1, 4096);
			break;
		case O_HI_US:
			c->hi_ns = parse_num("--hi-us", n, 1, 10e6) * NSEC_PER_USEC;
			break;
		case O_HI_WIDTH:
			c->hi_width = parse_num("--hi-width", n, 0, 1024);
			break;
		case O_HI_PRIO:
			c->hi_prio = parse_num("--hi-prio", n, 1,
					       AMDQP_PRIORITY_MAX);
			break;
		case O_LO_US:
			c->lo_ns = parse_num("--lo-us", n, 1, 10e6) * NSEC_PER_USEC;
			break;
		case O_LO_WIDTH:
			c->lo_width = parse_num("--lo-width", n, 0, 1024);
			break;
		case O_LO_PRIO:
			c->lo_prio = parse_num("--lo-prio", n, 0,
					       AMDQP_PRIORITY_MAX);
			break;
		case O_LO_DEPTH:
			c->lo_depth = parse_num("--lo-depth", n, 1, 4096);
			break;
		case O_PHASE_S:
			c->phase_s = parse_num("--phase-s", n, 0.5, 3600);
			break;
		case O_ALONE_S:
			c->alone_s = parse_num("--alone-s", n, 0.5, 3600);
			break;
		case O_HYST:
			c->hyst_ns = parse_num("--hysteresis-us", n, 0, 10e6) *
				     NSEC_PER_USEC;
			break;
		case O_PHASES:
			c->phases = parse_phases(n);
			break;
		case O_PASS:
			c->pass_ratio = parse_num("--pass-ratio", n, 0.01, 1);
			break;
		case O_JSON:
			c->json_path = n;
			break;
		case O_AMDQP:
			c->amdqp_path = n;
			break;
		case O_SIM:
			c->sim_path = n;
			break;
		case 'h':
			usage(stdout);
			exit(0);
		default:
			usage(stderr);
			exit(EXIT_BROKEN);
		}
	}
	if (optind != argc) {
		usage(stderr);
		exit(EXIT_BROKEN);
	}
	if (c->lo_prio >= c->hi_prio)
		die("--lo-prio (%u) must be below --hi-prio (%u)", c->lo_prio,
		    c->hi_prio);
}

int main(int argc, char **argv)
{
	static struct demo d = {
		.cfg = {
			.gpu_id = 1,
			.amdqp_path = "/dev/amdqp",
			.sim_path = "/dev/amdqp_sim",
			.rate = 20,
			.hi_items = 3,
			.hi_ns = 2 * NSEC_PER_MSEC,
			.hi_width = 2,
			.hi_prio = 12,
			.lo_ns = 30 * NSEC_PER_MSEC,
			.lo_width = 0,
			.lo_prio = 2,
			.lo_depth = 4,
			.phase_s = 10,
			.alone_s = 5,
			.hyst_ns = 500 * NSEC_PER_USEC,
			.pass_ratio = 0.5,
			.phases = (1U << PH_COUNT) - 1,
		},
		.lo_pid = -1,
	};
	struct config *c = &d.cfg;
	struct amdqp_device_info di;
	char lo_w[16] = "all slots";
	double longest;
	int ph, rc;

	setvbuf(stdout, NULL, _IOLBF, 0);
	parse_args(c, argc, argv);

	d.amdqp_fd = open(c->amdqp_path, O_RDWR | O_CLOEXEC);
	if (d.amdqp_fd < 0)
		die("%s: %s (is amdqp.ko loaded?)", c->amdqp_path,
		    strerror(errno));
	d.sim_fd = open(c->sim_path, O_RDWR | O_CLOEXEC);
	if (d.sim_fd < 0)
		die("%s: %s (is amdqp_sim.ko loaded?)", c->sim_path,
		    strerror(errno));
	di = device_info(d.amdqp_fd, c->gpu_id);

	longest = c->phase_s > c->alone_s ? c->phase_s : c->alone_s;
	d.lat_cap = (unsigned int)(longest * c->rate) + 16;
	d.lat_ns = calloc(d.lat_cap, sizeof(*d.lat_ns));
	d.req_seq = calloc(d.lat_cap, sizeof(*d.req_seq));
	d.req_due = calloc(d.lat_cap, sizeof(*d.req_due));
	d.req_issue = calloc(d.lat_cap, sizeof(*d.req_issue));
	d.issue_ns = calloc(d.lat_cap, sizeof(*d.issue_ns));
	d.e2e_ns = calloc(d.lat_cap, sizeof(*d.e2e_ns));
	if (!d.lat_ns || !d.req_seq || !d.req_due || !d.req_issue ||
	    !d.issue_ns || !d.e2e_ns)
		die("out of memory");

	printf("[demo] gpu %u: %s, %u XCC, backend %s\n", c->gpu_id,
	       di.sched_mode == AMDQP_SCHED_MES ? "MES" : "HWS", di.num_xcc,
	       di.backend == AMDQP_BACKEND_SIM ? "sim" : "kfd");
	printf("[demo] high-prio (priority %u): %.0f req/s, each %u x %.1f ms items, width %u\n",
	       c->hi_prio, c->rate, c->hi_items, c->hi_ns / 1e6, c->hi_width);
	if (c->lo_width)
		snprintf(lo_w, sizeof(lo_w), "%u", c->lo_width);
	printf("[demo] low-prio  (priority %u): %.1f ms items, width %s, %u kept queued, in another process\n",
	       c->lo_prio, c->lo_ns / 1e6, lo_w, c->lo_depth);
	printf("[demo] amdqp phases: SUSPEND_BELOW priority %u on gpu %u per request, RESUME_ALL %.1f ms after completion\n",
	       c->hi_prio, c->gpu_id, c->hyst_ns / 1e6);

	d.hi_qid = sim_create(d.sim_fd, c->gpu_id, c->hi_prio);
	for (ph = 0; ph < PH_COUNT; ph++) {
		if (!(c->phases & (1U << ph)))
			continue;
		if (ph != PH_HI_ALONE && d.lo_pid <= 0) {
			lo_start(&d);
			/* Let its first item start, as in steady state. */
			usleep(100000);
		}
		run_phase(&d, ph, ph <= PH_LO_ALONE ? c->alone_s : c->phase_s);
	}
	lo_stop(&d);

	print_table(&d);
	rc = print_verdict(&d);
	if (c->json_path)
		write_json(&d);
	free(d.e2e_ns);
	free(d.issue_ns);
	free(d.req_issue);
	free(d.req_due);
	free(d.req_seq);
	free(d.lat_ns);
	close(d.sim_fd);
	close(d.amdqp_fd);
	return rc;
}
