# SPDX-License-Identifier: MIT
"""Percentiles and the run summary (no numpy: the parent process stays light)."""
from __future__ import annotations

from typing import Any, Optional, Sequence

import host_probe


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


def _pool_task(runs: list[dict[str, Any]]) -> dict[str, Any]:
    """One task's results of several windows as one: requests and iterations
    pooled, percentiles over all of them, the rate over the summed time."""
    out = dict(runs[-1])
    if "latencies_ms" in out:
        lat = [v for r in runs for v in r["latencies_ms"]]
        svc = [v for r in runs for v in r.get("services_ms", [])]
        issued = [v for r in runs for v in r.get("issues_ms", [])]
        out.update(
            requests=sum(r["requests"] for r in runs),
            late_starts=sum(r["late_starts"] for r in runs),
            latencies_ms=lat,
            latency_ms=latency_summary(lat),
            services_ms=svc,
            service_ms=latency_summary(svc),
        )
        if issued:
            out.update(issues_ms=issued, issue_ms=latency_summary(issued))
    else:
        its = [v for r in runs for v in r.get("iterations_ms", [])]
        n = sum(r["iterations"] for r in runs)
        secs = sum(r["measured_s"] for r in runs)
        rate = n / secs
        items = runs[-1]["img_per_s"] / runs[-1]["it_per_s"] if runs[-1]["it_per_s"] else 0
        out.update(
            iterations=n,
            measured_s=round(secs, 4),
            it_per_s=round(rate, 4),
            img_per_s=round(rate * items, 2),
            iterations_ms=its,
            iter_ms=latency_summary(its),
        )
    _pool_probe(out, runs)
    return out


def _pool_probe(out: dict[str, Any], runs: list[dict[str, Any]]) -> None:
    if all("host_probe_us" in r for r in runs):
        # Times stay relative to each round's own window.
        samples = [v for r in runs for v in r["host_probe_us"]]
        times = [t for r in runs for t in r.get("host_probe_t_s", [])]
        out.update(host_probe_us=samples, host_probe_t_s=times,
                   host_probe=host_probe.summarize(samples))


def _round_digest(task: dict[str, Any]) -> dict[str, Any]:
    if "latencies_ms" in task:
        return {"requests": task["requests"], "p50_ms": task["latency_ms"]["p50"],
                "p99_ms": task["latency_ms"]["p99"]}
    return {"iterations": task["iterations"], "it_per_s": task["it_per_s"]}


def pool_rounds(bodies: list[dict[str, Any]]) -> dict[str, Any]:
    """The phase as run in several rounds (dual_model --rounds): every task's
    requests/iterations pooled, each round's own numbers kept next to them."""
    if len(bodies) == 1:
        return bodies[0]
    names = list(bodies[0]["tasks"])
    return {
        "duration_s": sum(b["duration_s"] for b in bodies),
        "warmup_s": bodies[0]["warmup_s"],
        "tasks": {n: _pool_task([b["tasks"][n] for b in bodies]) for n in names},
        "rounds": [{n: _round_digest(b["tasks"][n]) for n in names} for b in bodies],
    }


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
    # The host's slowdown in the contended phase, per role (host_probe.py).
    for role, t in (("hp", hp), ("lp", lp)):
        a = _task(phases, alone_of[t.name], t.name) or {}
        c = _task(phases, "contended", t.name) or {}
        if "host_probe" in a and "host_probe" in c:
            out[f"host_probe_ratio_{role}"] = host_probe.ratio(a["host_probe"], c["host_probe"])
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
