#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Where does a launch-bound low-priority task lose throughput next to a
high-priority one? One LP process (back to back, never restarted) runs
through windows in which a second process (the HP task) is in turn:

  alone    no second process
  idle     HP process started: CUDA context and model resident, sleeping
  spin     HP process spends its serving CPU pattern (sleep, spin to the
           arrival, busy for --spin-ms) with no GPU work
  serve    HP requests open loop at --rate, as dual_model.py's open-loop task
  hp_only  HP serving, the LP process paused (its context stays): HP latency
           next to an idle LP context, to compare with `serve`

Order: alone, [start HP], then --rounds x (idle, spin, serve, hp_only),
[stop HP], alone. Each window lasts --window s, measured from 0.5 s after
the mode switch was acknowledged. Output (--out): per window LP it/s and
iteration times, HP latencies; in serve windows the LP iterations that
overlap an HP request and those that do not, separately; and every raw
timestamp (CLOCK_MONOTONIC, s) for re-analysis. A diagnostic of the
measurement, not one of the dual-model tests.
"""
from __future__ import annotations

import argparse
import datetime
import json
import multiprocessing as mp
import os
import shlex
import sys
import time
from typing import Any

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(1, os.path.join(os.path.dirname(HERE), "common"))

from presets import TaskSpec, scaled  # noqa: E402
from stats import latency_summary  # noqa: E402
from worker import _sleep_until  # noqa: E402


def _spec(text: str, role: str, rate: float) -> TaskSpec:
    model, batch = text.split(":")
    return TaskSpec(role, role, model, int(batch), rate, image_size=224)


def _build(task: TaskSpec, scale: str, device_name: str):
    import torch

    import workloads

    device = torch.device(device_name)
    wl = workloads.build(scaled(task, scale), scale, device)
    sync = workloads.device_sync(device)

    def run() -> None:
        wl.run()
        sync()

    return torch, run


def lp_main(conn, task: TaskSpec, scale: str, device: str) -> None:
    torch, run = _build(task, scale, device)
    with torch.inference_mode():
        for _ in range(3):
            run()
        conn.send("ready")
        iters: list[tuple[float, float]] = []
        paused = False
        while True:
            if conn.poll():
                cmd = conn.recv()
                if cmd == "stop":
                    break
                paused = cmd == "pause"
                conn.send("ok")
            if paused:
                time.sleep(0.001)
                continue
            s = time.monotonic()
            run()
            iters.append((round(s, 6), round(time.monotonic(), 6)))
        conn.send(iters)


def hp_main(conn, task: TaskSpec, scale: str, device: str, spin_s: float) -> None:
    torch, run = _build(task, scale, device)
    period = 1.0 / task.rate_per_s
    with torch.inference_mode():
        for _ in range(3):
            run()
        conn.send("ready")
        reqs: list[tuple[float, float, float]] = []
        mode = "idle"
        k = 0
        t0 = time.monotonic()
        while True:
            if conn.poll():
                cmd = conn.recv()
                if cmd == "stop":
                    break
                mode = cmd
                k = 0
                t0 = time.monotonic() + 0.05
                conn.send("ok")
            if mode == "idle":
                time.sleep(0.005)
                continue
            arrival = t0 + k * period
            k += 1
            _sleep_until(arrival)
            start = time.monotonic()
            if mode == "spin":
                while time.monotonic() - start < spin_s:
                    pass
                continue
            run()
            reqs.append((round(arrival, 6), round(start, 6), round(time.monotonic(), 6)))
        conn.send(reqs)


def _cmd(conn, what: str) -> float:
    conn.send(what)
    if conn.recv() != "ok":
        raise RuntimeError(f"no ack for {what}")
    return time.monotonic()


def _window_stats(name: str, t0: float, t1: float, lp, hp) -> dict[str, Any]:
    lp_in = [(s, e) for s, e in lp if t0 <= s and e <= t1]
    out: dict[str, Any] = {"window": name, "t0": round(t0, 3), "t1": round(t1, 3)}
    if lp_in:
        span = lp_in[-1][1] - lp_in[0][0]
        out["lp_iterations"] = len(lp_in)
        out["lp_it_per_s"] = round(len(lp_in) / span, 3) if span > 0 else None
        out["lp_iter_ms"] = latency_summary([(e - s) * 1e3 for s, e in lp_in])
    hp_in = [r for r in hp if t0 <= r[0] < t1]
    if hp_in:
        out["hp_requests"] = len(hp_in)
        out["hp_latency_ms"] = latency_summary([(e - a) * 1e3 for a, _, e in hp_in])
        if lp_in:
            busy = [(s, e) for _, s, e in hp_in]

            def overlaps(it) -> bool:
                return any(it[0] < e and s < it[1] for s, e in busy)

            over = [(e - s) * 1e3 for s, e in lp_in if overlaps((s, e))]
            free = [(e - s) * 1e3 for s, e in lp_in if not overlaps((s, e))]
            out["lp_iter_ms_overlapping_hp"] = latency_summary(over)
            out["lp_iter_ms_not_overlapping_hp"] = latency_summary(free)
            out["lp_overlapping_count"] = len(over)
    return out


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--lp", default="resnet50:8", help="LP model:batch (default resnet50:8)")
    p.add_argument("--hp", default="resnet18:1", help="HP model:batch (default resnet18:1)")
    p.add_argument("--rate", type=float, default=10.0, help="HP requests/s (default 10)")
    p.add_argument("--spin-ms", type=float, default=3.4,
                   help="CPU busy time per period in spin windows (default 3.4)")
    p.add_argument("--window", type=float, default=10.0, help="seconds per window")
    p.add_argument("--rounds", type=int, default=2, help="idle/spin/serve/hp_only rounds")
    p.add_argument("--device", default="cuda", help="cuda or cpu (default cuda)")
    p.add_argument("--model-scale", default="full", choices=("full", "tiny"))
    p.add_argument("--out", required=True, help="result JSON")
    a = p.parse_args()

    ctx = mp.get_context("spawn")
    lp_task = _spec(a.lp, "lp", 0.0)
    hp_task = _spec(a.hp, "hp", a.rate)
    lp_conn, lp_child = ctx.Pipe()
    lp_proc = ctx.Process(target=lp_main, args=(lp_child, lp_task, a.model_scale, a.device))
    lp_proc.start()
    if lp_conn.recv() != "ready":
        raise RuntimeError("LP process did not start")
    windows: list[tuple[str, float, float]] = []

    def window(name: str, since: float) -> None:
        t0 = since + 0.5
        _sleep_until(t0 + a.window)
        windows.append((name, t0, t0 + a.window))
        print(f"interference: {name} done", file=sys.stderr, flush=True)

    window("alone", time.monotonic())
    hp_conn, hp_child = ctx.Pipe()
    hp_proc = ctx.Process(target=hp_main,
                          args=(hp_child, hp_task, a.model_scale, a.device, a.spin_ms / 1e3))
    hp_proc.start()
    if hp_conn.recv() != "ready":
        raise RuntimeError("HP process did not start")
    for _ in range(a.rounds):
        window("idle", _cmd(hp_conn, "idle"))
        window("spin", _cmd(hp_conn, "spin"))
        window("serve", _cmd(hp_conn, "serve"))
        _cmd(lp_conn, "pause")
        window("hp_only", _cmd(hp_conn, "serve"))
        _cmd(lp_conn, "run")
        _cmd(hp_conn, "idle")
    hp_conn.send("stop")
    hp_reqs = hp_conn.recv()
    hp_proc.join()
    window("alone", time.monotonic())
    lp_conn.send("stop")
    lp_iters = lp_conn.recv()
    lp_proc.join()

    import torch

    stats = [_window_stats(n, t0, t1, lp_iters, hp_reqs) for n, t0, t1 in windows]
    result = {
        "experiment": "interference",
        "device": torch.cuda.get_device_name(0) if a.device == "cuda" else "cpu",
        "command": " ".join(shlex.quote(x) for x in [os.path.basename(sys.executable)] + sys.argv),
        "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "versions": {"python": sys.version.split()[0], "torch": torch.__version__,
                     "cuda": torch.version.cuda},
        "config": vars(a),
        "windows": stats,
        "raw": {"windows": windows, "lp_iterations": lp_iters, "hp_requests": hp_reqs},
    }
    with open(a.out, "w", encoding="utf-8") as f:
        json.dump(result, f)
    for w in stats:
        print(json.dumps({k: v for k, v in w.items() if k not in ("t0", "t1")}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
