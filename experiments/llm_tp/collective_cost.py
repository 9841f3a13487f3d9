#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""What does a collective cost a TP group whose GPUs are shared with another?

The TP runs lose about one time slice per collective at TP 2 (two at TP 4)
when both jobs are active: whether the GPUs' schedulers hand the two
contexts their slices in step (the group meets on every GPU at once) or
out of step (each rank waits a slice for its peers) decides that, and the
simulator's TP model rests on it. This measures it without a model in the
way: group A, one process per GPU, runs a loop of

    <A mode> then an all-reduce of 4 KiB (a decode step's activations)

while group B, one process per GPU on the same GPUs, is the partner:

  none      does not exist
  spin      keeps 2-ms busy-wait kernels queued on every GPU, no collective:
            a context that never runs dry (launch_cost.py's spin2000)
  ring      a TP group of its own: 1-ms busy-wait then an all-reduce,
            queued ahead, so it spins in its collectives as a batch job's
            ranks do
  work      keeps 2 ms of matmuls queued on every GPU, no collective
  ringwork  ring with 1 ms of matmuls in place of the busy-wait
  ringhost  a launch-bound TP group: a few-us kernel, an all-reduce, then
            100 us of host time, as an LLM batch job's decode step runs
            (its GPU is idle most of the time, unlike the partners above)

A modes: gpuN (a busy-wait kernel of N us before each all-reduce, queued
ahead: A never runs dry), mmN (N us of matmuls instead), hostN (N us of
host busy time after each all-reduce is launched, a few-us kernel: A
runs dry between collectives, as a launch-bound decode step does).
A busy-wait (torch.cuda._sleep) spins on the SM clock, which runs on
while its context is switched out: it holds the GPU for N us of wall
time, switched out or not, where matmuls are work that waits while
switched out. The first stands for a context spinning, the second for a
layer's compute.

Per rank of A, per collective: the GPU-clock interval between the ends of
successive all-reduces (CUDA events on A's stream), p10/p50/p90, and the
share over 1 ms; rank 0's blocks in time order (start s, share of its
intervals over 1 ms, us per collective: whether the state drifts); B's
iterations per second per rank over its whole life (`b_per_s`, which
counts B running alone while A starts) and since A started
(`b_per_s_with_a`). Output --out JSON. The busy-wait's
clock and a matmul's time are fitted once on GPU 0 before any case runs.
A diagnostic of the simulator's TP model, not one of the tests.

    python3 experiments/llm_tp/collective_cost.py --tp 2 --out $OUT/cc.json
"""
from __future__ import annotations

import argparse
import datetime
import json
import multiprocessing as mp
import shlex
import socket
import statistics
import sys
import time
from typing import Any

PARTNERS = ("none", "spin", "ring", "work", "ringwork", "ringhost")
MM = 2048  # square bf16 matmul: the unit of real GPU work (~25 us on an H200)
SMALL = 1024  # float32 elements: 4 KiB, a decode step's all-reduce
B_BURST = 50  # B's iterations between synchronizes: ~100 ms of the busy partners' work


def _mode(mode: str) -> tuple[str, float]:
    """gpuN / mmN / hostN -> (kind, N us); ValueError otherwise."""
    for kind in ("gpu", "mm", "host"):
        if mode.startswith(kind):
            try:
                us = float(mode[len(kind):])
            except ValueError:
                break
            if us >= 0:
                return kind, us
    raise ValueError(f"A mode {mode!r}: want gpuN, mmN or hostN (N us >= 0)")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _clocks(out) -> None:
    """On GPU 0 alone: torch.cuda._sleep's clock cycles per microsecond, and
    the microseconds one MM x MM bf16 matmul takes.

    Measured once, before any partner runs: timed next to a partner, both
    would count the partner's time slices as their own."""
    import torch

    torch.cuda._sleep(1000)  # the first launch pays for the context
    torch.cuda.synchronize()
    fits = []
    for cycles in (2_000_000, 4_000_000):
        t = time.perf_counter()
        torch.cuda._sleep(cycles)
        torch.cuda.synchronize()
        fits.append(cycles / ((time.perf_counter() - t) * 1e6))
    a = torch.randn(MM, MM, device="cuda", dtype=torch.bfloat16)
    for _ in range(20):
        torch.mm(a, a)
    torch.cuda.synchronize()
    n = 400
    t = time.perf_counter()
    for _ in range(n):
        torch.mm(a, a)
    torch.cuda.synchronize()
    out.put((max(fits), (time.perf_counter() - t) * 1e6 / n))


class _Busy:
    """GPU time of a given length: a busy-wait that holds the GPU for N us
    of wall time (`hold`; it ends N us after it began even when switched
    out, as _sleep spins on the SM clock) or matmuls that are N us of work
    on an idle GPU (`work`). On the CPU both are host busy time."""

    def __init__(self, torch, device: str, clocks: tuple[float, float]):
        self.torch, self.cuda = torch, device != "cpu"
        self.per_us, self.mm_us = clocks
        self.a = torch.randn(MM, MM, device=device, dtype=torch.bfloat16) if self.cuda else None

    def hold(self, us: float) -> None:
        if us <= 0:
            return
        if self.cuda:
            self.torch.cuda._sleep(max(1, int(us * self.per_us)))
        else:
            _host_busy(us)

    def work(self, us: float) -> None:
        if us <= 0:
            return
        if not self.cuda:
            _host_busy(us)
            return
        for _ in range(max(1, round(us / self.mm_us))):
            self.torch.mm(self.a, self.a)


def _host_busy(us: float) -> None:
    until = time.perf_counter() + us * 1e-6
    while time.perf_counter() < until:
        pass


def _init(torch, dist, device: str, port: int, rank: int, tp: int) -> str:
    dev = f"cuda:{rank}" if device == "cuda" else "cpu"
    if device == "cuda":
        torch.cuda.set_device(rank)
    dist.init_process_group("nccl" if device == "cuda" else "gloo",
                            init_method=f"tcp://127.0.0.1:{port}", rank=rank, world_size=tp)
    return dev


def _agree(torch, dist, dev: str, stop: bool) -> bool:
    """Every rank stops when rank 0 says so (a collective of its own)."""
    flag = torch.tensor([1.0 if stop else 0.0], device=dev)
    dist.broadcast(flag, 0)
    return bool(flag.item())


def _over_1ms(intervals: list[float]) -> float:
    """The share of @intervals (us, not empty) over 1 ms: waits for a slice."""
    return sum(i > 1000 for i in intervals) / len(intervals)


def _quantiles(xs: list[float]) -> dict[str, float]:
    if not xs:
        return {}
    s = sorted(xs)
    q = lambda f: s[min(len(s) - 1, int(f * len(s)))]  # noqa: E731
    return {"p10": round(q(0.1), 1), "p50": round(q(0.5), 1), "p90": round(q(0.9), 1),
            "mean": round(statistics.fmean(s), 1)}


def a_main(rank: int, tp: int, port: int, device: str, clocks: tuple[float, float],
           mode: str, seconds: float, block: int, ready, go, out) -> None:
    """One rank of group A: timed blocks of `block` collectives."""
    import torch
    import torch.distributed as dist

    dev = _init(torch, dist, device, port, rank, tp)
    kind, us = _mode(mode)
    busy = _Busy(torch, device, clocks)
    x = torch.zeros(SMALL, device=dev)
    cuda = device == "cuda"
    ready.put(rank)
    go.wait()

    def step():
        if kind == "gpu":
            busy.hold(us)
        elif kind == "mm":
            busy.work(us)
        else:
            x.add_(0.0)
        dist.all_reduce(x)
        if kind == "host":
            _host_busy(us)

    for _ in range(block):  # warm the communicator outside the timing
        step()
    if cuda:
        torch.cuda.synchronize()
    intervals, blocks, n, t_end = [], [], 0, time.monotonic() + seconds
    wall0 = time.perf_counter()
    while True:
        t_block = time.perf_counter()
        evs = []
        for _ in range(block):
            step()
            if cuda:
                ev = torch.cuda.Event(enable_timing=True)
                ev.record()
                evs.append(ev)
        if cuda:
            torch.cuda.synchronize()
            these = [a.elapsed_time(b) * 1e3 for a, b in zip(evs, evs[1:])]
            intervals += these
            # per block: start (s), share of intervals over 1 ms, us per collective
            blocks.append([round(t_block - wall0, 3),
                           round(_over_1ms(these), 2),
                           round((time.perf_counter() - t_block) / block * 1e6)])
        n += block
        if _agree(torch, dist, dev, rank == 0 and time.monotonic() >= t_end):
            break
    wall = time.perf_counter() - wall0
    out.put({"rank": rank, "collectives": n, "wall_s": round(wall, 3),
             "us_per_collective": round(wall / n * 1e6, 1),
             "interval_us": _quantiles(intervals),
             "over_1ms": round(_over_1ms(intervals), 3) if intervals else None,
             "blocks": blocks if rank == 0 else []})
    dist.destroy_process_group()


def b_main(rank: int, tp: int, port: int, device: str, clocks: tuple[float, float],
           partner: str, burst: int, ready, go, stop, out) -> None:
    """One rank of the partner group B: keeps its GPU busy until stopped.
    Reports its rate over its whole life and since A started (`go`)."""
    import torch
    import torch.distributed as dist

    dev = _init(torch, dist, device, port, rank, tp)
    busy = _Busy(torch, device, clocks)
    y = torch.zeros(SMALL, device=dev)
    ready.put(rank)
    n, t0 = 0, time.monotonic()
    n_go, t_go = 0, None
    while not _agree(torch, dist, dev, rank == 0 and stop.is_set()):
        for _ in range(burst):
            if partner == "spin":
                busy.hold(2000)
            elif partner == "work":
                busy.work(2000)
            elif partner == "ringhost":
                y.add_(0.0)
                dist.all_reduce(y)
                _host_busy(100)
            else:
                (busy.hold if partner == "ring" else busy.work)(1000)
                dist.all_reduce(y)
        if device == "cuda":
            torch.cuda.synchronize()
        n += burst
        if t_go is None and go.is_set():
            t_go = time.monotonic()
        elif t_go is not None:
            n_go += burst
    t1 = time.monotonic()
    with_a = round(n_go / (t1 - t_go), 1) if t_go is not None and t1 > t_go else None
    out.put({"rank": rank, "per_s": round(n / (t1 - t0), 1), "per_s_with_a": with_a})
    dist.destroy_process_group()


def run_case(tp: int, device: str, clocks: tuple[float, float], mode: str, partner: str,
             seconds: float, block: int, b_burst: int = B_BURST) -> dict[str, Any]:
    ctx = mp.get_context("spawn")
    ready, a_out, b_out = ctx.Queue(), ctx.Queue(), ctx.Queue()
    go, stop = ctx.Event(), ctx.Event()
    procs_b = []
    if partner != "none":
        port_b = _free_port()
        procs_b = [ctx.Process(target=b_main, args=(r, tp, port_b, device, clocks, partner,
                                                    b_burst, ready, go, stop, b_out))
                   for r in range(tp)]
    port_a = _free_port()
    procs_a = [ctx.Process(target=a_main, args=(r, tp, port_a, device, clocks, mode, seconds,
                                                block, ready, go, a_out)) for r in range(tp)]
    for p in procs_b + procs_a:
        p.start()
    for _ in procs_b + procs_a:
        ready.get(timeout=120)
    time.sleep(0.5)  # B's queues fill before A starts
    go.set()
    ranks = sorted((a_out.get(timeout=seconds + 120) for _ in procs_a),
                   key=lambda r: r["rank"])
    stop.set()
    b = [b_out.get(timeout=60) for _ in procs_b]
    for p in procs_a + procs_b:
        p.join(timeout=30)
    bad = [p.exitcode for p in procs_a + procs_b if p.exitcode != 0]
    if bad:
        raise RuntimeError(f"{mode}/{partner}: a process exited with {bad}")
    b.sort(key=lambda r: r["rank"])
    return {"a_mode": mode, "partner": partner, "a_ranks": ranks,
            "b_per_s": [r["per_s"] for r in b],
            "b_per_s_with_a": [r["per_s_with_a"] for r in b]}


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--tp", type=int, default=2,
                   help="ranks per group, one per GPU (default 2; 1: the one-GPU reference, "
                   "where the all-reduce has no peer to wait for)")
    p.add_argument("--device", choices=("cuda", "cpu"), default="cuda",
                   help="cuda: NCCL on GPUs 0..tp-1; cpu: gloo, a smoke test (default cuda)")
    p.add_argument("--a-modes", default="gpu20,gpu200,gpu2000,host100",
                   help="comma-separated gpuN / mmN / hostN (default %(default)s)")
    p.add_argument("--partners", default="none,spin,ring",
                   help=f"comma-separated of {', '.join(PARTNERS)} (default %(default)s)")
    p.add_argument("--seconds", type=float, default=5.0,
                   help="timed seconds per case (default %(default)s)")
    p.add_argument("--block", type=int, default=20,
                   help="collectives between A's synchronizes (default %(default)s)")
    p.add_argument("--b-burst", type=int, default=B_BURST,
                   help="B's iterations between its synchronizes (default %(default)s: "
                   "~100 ms of work for the busy partners)")
    p.add_argument("--out", required=True, help="result JSON")
    args = p.parse_args()
    try:
        modes = args.a_modes.split(",")
        for m in modes:
            _mode(m)
    except ValueError as exc:
        p.error(str(exc))
    partners = args.partners.split(",")
    if any(x not in PARTNERS for x in partners):
        p.error(f"--partners: each one of {', '.join(PARTNERS)}")
    if args.tp < 1 or args.seconds <= 0 or args.block < 2 or args.b_burst < 1:
        p.error("--tp >= 1, --seconds > 0, --block >= 2, --b-burst >= 1")
    try:
        import torch
    except ImportError as exc:
        print(f"collective_cost: needs PyTorch ({exc})", file=sys.stderr)
        return 2

    if args.device == "cuda" and torch.cuda.device_count() < args.tp:
        print(f"collective_cost: --tp {args.tp} needs {args.tp} GPUs; torch sees "
              f"{torch.cuda.device_count()}", file=sys.stderr)
        return 2
    clocks = (0.0, 0.0)
    if args.device == "cuda":
        q = mp.get_context("spawn").Queue()
        cal = mp.get_context("spawn").Process(target=_clocks, args=(q,))
        cal.start()
        clocks = q.get(timeout=120)
        cal.join()
    res: dict[str, Any] = {
        "command": shlex.join([sys.executable] + sys.argv),
        "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "torch": torch.__version__, "tp": args.tp, "device": args.device,
        "gpu": torch.cuda.get_device_name(0) if args.device == "cuda" else "cpu",
        "sleep_cycles_per_us": round(clocks[0], 1),
        "matmul_us": round(clocks[1], 2), "block": args.block, "b_burst": args.b_burst,
        "seconds": args.seconds,
        "cases": []}
    for partner in partners:
        for mode in modes:
            t = time.monotonic()
            case = run_case(args.tp, args.device, clocks, mode, partner, args.seconds,
                            args.block, args.b_burst)
            res["cases"].append(case)
            r0 = case["a_ranks"][0]
            print(f"{partner:5s} {mode:9s} {r0['us_per_collective']:9.1f} us/collective "
                  f"interval {r0['interval_us']} over 1 ms {r0['over_1ms']} "
                  f"B {case['b_per_s']} with A {case['b_per_s_with_a']} "
                  f"({time.monotonic() - t:.0f} s)", flush=True)
    with open(args.out, "w", encoding="utf-8") as f:
        json.dump(res, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
