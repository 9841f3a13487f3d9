# SPDX-License-Identifier: MIT
"""Plots of the report (matplotlib, Agg backend: no display needed)."""
from __future__ import annotations

from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def _cdf(values):
    xs = sorted(values)
    n = len(xs)
    return xs, [(i + 1) / n for i in range(n)]


def latency_cdf(result: dict, out_dir: Path, stem: str):
    """One curve per (phase, latency task); None when there is nothing to plot."""
    fig, ax = plt.subplots(figsize=(6.4, 4.0))
    curves = 0
    for pname, ph in result.get("phases", {}).items():
        for tname, t in ph.get("tasks", {}).items():
            vals = t.get("latencies_ms") or t.get("ttfts_ms")
            if not vals:
                continue
            xs, ys = _cdf(vals)
            ax.plot(xs, ys, label=f"{pname}: {tname}")
            curves += 1
    if not curves:
        plt.close(fig)
        return None
    ax.set_xscale("log")
    ax.set_xlabel("latency from scheduled arrival (ms)")
    ax.set_ylabel("fraction of requests")
    ax.axhline(0.99, color="grey", linewidth=0.5, linestyle=":")
    ax.set_title(f"{result.get('preset')} on {result.get('device')}", fontsize=9)
    ax.legend(fontsize=7)
    ax.grid(True, which="both", alpha=0.3)
    name = f"cdf-{stem}.png"
    fig.tight_layout()
    fig.savefig(out_dir / name, dpi=110)
    plt.close(fig)
    return name


def sweep(data: dict, out_dir: Path):
    """HP P99 / isolated against the unmap+CWSR cost, one line per approach."""
    series = {}
    for p in data.get("points", []):
        cost = p.get("params", {}).get("cost_us")
        if cost is None or p.get("p99_ratio") is None:
            continue
        series.setdefault(p.get("approach", "?"), []).append((cost, p["p99_ratio"]))
    if not series:
        return None
    fig, ax = plt.subplots(figsize=(6.4, 4.0))
    for name, pts in sorted(series.items()):
        pts.sort()
        ax.plot([c for c, _ in pts], [r for _, r in pts], marker="o", markersize=3, label=name)
    ax.axhline(1.1, color="green", linewidth=0.8, linestyle="--", label="1.1x isolated")
    native = [p for p in data.get("points", []) if p.get("approach") == "native"]
    if native:
        ax.axhline(native[0]["p99_ratio"], color="red", linewidth=0.8, linestyle=":",
                   label="no amdqpd")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("unmap + CWSR save/restore cost per runlist update (us)")
    ax.set_ylabel("high-priority P99 / isolated")
    ax.set_title("MI308X, simulated (tools/amdqp-sim)", fontsize=9)
    ax.legend(fontsize=7)
    ax.grid(True, which="both", alpha=0.3)
    fig.tight_layout()
    fig.savefig(out_dir / "sweep.png", dpi=110)
    plt.close(fig)
    return "sweep.png"
