# SPDX-License-Identifier: MIT
"""Body of one task process (its own GPU context), driven by the parent over
stdin/stdout: READY after the model is loaded, GO <t0> to start (the phase's
barrier), RESULT when the measured window is over, then unmeasured work goes on
until STOP so every task of a contended phase is contended to the end."""
from __future__ import annotations

import json
import os
import sys
import tempfile
import threading
import time
import warnings
from typing import Any, Callable

import protocol
from host_probe import HostProbe
from presets import TaskSpec
from stats import latency_summary, percentile

# A request that starts this much after its scheduled arrival counts as late.
LATE_START_S = 0.001


def _sleep_until(t: float) -> None:
    # time.sleep alone overshoots by ~0.1 ms; the last 2 ms are spun.
    while True:
        d = t - time.monotonic()
        if d <= 0:
            return
        if d > 0.002:
            time.sleep(d - 0.0015)


def _resolve_device(requested: str):
    import torch

    if requested == "cpu":
        return torch.device("cpu")
    if torch.cuda.is_available():
        return torch.device("cuda", 0)
    if requested == "cuda":
        protocol.fail(
            "--device cuda: torch.cuda.is_available() is False "
            f"(torch {torch.__version__}, built for CUDA {torch.version.cuda}, "
            f"HIP {getattr(torch.version, 'hip', None)})",
            protocol.EXIT_ENV,
        )
    return torch.device("cpu")


def _ready_info(device, workload) -> dict[str, Any]:
    import torch

    name = torch.cuda.get_device_name(device) if device.type == "cuda" else "cpu"
    tf_version = None
    if workload.impl == "transformers":
        import transformers

        tf_version = transformers.__version__
    return {
        "transformers": tf_version,
        "pid": os.getpid(),
        "device": name,
        "device_type": device.type,
        "impl": workload.impl,
        "versions": {
            "python": sys.version.split()[0],
            "torch": torch.__version__,
            "cuda": torch.version.cuda,
            "hip": getattr(torch.version, "hip", None),
        },
        # What `amdqpctl run` set up, so the parent can verify the tagging.
        "amdqp_priority": os.environ.get("AMDQP_PRIORITY"),
        "amdqp_preload": any(
            "libamdqp-preload" in os.environ.get(v, "") for v in ("LD_PRELOAD", "HSA_TOOLS_LIB")
        ),
    }


class _Stop:
    """STOP from the parent (or its death: EOF) seen by a reader thread."""

    def __init__(self) -> None:
        self.event = threading.Event()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        for line in sys.stdin:
            if line.strip() == "STOP":
                break
        self.event.set()

    def __call__(self) -> bool:
        return self.event.is_set()


def _wait_go() -> float:
    line = sys.stdin.readline()
    if not line.startswith("GO "):
        sys.exit(0)  # parent gone or aborting the phase
    return float(line.split()[1])


def _task_header(task: TaskSpec, impl: str) -> dict[str, Any]:
    out: dict[str, Any] = {"role": task.role, "model": task.model, "batch": task.batch}
    if task.seq_len:
        out["seq_len"] = task.seq_len
    if task.image_size:
        out["image_size"] = task.image_size
    out["impl"] = impl
    return out


def _open_loop(spec, task: TaskSpec, issue: Callable[[], None], sync: Callable[[], None],
               impl: str, probe: HostProbe) -> None:
    """Requests at fixed scheduled arrivals t0 + k/rate. A late request is run
    at once, never skipped, and its latency counts from the scheduled arrival,
    so queueing behind earlier requests (or the GPU) is measured. Each
    request's host time to issue its work (up to the synchronize) is kept
    apart, so a slow request can be told a host stall or a GPU wait."""
    t0 = _wait_go()
    stop = _Stop()
    period = 1.0 / task.rate_per_s
    t_meas = t0 + spec["warmup_s"]
    t_end = t_meas + spec["duration_s"]
    lat_ms: list[float] = []
    service_ms: list[float] = []
    issue_ms: list[float] = []
    late = 0
    reported = False
    next_progress = t_meas + spec["progress_s"]
    k = 0
    while not stop():
        arrival = t0 + k * period
        k += 1
        if arrival >= t_end and not reported:
            reported = True
            result = _task_header(task, impl)
            result.update(
                {
                    "rate_per_s": task.rate_per_s,
                    "requests": len(lat_ms),
                    "latency_ms": latency_summary(lat_ms),
                    "service_ms": latency_summary(service_ms),
                    "late_starts": late,
                    "latencies_ms": [round(v, 4) for v in lat_ms],
                    "services_ms": [round(v, 4) for v in service_ms],
                    "issue_ms": latency_summary(issue_ms),
                    "issues_ms": [round(v, 4) for v in issue_ms],
                    **probe.take(t_meas),
                }
            )
            protocol.send("RESULT", result)
        probe.maybe(arrival - time.monotonic())
        _sleep_until(arrival)
        start = time.monotonic()
        issue()
        issued = time.monotonic()
        sync()
        done = time.monotonic()
        if t_meas <= arrival < t_end:
            lat_ms.append((done - arrival) * 1e3)
            service_ms.append((done - start) * 1e3)
            issue_ms.append((issued - start) * 1e3)
            late += start - arrival > LATE_START_S
            if done >= next_progress:
                next_progress = done + spec["progress_s"]
                protocol.send(
                    "PROGRESS",
                    {"requests": len(lat_ms), "p99_ms": round(percentile(lat_ms, 99), 3)},
                )


def _back_to_back(spec, task: TaskSpec, run: Callable[[], None], impl: str, items: int,
                  probe: HostProbe) -> None:
    """Iterations back to back; it/s over the iterations that started inside the
    measured window, timed from the first one's start to the last one's end."""
    t0 = _wait_go()
    stop = _Stop()
    t_meas = t0 + spec["warmup_s"]
    t_end = t_meas + spec["duration_s"]
    iter_ms: list[float] = []
    first = last = None
    reported = False
    next_progress = t_meas + spec["progress_s"]
    while not stop():
        start = time.monotonic()
        run()
        done = time.monotonic()
        probe.maybe(1.0)  # between iterations: after the sync, never inside one
        # An iteration longer than the whole window still gives a rate.
        counted = t_meas <= start < t_end or (start >= t_end and not iter_ms)
        if counted:
            iter_ms.append((done - start) * 1e3)
            first = start if first is None else first
            last = done
            if done >= next_progress:
                next_progress = done + spec["progress_s"]
                protocol.send(
                    "PROGRESS",
                    {
                        "iterations": len(iter_ms),
                        "it_per_s": round(len(iter_ms) / (last - first), 3),
                    },
                )
        if not reported and iter_ms and done >= t_end:
            reported = True
            rate = len(iter_ms) / (last - first)
            result = _task_header(task, impl)
            result.update(
                {
                    "iterations": len(iter_ms),
                    "it_per_s": round(rate, 4),
                    "img_per_s": round(rate * items, 2),
                    "measured_s": round(last - first, 4),
                    "iter_ms": latency_summary(iter_ms),
                    "iterations_ms": [round(v, 4) for v in iter_ms],
                    **probe.take(t_meas),
                }
            )
            protocol.send("RESULT", result)


def _profiled_requests(prof, record_function, run: Callable[[], None], n: int, period: float):
    import timeline

    with prof:
        t = time.monotonic()
        for i in range(n):
            _sleep_until(t)
            with record_function(f"{timeline.REQUEST_MARK}{i}"):
                run()
            t = max(t + period, time.monotonic())
    return prof


def _exported(prof) -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "trace.json")
        prof.export_chrome_trace(path)
        with open(path, encoding="utf-8") as f:
            return json.load(f)


def _profile(spec, task: TaskSpec, run: Callable[[], None], device, workload, info) -> None:
    """The workload alone: N requests unprofiled (wall time), then N under
    torch.profiler, each in a record_function range the timeline is cut by."""
    import torch
    from torch.profiler import ProfilerActivity, profile, record_function

    import timeline

    n = spec["profile"]["requests"]
    period = 1.0 / task.rate_per_s if task.open_loop else 0.0
    wall_us = []
    t = time.monotonic()
    for _ in range(n):
        _sleep_until(t)
        start = time.monotonic()
        run()
        wall_us.append(round((time.monotonic() - start) * 1e6, 1))
        t = max(t + period, time.monotonic())
    gpu = device.type == "cuda"
    activities = [ProfilerActivity.CPU] + ([ProfilerActivity.CUDA] if gpu else [])
    with warnings.catch_warnings():
        # torch 2.x warns that events of earlier cycles are dropped; there is one cycle.
        warnings.filterwarnings("ignore", message=".*Profiler clears events")
        prof = _profiled_requests(profile(activities=activities), record_function, run, n, period)
        trace = _exported(prof)
    requests, summary = timeline.from_chrome_trace(trace, gpu)
    if len(requests) != n or not all(requests):
        protocol.fail(
            f"profile of {spec['profile']['workload']}: {len(requests)} annotated requests, "
            f"{sum(1 for r in requests if not r)} without kernels (expected {n} with kernels)",
            protocol.EXIT_RUN,
        )
    out = {
        "workload": spec["profile"]["workload"],
        "device": info["device"],
        "torch": torch.__version__,
        "batch": task.batch,
        "period_s": round(period, 6),
        "requests": requests,
        "summary": summary,
        "model": task.model,
        "impl": workload.impl,
        "cpu_launch": gpu,  # eager PyTorch: gaps between kernels are CPU launch time
        "request_wall_us": wall_us,
    }
    if task.seq_len:
        out["seq_len"] = task.seq_len
    if task.image_size:
        out["image_size"] = task.image_size
    tmp_out = spec["profile"]["out"] + ".tmp"
    with open(tmp_out, "w", encoding="utf-8") as f:
        json.dump(out, f)
    os.replace(tmp_out, spec["profile"]["out"])
    protocol.send("RESULT", {"file": spec["profile"]["out"], "summary": summary})


def main(spec_json: str) -> None:
    spec = json.loads(spec_json)
    task = TaskSpec(**spec["task"])
    try:
        import torch
    except ImportError as e:
        protocol.fail(f"cannot import torch in {sys.executable}: {e}", protocol.EXIT_ENV)
    import workloads

    device = _resolve_device(spec["device"])
    if device.type == "cpu" and spec.get("cpu_threads"):
        torch.set_num_threads(spec["cpu_threads"])
    with workloads.inference_context():
        workload = workloads.build(task, spec["scale"], device, spec["bert_impl"])
        sync = workloads.device_sync(device)

        def run() -> None:
            workload.run()
            sync()

        # First passes pick kernels and grow the allocator before the barrier,
        # so the measured warm-up is steady-state work.
        for _ in range(2 if spec["mode"] == "phase" else 3):
            run()
        info = _ready_info(device, workload)
        protocol.send("READY", info)
        if spec["mode"] == "profile":
            _profile(spec, task, run, device, workload, info)
        else:
            probe = HostProbe(device, spec.get("host_probe_period_s", 0.0), time.monotonic)
            if task.open_loop:
                _open_loop(spec, task, workload.run, sync, workload.impl, probe)
            else:
                _back_to_back(spec, task, run, workload.impl, workload.items_per_iter, probe)
