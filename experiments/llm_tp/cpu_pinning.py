# SPDX-License-Identifier: MIT
"""--pin-cores: every rank of both jobs on physical cores of its own.

Both jobs are launch bound: each rank's Python thread feeds its GPU from
one CPU. Two of them on the hyperthreads of one core, or on one core in
turn, slow each other down; that is CPU contention, which no GPU scheduler
changes, and it would be measured as GPU sharing."""

import os


def physical_cores(sysfs="/sys/devices/system/cpu"):
    """The usable CPUs grouped by physical core: [[cpu, sibling...], ...]."""
    usable = sorted(os.sched_getaffinity(0))
    cores, seen = [], set()
    for cpu in usable:
        if cpu in seen:
            continue
        path = os.path.join(sysfs, f"cpu{cpu}", "topology", "thread_siblings_list")
        try:
            with open(path) as f:
                siblings = parse_cpu_list(f.read())
        except OSError:
            siblings = [cpu]
        group = [c for c in siblings if c in usable] or [cpu]
        seen.update(group)
        cores.append(group)
    return cores


def parse_cpu_list(text):
    """'0-3,8,10-11' -> [0, 1, 2, 3, 8, 10, 11]."""
    out = []
    for part in text.strip().split(","):
        if not part:
            continue
        lo, _, hi = part.partition("-")
        out.extend(range(int(lo), int(hi or lo) + 1))
    return out


def plan(tp, cores):
    """{job: [cpus of rank 0, cpus of rank 1, ...]} for the hp and lp jobs,
    each rank on cores no other rank uses (the spare cores shared out in
    turn); None when there are fewer cores than ranks."""
    ranks = [("hp", r) for r in range(tp)] + [("lp", r) for r in range(tp)]
    if len(cores) < len(ranks):
        return None
    out = {"hp": [[] for _ in range(tp)], "lp": [[] for _ in range(tp)]}
    for i, core in enumerate(cores):
        job, rank = ranks[i % len(ranks)]
        out[job][rank].extend(core)
    return out


def apply(cpus):
    os.sched_setaffinity(0, cpus)
