# SPDX-License-Identifier: MIT
"""Driver side: starts one OS process per task (one GPU context each, as in the
seeds' tests), releases them together and collects their results."""
from __future__ import annotations

import dataclasses
import json
import queue
import subprocess
import sys
import threading
import time
from typing import Any, Callable, Optional

import protocol
from presets import TaskSpec

READY_TIMEOUT_S = 900.0  # a cold ROCm/MIOpen start with bs1024 takes minutes
RESULT_GRACE_S = 300.0  # after the window: the last long iteration, slow exits
# Margin between GO and t0 so every task has read GO before its clock starts.
START_MARGIN_S = 0.5


class TaskFailed(RuntimeError):
    def __init__(self, message: str, code: int) -> None:
        super().__init__(message)
        self.code = code


class TaskProcess:
    """One task process; its stdout lines become (label, kind, payload) events."""

    def __init__(self, label: str, argv: list[str], events: "queue.Queue") -> None:
        self.label = label
        self.proc = subprocess.Popen(
            argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, bufsize=1
        )
        self.error: Optional[dict[str, Any]] = None
        threading.Thread(target=self._read, args=(events,), daemon=True).start()

    def _read(self, events: "queue.Queue") -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            msg = protocol.parse(line)
            if msg is None:
                sys.stderr.write(f"[{self.label}] {line}")
            else:
                events.put((self.label, msg[0], msg[1]))
        events.put((self.label, "EXIT", self.proc.wait()))

    def send(self, line: str) -> None:
        try:
            assert self.proc.stdin is not None
            self.proc.stdin.write(line + "\n")
            self.proc.stdin.flush()
        except (BrokenPipeError, OSError):
            pass  # it exited; its EXIT event tells why

    def finish(self, timeout: float = 60.0) -> None:
        self.send("STOP")
        try:
            self.proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()

    def kill(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait()


@dataclasses.dataclass
class Settings:
    """What every task process of the run shares."""

    script: str
    scale: str
    device: str
    bert_impl: str
    warmup_s: float
    duration_s: float
    cpu_threads: int
    quiet: bool
    progress_interval_s: float
    host_probe_period_s: float
    launch_prefix: Callable[[TaskSpec], list[str]]
    # Called with each task's READY report; raises TaskFailed to abort the
    # phase before anything is measured.
    check_ready: Callable[[TaskSpec, dict[str, Any]], None] = lambda t, info: None


def _spec(settings: Settings, task: TaskSpec, mode: str, **extra: Any) -> str:
    spec = {
        "mode": mode,
        "task": dataclasses.asdict(task),
        "scale": settings.scale,
        "device": settings.device,
        "bert_impl": settings.bert_impl,
        "warmup_s": settings.warmup_s,
        "duration_s": settings.duration_s,
        "cpu_threads": settings.cpu_threads,
        "host_probe_period_s": settings.host_probe_period_s,
        # Workers report more often than the driver prints, so each printed
        # line has fresh numbers from every task.
        "progress_s": max(0.5, settings.progress_interval_s / 4),
    }
    spec.update(extra)
    return json.dumps(spec)


def _argv(settings: Settings, task: TaskSpec, spec: str) -> list[str]:
    return settings.launch_prefix(task) + [sys.executable, settings.script, "--worker", spec]


def _say(settings: Settings, text: str) -> None:
    if not settings.quiet:
        sys.stderr.write(text + "\n")
        sys.stderr.flush()


def _describe(t: TaskSpec) -> str:
    arrivals = f"@{t.rate_per_s:g}/s" if t.open_loop else "back to back"
    seq = f" seq{t.seq_len}" if t.seq_len else ""
    return f"{t.name}: {t.model} bs{t.batch}{seq} {arrivals}"


def _progress_text(task: TaskSpec, p: Optional[dict[str, Any]]) -> str:
    if p is None:
        return f"{task.name}: -"
    if "requests" in p:
        return f"{task.name}: {p['requests']} req, p99 {p['p99_ms']:.2f} ms"
    return f"{task.name}: {p['iterations']} it, {p['it_per_s']:.3f} it/s"


def _failure(label: str, kind: str, payload: Any, procs: dict[str, TaskProcess]) -> TaskFailed:
    if kind == "ERROR":
        return TaskFailed(f"task {label}: {payload['message']}", payload["code"])
    code = payload if isinstance(payload, int) else -1
    mapped = code if code in (protocol.EXIT_USAGE, protocol.EXIT_ENV) else protocol.EXIT_RUN
    return TaskFailed(f"task {label} exited with status {code} before it reported", mapped)


def _start(settings: Settings, tasks: list[TaskSpec], mode: str, **extra: Any):
    events: "queue.Queue" = queue.Queue()
    procs = {
        t.name: TaskProcess(t.name, _argv(settings, t, _spec(settings, t, mode, **extra)), events)
        for t in tasks
    }
    return events, procs


def _await_ready(events, procs) -> dict[str, dict[str, Any]]:
    ready: dict[str, dict[str, Any]] = {}
    deadline = time.monotonic() + READY_TIMEOUT_S
    while len(ready) < len(procs):
        try:
            label, kind, payload = events.get(timeout=max(0.1, deadline - time.monotonic()))
        except queue.Empty:
            raise TaskFailed(
                f"tasks {sorted(set(procs) - set(ready))} not ready after {READY_TIMEOUT_S:.0f} s",
                protocol.EXIT_RUN,
            ) from None
        if kind == "READY":
            ready[label] = payload
        elif kind in ("ERROR", "EXIT"):
            raise _failure(label, kind, payload, procs)
    return ready


def run_phase(
    settings: Settings, phase: str, tasks: list[TaskSpec]
) -> tuple[dict[str, Any], dict[str, dict[str, Any]]]:
    """Run the tasks together; returns (phase result, READY info per task)."""
    _say(settings, f"[{phase}] starting {'; '.join(_describe(t) for t in tasks)}")
    events, procs = _start(settings, tasks, "phase")
    try:
        ready = _await_ready(events, procs)
        for t in tasks:
            settings.check_ready(t, ready[t.name])
        t0 = time.monotonic() + START_MARGIN_S
        for p in procs.values():
            p.send(f"GO {t0!r}")
        t_meas = t0 + settings.warmup_s
        t_end = t_meas + settings.duration_s
        _say(
            settings,
            f"[{phase}] all {len(tasks)} ready; warm-up {settings.warmup_s:g} s, "
            f"measuring {settings.duration_s:g} s",
        )
        results: dict[str, dict[str, Any]] = {}
        progress: dict[str, dict[str, Any]] = {}
        next_line = t_meas + settings.progress_interval_s
        while len(results) < len(tasks):
            now = time.monotonic()
            if now > t_end + RESULT_GRACE_S:
                raise TaskFailed(
                    f"[{phase}] tasks {sorted(set(procs) - set(results))} gave no result "
                    f"{RESULT_GRACE_S:.0f} s after the window",
                    protocol.EXIT_RUN,
                )
            if now >= next_line and now < t_end:
                next_line += settings.progress_interval_s
                text = " | ".join(_progress_text(t, progress.get(t.name)) for t in tasks)
                _say(settings, f"[{phase} {now - t_meas:.0f}/{settings.duration_s:g} s] {text}")
            try:
                label, kind, payload = events.get(timeout=0.25)
            except queue.Empty:
                continue
            if kind == "PROGRESS":
                progress[label] = payload
            elif kind == "RESULT":
                results[label] = payload
            elif kind in ("ERROR", "EXIT"):
                raise _failure(label, kind, payload, procs)
        for p in procs.values():
            p.finish()
    finally:
        for p in procs.values():
            p.kill()
    for t in tasks:
        results[t.name]["priority"] = t.priority
        results[t.name]["pid"] = ready[t.name]["pid"]
        if ready[t.name].get("amdqp_priority") is not None:
            results[t.name]["amdqp_priority_env"] = ready[t.name]["amdqp_priority"]
    body = {
        "duration_s": settings.duration_s,
        "warmup_s": settings.warmup_s,
        "tasks": {t.name: results[t.name] for t in tasks},
    }
    _say(settings, f"[{phase}] done: " + " | ".join(_done_text(t, results[t.name]) for t in tasks))
    return body, ready


def _done_text(t: TaskSpec, r: dict[str, Any]) -> str:
    if "latency_ms" in r:
        p99 = r["latency_ms"]["p99"]
        return f"{t.name}: {r['requests']} req, p99 {p99 if p99 is None else round(p99, 2)} ms"
    return f"{t.name}: {r['it_per_s']:.3f} it/s, {r['img_per_s']:.1f} items/s"


def run_profile(settings: Settings, task: TaskSpec, out_path: str, workload: str, requests: int):
    """Capture one workload alone under torch.profiler; returns its summary."""
    _say(settings, f"[profile] {workload}: {requests} requests -> {out_path}")
    events, procs = _start(
        settings,
        [task],
        "profile",
        profile={"requests": requests, "out": out_path, "workload": workload},
    )
    try:
        _await_ready(events, procs)
        while True:
            label, kind, payload = events.get(timeout=READY_TIMEOUT_S)
            if kind == "RESULT":
                break
            if kind in ("ERROR", "EXIT"):
                raise _failure(label, kind, payload, procs)
        for p in procs.values():
            p.finish()
    except queue.Empty:
        raise TaskFailed(f"[profile] {workload}: no result", protocol.EXIT_RUN) from None
    finally:
        for p in procs.values():
            p.kill()
    return payload["summary"]
