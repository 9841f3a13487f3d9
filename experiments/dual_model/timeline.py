# SPDX-License-Identifier: MIT
"""Kernel timelines from a torch.profiler Chrome trace, in the shape amdqp-sim
reads (Documentation/experiments.rst): per request, [start_us, dur_us, class] per kernel,
start relative to the request's first kernel."""
from __future__ import annotations

import bisect
import re
from typing import Any, Optional

from stats import percentile

REQUEST_MARK = "amdqp_req_"
# Kineto's categories for work that ran on the GPU (CUDA and ROCm builds alike).
GPU_CATEGORIES = {"kernel", "gpu_memcpy", "gpu_memset", "Kernel", "Memcpy", "Memset"}
# GEMM libraries' kernel names: cuBLAS/cuBLASLt/CUTLASS (gemm, sm90_xmma, cutlass),
# rocBLAS/hipBLASLt Tensile (Cijk_), and cuDNN/MIOpen implicit-GEMM convolutions.
_GEMM = re.compile(r"gemm|gemv|cutlass|xmma|wgmma|Cijk_|matmul|cublas|hipblas|rocblas|mfma", re.I)
_NCCL = re.compile(r"nccl|rccl", re.I)


def kernel_class(name: str) -> str:
    if _NCCL.search(name):
        return "nccl"
    if _GEMM.search(name):
        return "gemm"
    return "other"


def _complete_events(trace: dict[str, Any]) -> list[dict[str, Any]]:
    events = trace["traceEvents"] if isinstance(trace, dict) else trace
    return [e for e in events if e.get("ph") == "X" and "ts" in e and "dur" in e]


def _request_windows(events: list[dict[str, Any]]) -> list[tuple[float, float, int, Any]]:
    """(start, end, index, thread) of each request's record_function range."""
    out = []
    for e in events:
        name = e.get("name", "")
        # Builds without kineto (legacy profiler) give no categories at all.
        if e.get("cat") in ("user_annotation", None) and name.startswith(REQUEST_MARK):
            idx = int(name[len(REQUEST_MARK) :])
            out.append((float(e["ts"]), float(e["ts"]) + float(e["dur"]), idx, e.get("tid")))
    out.sort()
    return out


def _gpu_items(events, windows) -> list[list[tuple[float, float, str]]]:
    """GPU kernels per request, attributed through the launching API call's
    correlation id (robust to GPU/CPU clock offsets), else by start time."""
    launch_ts: dict[Any, float] = {}
    for e in events:
        if e.get("cat") in GPU_CATEGORIES:
            continue
        corr = (e.get("args") or {}).get("correlation")
        if corr is not None:
            launch_ts[corr] = float(e["ts"])
    starts = [w[0] for w in windows]
    per_req: list[list[tuple[float, float, str]]] = [[] for _ in windows]
    for e in events:
        if e.get("cat") not in GPU_CATEGORIES:
            continue
        corr = (e.get("args") or {}).get("correlation")
        when = launch_ts.get(corr, float(e["ts"]))
        i = bisect.bisect_right(starts, when) - 1
        if 0 <= i < len(windows):
            per_req[i].append((float(e["ts"]), float(e["dur"]), kernel_class(e.get("name", ""))))
    return per_req


def _cpu_items(events, windows) -> list[list[tuple[float, float, str]]]:
    """On a CPU run the operators are the "kernels": the innermost aten ops of
    each request (an op that contains another one is not counted twice)."""
    ops = sorted(
        (
            e
            for e in events
            if e.get("cat") == "cpu_op"
            or (e.get("cat") is None and not e.get("name", "").startswith(REQUEST_MARK))
        ),
        key=lambda e: (e.get("tid"), float(e["ts"]), -float(e["dur"])),
    )
    leaves = []
    for i, e in enumerate(ops):
        end = float(e["ts"]) + float(e["dur"])
        nxt = ops[i + 1] if i + 1 < len(ops) else None
        if nxt is None or nxt.get("tid") != e.get("tid") or float(nxt["ts"]) >= end:
            leaves.append(e)
    per_req: list[list[tuple[float, float, str]]] = [[] for _ in windows]
    for e in leaves:
        ts = float(e["ts"])
        for i, (start, end, _idx, tid) in enumerate(windows):
            if start <= ts < end and e.get("tid") == tid:
                per_req[i].append((ts, float(e["dur"]), kernel_class(e.get("name", ""))))
                break
    return per_req


def _summary_of(requests: list[list[list[Any]]], source: str) -> dict[str, Any]:
    durs = [k[1] for r in requests for k in r]
    gaps = [
        max(0.0, b[0] - (a[0] + a[1])) for r in requests for a, b in zip(r, r[1:])
    ]  # idle time between consecutive kernels of one request

    def pct(v: list[float]) -> dict[str, Optional[float]]:
        if not v:
            return {"p50": None, "p99": None, "max": None}
        return {
            "p50": round(percentile(v, 50), 3),
            "p99": round(percentile(v, 99), 3),
            "max": round(max(v), 3),
        }

    return {
        "requests": len(requests),
        "source": source,
        "kernels_per_request": [len(r) for r in requests],
        "kernel_us": pct(durs),
        "intra_gap_us": pct(gaps),
        "gpu_span_us": [round(r[-1][0] + r[-1][1], 3) if r else 0.0 for r in requests],
        "classes": {
            c: sum(1 for r in requests for k in r if k[2] == c) for c in ("gemm", "nccl", "other")
        },
    }


def from_chrome_trace(trace: dict[str, Any], gpu: bool) -> tuple[list, dict[str, Any]]:
    """(requests, summary) from an exported torch.profiler trace."""
    events = _complete_events(trace)
    windows = _request_windows(events)
    per_req = _gpu_items(events, windows) if gpu else _cpu_items(events, windows)
    requests = []
    for items in per_req:
        items.sort()
        t0 = items[0][0] if items else 0.0
        requests.append([[round(ts - t0, 3), round(dur, 3), cls] for ts, dur, cls in items])
    return requests, _summary_of(requests, "gpu_kernels" if gpu else "cpu_ops")
