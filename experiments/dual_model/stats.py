# SPDX-License-Identifier: MIT
"""Percentiles and the run summary (no numpy: the parent process stays light)."""
from __future__ import annotations

from typing import Any, Optional, Sequence


def percentile(values: Sequence[float], q: float) -> float:
    """Linear interpolation between closest ranks (numpy's default method)."""
    if not values:
        raise ValueError("percentile of no values")
    s = sorted(values)
    pos = (len(s) - 1) * q / 100.0
    lo = int(pos)
    hi = min(lo + 1, len(s) - 1)
    return s[lo] + (s[hi] - s[lo]) * (pos - lo)


def latency_summary(values_ms: Sequence[float]) -> dict[str, Optional[float]]:
    if not values_ms:
        return {"p50": None, "p95": None, "p99": None, "max": None, "mean": None}
    return {
        "p50": round(percentile(values_ms, 50), 4),
        "p95": round(percentile(values_ms, 95), 4),
        "p99": round(percentile(values_ms, 99), 4),
        "max": round(max(values_ms), 4),
        "mean": round(sum(values_ms) / len(values_ms), 4),
    }


def ratio(num: Optional[float], den: Optional[float]) -> Optional[float]:
    if num is None or not den:
        return None
    return round(num / den, 4)


def loss_pct(alone: Optional[float], contended: Optional[float]) -> Optional[float]:
    if alone is None or contended is None or not alone:
        return None
    return round((1.0 - contended / alone) * 100.0, 2)


def _task(phases: dict[str, Any], phase: str, task: str) -> Optional[dict[str, Any]]:
    return phases.get(phase, {}).get("tasks", {}).get(task)


def _p99(task: Optional[dict[str, Any]]) -> Optional[float]:
    return task["latency_ms"]["p99"] if task else None


def _it(task: Optional[dict[str, Any]]) -> Optional[float]:
    return task["it_per_s"] if task else None


def summarize(preset, phases: dict[str, Any]) -> dict[str, Any]:
    """The contract's summary: the high-priority task's P99 alone vs contended
    and the low-priority task's throughput loss; per-task ratios when a preset
    has more than one latency task. Missing phases give nulls."""
    alone_of = {tasks[0]: name for name, tasks in preset.phases if len(tasks) == 1}
    hp = next(t for t in preset.tasks if t.role == "hp")
    lp = next(t for t in preset.tasks if t.role == "lp")
    hp_alone = _p99(_task(phases, alone_of[hp.name], hp.name))
    hp_cont = _p99(_task(phases, "contended", hp.name))
    lp_alone = _it(_task(phases, alone_of[lp.name], lp.name))
    lp_cont = _it(_task(phases, "contended", lp.name))
    out: dict[str, Any] = {
        "hp_p99_alone_ms": hp_alone,
        "hp_p99_contended_ms": hp_cont,
        "p99_ratio": ratio(hp_cont, hp_alone),
        "lp_it_per_s_alone": lp_alone,
        "lp_it_per_s_contended": lp_cont,
        "lp_loss_pct": loss_pct(lp_alone, lp_cont),
    }
    if len(preset.tasks) > 2:
        per_task: dict[str, Any] = {}
        for t in preset.tasks:
            alone = _task(phases, alone_of[t.name], t.name)
            cont = _task(phases, "contended", t.name)
            if t.open_loop:
                a, c = _p99(alone), _p99(cont)
                per_task[t.name] = {
                    "role": t.role,
                    "p99_alone_ms": a,
                    "p99_contended_ms": c,
                    "p99_ratio": ratio(c, a),
                }
            else:
                a, c = _it(alone), _it(cont)
                per_task[t.name] = {
                    "role": t.role,
                    "it_per_s_alone": a,
                    "it_per_s_contended": c,
                    "loss_pct": loss_pct(a, c),
                }
        out["tasks"] = per_task
    return out
