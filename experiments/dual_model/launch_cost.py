#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""What does a second process cost a launch-bound one, per kernel launch?

Both LLM jobs and the small dual-model requests are launch bound: the GPU
is idle most of the time and each request's length is its host thread's
launches. This measures one process (A) issuing tiny kernels while a second
process (B) in turn:

  none   does not exist
  idle   holds a CUDA context and sleeps
  cpu    runs the same PyTorch loop on a CPU tensor (the host code path
         without the GPU)
  gpu    runs the same loop on the GPU (a second context launching)
  gapN   the gpu loop with N us of busy host time after every launch: where
         A's round trip falls back is how long the GPU lets a context that
         ran dry keep it (the simulator's timeslice dry hold)
  spinN  kernels that each busy-wait N us on the GPU, queued back to back:
         a context that never runs dry, like a collective spinning for its
         peers; A's stalled round trips are the time slice B gets while A
         waits, the time between them A's own (the simulator's slice)

A's loops, each half a window long, timed per iteration:

  async  --batch tiny kernels launched back to back, one synchronize at the
         end: host cost per launch
  sync   one tiny kernel and a synchronize: launch-to-completion round trip

Each process is pinned to a CPU of its own (--cpus), so the two are not
sharing one. Windows of --window s, --rounds x (none, idle,
cpu, gpu). Output (--out): per window A's median and mean microseconds per
launch (async) and per round trip (sync), B's launches per second.
A diagnostic of the drivers' measurements, not one of the tests.
"""
from __future__ import annotations

import argparse
import datetime
import json
import multiprocessing as mp
import os
import shlex
import statistics
import sys
import time
from typing import Any, Optional

MODES = ("none", "idle", "cpu", "gpu")


def _pin(cpu: int) -> None:
    if cpu >= 0:
        os.sched_setaffinity(0, {cpu})


def _mode_us(mode: str, prefix: str) -> Optional[float]:
    """<prefix>N -> N (us); None for any other mode name or a negative N."""
    if not mode.startswith(prefix):
        return None
    try:
        us = float(mode[len(prefix):])
    except ValueError:
        return None
    return us if us >= 0 else None


def _gap_s(mode: str) -> Optional[float]:
    """gapN -> N us in seconds; None for any other mode name."""
    us = _mode_us(mode, "gap")
    return None if us is None else us * 1e-6


def _spin_us(mode: str) -> Optional[float]:
    """spinN -> N us (N > 0); None for any other mode name."""
    us = _mode_us(mode, "spin")
    return us if us else None


def _spin_loop(torch, conn, us: float) -> int:
    """Keeps @us-long busy-wait kernels queued until told to stop."""
    # torch.cuda._sleep spins for a number of GPU clock cycles: fit them to
    # microseconds on this GPU first.
    cycles = 1_000_000
    torch.cuda.synchronize()
    t = time.perf_counter()
    torch.cuda._sleep(cycles)
    torch.cuda.synchronize()
    per_us = cycles / ((time.perf_counter() - t) * 1e6)
    k = max(1, int(us * per_us))
    # Enough kernels between synchronizes that the queue never drains.
    burst = max(2, int(100_000 / us))
    n = 0
    while not conn.poll():
        for _ in range(burst):
            torch.cuda._sleep(k)
        torch.cuda.synchronize()
        n += burst
    return n


def partner_main(conn, mode: str, device: str, cpu: int) -> None:
    """B: the partner of one window; runs until told to stop."""
    import torch

    _pin(cpu)
    dev = "cpu" if mode == "cpu" else device
    x = torch.zeros(16, device=dev)  # on the GPU: a context of its own
    if dev != "cpu":
        torch.cuda.synchronize()
    gap = _gap_s(mode) or 0.0
    conn.send("ready")
    n, t0 = 0, time.monotonic()
    spin = _spin_us(mode)
    if spin is not None:
        n = _spin_loop(torch, conn, spin)
    while spin is None and not conn.poll():
        if mode == "idle":
            time.sleep(0.01)
            continue
        for _ in range(100):
            x.add_(1.0)
            if gap:
                until = time.perf_counter() + gap
                while time.perf_counter() < until:
                    pass
        if dev != "cpu":
            torch.cuda.synchronize()
        n += 100
    conn.recv()
    conn.send(n / (time.monotonic() - t0))


STALL_US = 100.0  # a round trip this long waited for the other context


def _stalls(starts: list[float], per: list[float]) -> dict[str, Any]:
    """Round trips that waited for the other context: how long, how often."""
    slow = [(t, us) for t, us in zip(starts, per) if us > STALL_US]
    out: dict[str, Any] = {"count": len(slow)}
    if slow:
        waits = sorted(us for _, us in slow)
        out["us_p50"] = round(statistics.median(waits), 1)
        out["us_p90"] = round(waits[int(0.9 * (len(waits) - 1))], 1)
        out["us_max"] = round(waits[-1], 1)
    if len(slow) >= 2:
        # From the end of one stall to the start of the next: the slice A
        # kept (with B waiting) before the GPU went back to B.
        gaps = [(b[0] - (a[0] + a[1] * 1e-6)) * 1e6 for a, b in zip(slow, slow[1:])]
        out["between_us_p50"] = round(statistics.median(gaps), 1)
    return out


def _measure(torch, x, window: float, batch: int) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for kind in ("async", "sync"):
        per: list[float] = []
        starts: list[float] = []
        t_end = time.monotonic() + window / 2
        while time.monotonic() < t_end:
            k = batch if kind == "async" else 1
            t = time.perf_counter()
            for _ in range(k):
                x.add_(1.0)
            torch.cuda.synchronize()
            starts.append(t)
            per.append((time.perf_counter() - t) * 1e6 / k)
        out[kind] = {
            "iterations": len(per),
            "us_p50": round(statistics.median(per), 3),
            "us_mean": round(statistics.fmean(per), 3),
        }
        if kind == "sync":
            out[kind]["stalls"] = _stalls(starts, per)
    return out


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--window", type=float, default=6.0, help="seconds per window (default 6)")
    p.add_argument("--rounds", type=int, default=3, help="rounds of the four modes (default 3)")
    p.add_argument("--batch", type=int, default=200,
                   help="async: launches per synchronize (default 200)")
    p.add_argument("--device", default="cuda", help="torch device (default cuda)")
    p.add_argument("--cpus", default="auto", metavar="A,B",
                   help="CPUs A and its partner B are pinned to (default: the first "
                        "usable one and the one half way up the list; 'none': not pinned)")
    p.add_argument("--modes", default=",".join(MODES),
                   help=f"comma-separated subset of {','.join(MODES)}, gapN and spinN "
                        "(none is always run)")
    p.add_argument("--out", required=True, help="result JSON")
    a = p.parse_args()
    if a.window <= 0 or a.rounds < 1 or a.batch < 1:
        p.error("--window must be > 0, --rounds and --batch >= 1")
    wanted = a.modes.split(",")
    bad = [m for m in wanted
           if m not in MODES and _gap_s(m) is None and _spin_us(m) is None]
    if bad:
        p.error(f"--modes: unknown {', '.join(bad)}")
    modes = ["none"] + [m for m in wanted if m != "none"]
    usable = sorted(os.sched_getaffinity(0))
    if a.cpus == "none" or len(usable) < 2:
        cpu_a = cpu_b = -1
    elif a.cpus == "auto":
        cpu_a, cpu_b = usable[0], usable[len(usable) // 2]
    else:
        try:
            cpu_a, cpu_b = (int(c) for c in a.cpus.split(","))
        except ValueError:
            p.error(f"--cpus {a.cpus!r}: give two CPU numbers A,B, auto or none")
        if cpu_a not in usable or cpu_b not in usable:
            p.error(f"--cpus {a.cpus}: usable CPUs are {usable}")
    import torch

    if not torch.cuda.is_available():
        sys.stderr.write("launch_cost: error: torch sees no GPU\n")
        return 3
    _pin(cpu_a)
    x = torch.zeros(16, device=a.device)
    _measure(torch, x, 1.0, a.batch)  # warm-up
    ctx = mp.get_context("spawn")
    windows = []
    for r in range(a.rounds):
        for mode in modes:
            proc = conn = None
            if mode != "none":
                conn, child = ctx.Pipe()
                proc = ctx.Process(target=partner_main, args=(child, mode, a.device, cpu_b))
                proc.start()
                conn.recv()
                time.sleep(0.5)
            m = _measure(torch, x, a.window, a.batch)
            if conn is not None and proc is not None:
                conn.send("stop")
                m["partner_launches_per_s"] = round(conn.recv(), 1)
                proc.join()
            m.update(mode=mode, round=r + 1)
            windows.append(m)
            sys.stderr.write(
                f"[{r + 1}/{a.rounds} {mode}] async {m['async']['us_p50']:.2f} us/launch, "
                f"sync {m['sync']['us_p50']:.2f} us/round trip\n")
    summary = {}
    for mode in modes:
        ws = [w for w in windows if w["mode"] == mode]
        summary[mode] = {k: round(statistics.median(w[k]["us_p50"] for w in ws), 3)
                         for k in ("async", "sync")}
        stalls = [w["sync"]["stalls"] for w in ws if w["sync"]["stalls"]["count"]]
        summary[mode]["stalls_per_s"] = round(
            sum(w["sync"]["stalls"]["count"] for w in ws) / (len(ws) * a.window / 2), 1)
        for k in ("us_p50", "us_p90", "between_us_p50"):
            vals = [st[k] for st in stalls if k in st]
            if vals:
                summary[mode][f"stall_{k}"] = round(statistics.median(vals), 1)
    base = summary["none"]
    for mode in modes:
        summary[mode]["async_vs_none"] = round(summary[mode]["async"] / base["async"], 3)
        summary[mode]["sync_vs_none"] = round(summary[mode]["sync"] / base["sync"], 3)
    doc = {
        "experiment": "launch_cost",
        "device": torch.cuda.get_device_name(0),
        "command": shlex.join([sys.executable] + sys.argv),
        "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "versions": {"python": sys.version.split()[0], "torch": torch.__version__,
                     "cuda": torch.version.cuda, "hip": getattr(torch.version, "hip", None)},
        "config": dict(vars(a), cpu_a=cpu_a, cpu_b=cpu_b),
        "windows": windows,
        "summary": summary,
    }
    with open(a.out, "w", encoding="utf-8") as f:
        json.dump(doc, f, indent=1)
    for mode in modes:
        s = summary[mode]
        print(f"{mode:5s} async {s['async']:7.2f} us/launch ({s['async_vs_none']:.2f}x)  "
              f"sync {s['sync']:7.2f} us ({s['sync_vs_none']:.2f}x)  "
              f"stalls {s['stalls_per_s']}/s, {s.get('stall_us_p50', '-')} us "
              f"(p90 {s.get('stall_us_p90', '-')}), "
              f"{s.get('stall_between_us_p50', '-')} us apart")
    return 0


if __name__ == "__main__":
    sys.exit(main())
