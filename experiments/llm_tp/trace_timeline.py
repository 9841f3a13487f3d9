# SPDX-License-Identifier: MIT
"""Per-request kernel timelines with torch.profiler (the contract's format).

Each request (HP) or step (LP) runs inside a record_function range; a GPU
kernel belongs to the request whose range contains the host-side launch call
that the kernel's correlation id points at. Times are relative to the
request's first kernel. On a CPU run there are no GPU kernels: the outermost
aten operators stand in for them (so the code path is tested), and the
summary says so.
"""

import gzip
import json
import os
import tempfile

import torch

from stats import percentile

NCCL_MARKERS = ("nccl", "rccl", "allreduce", "all_reduce", "allgather", "all_gather",
                "reducescatter", "reduce_scatter", "alltoall", "broadcast")
GEMM_MARKERS = ("gemm", "gemv", "cutlass", "cijk_", "matmul", "xmma", "nvjet", "sgemm",
                "hgemm", "wgmma", "addmm", "aten::mm", "aten::bmm", "aten::linear")
MARK = "amdqp_request_"


def kernel_class(name):
    low = name.lower()
    if any(m in low for m in NCCL_MARKERS):
        return "nccl"
    if any(m in low for m in GEMM_MARKERS):
        return "gemm"
    return "other"


def _outermost(events):
    """Events not nested in an earlier one (CPU ops nest: keep the top)."""
    out, end = [], -1.0
    for e in sorted(events, key=lambda e: (e["ts"], -e["dur"])):
        if e["ts"] >= end:
            out.append(e)
            end = e["ts"] + e["dur"]
    return out


def split_requests(trace_events, on_gpu):
    """Kernels per marked request: [[[start_us, dur_us, class], ...], ...]."""
    marks = sorted((e for e in trace_events
                    if e.get("ph") == "X" and str(e.get("name", "")).startswith(MARK)
                    and e.get("cat") in ("user_annotation", "cpu_op", None)),
                   key=lambda e: e["ts"])
    if on_gpu:
        launches = {}
        for e in trace_events:
            if e.get("cat") in ("cuda_runtime", "cuda_driver") and "args" in e:
                corr = e["args"].get("correlation")
                if corr is not None:
                    launches[corr] = e["ts"]
        kernels = []
        for e in trace_events:
            if e.get("cat") == "kernel" and e.get("ph") == "X":
                corr = e.get("args", {}).get("correlation")
                if corr in launches:
                    kernels.append((launches[corr], e))
        kernels.sort(key=lambda k: k[0])
    else:
        ops = [e for e in trace_events if e.get("cat") in ("cpu_op", None) and e.get("ph") == "X"
               and not str(e.get("name", "")).startswith(MARK)]
        kernels = [(e["ts"], e) for e in _outermost(ops)]
    requests = []
    for m in marks:
        lo, hi = m["ts"], m["ts"] + m["dur"]
        mine = sorted((k for t, k in kernels if lo <= t <= hi), key=lambda k: k["ts"])
        if not mine:
            continue
        t0 = mine[0]["ts"]
        requests.append([[round(k["ts"] - t0, 3), round(k["dur"], 3), kernel_class(k["name"])]
                         for k in mine])
    return requests


def save(path, doc):
    """Writes a timeline: gzip-compressed JSON when @path ends in .gz (what
    the driver writes: a DeepSeek HP timeline is ~1.6 MB as text, ~10x less
    compressed, so every rank's files of a TP run come back from a lent
    machine), plain JSON otherwise. Atomic (temporary file, then rename)."""
    tmp = f"{path}.tmp{os.getpid()}"
    text = json.dumps(doc, separators=(",", ":")).encode()
    if path.endswith(".gz"):
        # mtime 0: the same timeline gives the same bytes
        with open(tmp, "wb") as raw, gzip.GzipFile(fileobj=raw, mode="wb", mtime=0) as f:
            f.write(text)
    else:
        with open(tmp, "wb") as f:
            f.write(text)
    os.replace(tmp, path)


def load(path):
    """Reads a timeline written by save(), or an older plain .json one."""
    with open(path, "rb") as f:
        head = f.read(2)
    opener = gzip.open if head == b"\x1f\x8b" else open
    with opener(path, "rt") as f:
        return json.load(f)


def summarize(requests):
    durs = [k[1] for r in requests for k in r]
    gaps = []
    for r in requests:
        for a, b in zip(r, r[1:]):
            gaps.append(max(0.0, b[0] - (a[0] + a[1])))
    spans = [r[-1][0] + r[-1][1] for r in requests if r]
    nccl = [sum(1 for k in r if k[2] == "nccl") for r in requests]
    return {"kernels_per_request": [len(r) for r in requests],
            "nccl_kernels_per_request": nccl,
            "kernel_us": {"p50": percentile(durs, 50), "p99": percentile(durs, 99),
                          "max": max(durs) if durs else None},
            "gap_us": {"p50": percentile(gaps, 50), "p99": percentile(gaps, 99),
                       "max": max(gaps) if gaps else None},
            "span_us": {"p50": percentile(spans, 50), "max": max(spans) if spans else None}}


def capture(ctx, step_fn, count, period_s):
    """Profiles `count` calls of step_fn(ctx, i); returns the request lists."""
    from torch.profiler import ProfilerActivity, profile, record_function
    import time

    on_gpu = ctx.device.type == "cuda"
    acts = [ProfilerActivity.CPU] + ([ProfilerActivity.CUDA] if on_gpu else [])
    with profile(activities=acts) as prof:
        for i in range(count):
            t0 = time.time()
            with record_function(f"{MARK}{i}"):
                step_fn(ctx, i)
                if on_gpu:
                    torch.cuda.synchronize(ctx.device)
            if period_s > 0:
                # HP requests arrive with idle time between them
                time.sleep(max(0.0, period_s - (time.time() - t0)))
    fd, tmp = tempfile.mkstemp(suffix=".json")
    os.close(fd)
    try:
        prof.export_chrome_trace(tmp)
        with open(tmp) as f:
            doc = json.load(f)
        # kineto writes {"traceEvents": [...]}, the legacy CPU profiler a list
        events = doc.get("traceEvents", []) if isinstance(doc, dict) else doc
    finally:
        os.unlink(tmp)
    return split_requests(events, on_gpu), on_gpu
