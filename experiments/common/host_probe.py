# SPDX-License-Identifier: MIT
"""In-situ host probe: how fast this process's host path runs right now.

A GPU model can only be checked against a run whose host speed it knows.
On shared (virtual) machines another busy process can slow a launcher's
host path by tens of percent (an SMT sibling, a shared cache, a hypervisor
that moves vCPUs), and the slowdown drifts minute to minute, so it is
measured in the phase itself, inside the process that launches: a fixed
burst of tiny operators is issued through the same Python -> PyTorch
dispatcher -> driver launch path that a workload uses, timed on the host
only (up to the last launch, before the synchronize), while the workload
is idle.

The ratio of a job's median probe time in the contended phase to its
median alone is the host term amdqp-sim applies to that job's launches.
It is measured independently of the latencies it is used to predict.
"""

import statistics
import time

# 2 x OPS launches per sample: long enough to swamp timer noise (~1-4 ms
# on the lent VMs), short enough to fit in an idle gap.
OPS = 64
# Probe only when the next piece of work is at least this far away.
MIN_SLACK_S = 0.02


class HostProbe:
    """Times a fixed burst of tiny operators on @device (host time only)."""

    def __init__(self, device, period_s, clock=time.time):
        import torch
        self._torch = torch
        self.period_s = period_s
        self._clock = clock  # what take()'s @since is measured in
        self._samples = []  # (clock time, host microseconds per launch)
        self._next = 0.0
        g = torch.Generator().manual_seed(1)
        self._x = torch.rand(1, 64, generator=g).to(device)
        self._w = (torch.rand(64, 64, generator=g) * 0.01).to(device)
        self._sync = (torch.cuda.synchronize if device.type == "cuda" else (lambda: None))
        self.sample()  # first call pays for kernel loading: not recorded
        self._samples.clear()

    def sample(self):
        """One timed burst; returns host microseconds per launch."""
        torch = self._torch
        x = self._x
        t0 = time.perf_counter()
        for _ in range(OPS):
            x = torch.relu(torch.addmm(self._x, x, self._w))
        t1 = time.perf_counter()
        self._sync()
        us = (t1 - t0) * 1e6 / (2 * OPS)
        self._samples.append((self._clock(), round(us, 3)))
        return us

    def due(self, slack_s):
        """Whether the period has passed and @slack_s of idle time is left;
        if so, the next period starts now (the caller samples)."""
        if self.period_s <= 0 or time.perf_counter() < self._next or slack_s < MIN_SLACK_S:
            return False
        self._next = time.perf_counter() + self.period_s
        return True

    def maybe(self, slack_s):
        """Samples if the period has passed and @slack_s of idle time is left."""
        if not self.due(slack_s):
            return False
        self.sample()
        return True

    def take(self, since):
        """The samples taken at or after @since (the clock's time), as the
        result fields host_probe_us, host_probe_t_s (seconds after @since:
        host speed drifts within a phase) and host_probe (their summary);
        none when the probe is off. Forgets all."""
        kept = [(t, us) for t, us in self._samples if t >= since]
        self._samples = []
        if self.period_s <= 0:
            return {}
        us = [v for _, v in kept]
        return {"host_probe_us": us, "host_probe_t_s": [round(t - since, 3) for t, _ in kept],
                "host_probe": summarize(us)}


def summarize(samples_us):
    """Median, quartiles and count of one phase's probe samples."""
    if not samples_us:
        return {"n": 0, "median_us": None, "p25_us": None, "p75_us": None}
    s = sorted(samples_us)
    q = statistics.quantiles(s, n=4) if len(s) >= 2 else [s[0], s[0], s[0]]
    return {"n": len(s), "median_us": statistics.median(s), "p25_us": q[0], "p75_us": q[2]}


def ratio(alone, contended):
    """Contended median / alone median, or None when either is missing."""
    a, c = alone.get("median_us"), contended.get("median_us")
    if not a or c is None:
        return None
    return c / a
