#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Machine-wide stall sentinel, run next to an experiment.

A process with no GPU and no PyTorch sleeps 1 ms at a time and records every
oversleep longer than 4 ms (CLOCK_MONOTONIC, the clock the drivers use). A
stall of the whole VM (vCPUs descheduled by the hypervisor) shows up here; a
stall inside one process (its launch path, its own threads) does not. Set
against a request's host issue time (dual_model `issues_ms`), it tells the
two apart.

    stall_sentinel.py LIMIT_S OUT.json STOP_FILE

runs until LIMIT_S seconds have passed or STOP_FILE exists, then writes
{"start_end": [t0, t1], "stalls": [[t, ms], ...]} (t: monotonic seconds
when the oversleep began).
"""
import argparse
import json
import os
import time

OVERSLEEP_S = 0.004
STOP_CHECK_EVERY = 500  # iterations (~0.5 s)


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("limit_s", type=float, help="longest run (s)")
    p.add_argument("out", help="result JSON")
    p.add_argument("stop_file", help="stop when this file exists")
    a = p.parse_args()
    if a.limit_s <= 0:
        p.error("limit_s must be > 0")
    start = time.monotonic()
    end = start + a.limit_s
    stalls = []
    t = start
    i = 0
    while t < end:
        time.sleep(0.001)
        now = time.monotonic()
        if now - t > OVERSLEEP_S:
            stalls.append((round(t, 4), round((now - t) * 1e3, 2)))
        t = now
        i += 1
        if i % STOP_CHECK_EVERY == 0 and os.path.exists(a.stop_file):
            break
    with open(a.out, "w", encoding="utf-8") as f:
        json.dump({"start_end": [start, t], "stalls": stalls}, f)


if __name__ == "__main__":
    main()
