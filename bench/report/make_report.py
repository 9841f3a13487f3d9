#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Render bench/REPORT.md (and its PNG plots) from the measurement files.

Every section names where its numbers were measured; a missing input is
reported as such in the text, never filled in. scripts/report.sh ('make
report') produces the inputs first; this script only reads them.
"""
from __future__ import annotations

import argparse
import datetime as dt
import json
import subprocess
import sys
from pathlib import Path

import report_plots as plots
import report_sections as sections


def load(path: Path):
    try:
        with path.open() as f:
            return json.load(f)
    except FileNotFoundError:
        return None
    except json.JSONDecodeError as e:
        sys.exit(f"make_report: {path}: not JSON ({e})")


def git_head(root: Path) -> str:
    try:
        out = subprocess.run(["git", "-C", str(root), "rev-parse", "--short", "HEAD"],
                             capture_output=True, text=True, check=True)
        return out.stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown"


def main() -> int:
    root = Path(__file__).resolve().parents[2]
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--bench-out", type=Path, default=root / "bench/out",
                    help="VM and host benchmark results (default: bench/out)")
    ap.add_argument("--demo", type=Path, default=root / "experiments/out/demo.json",
                    help="the end-to-end demo's result (make demo)")
    ap.add_argument("--results", type=Path, default=root / "experiments/results",
                    help="committed GPU measurements (default: experiments/results)")
    ap.add_argument("--sim-out", type=Path, default=root / "bench/out/sim",
                    help="amdqp-sim validate/sweep JSON (default: bench/out/sim)")
    ap.add_argument("--out", type=Path, default=root / "bench/REPORT.md",
                    help="the report to write (plots go to a 'report' folder next to it)")
    args = ap.parse_args()

    fig_dir = args.out.parent / "report"
    fig_dir.mkdir(parents=True, exist_ok=True)
    rel = fig_dir.relative_to(args.out.parent)

    results = sections.load_results(args.results)
    sim_validate = load(args.sim_out / "validate.json")
    sim_sweep = load(args.sim_out / "sweep.json")

    figs = {}
    for res in results:
        name = plots.latency_cdf(res["data"], fig_dir, res["stem"])
        if name:
            figs[res["stem"]] = f"{rel}/{name}"
    if sim_sweep:
        name = plots.sweep(sim_sweep, fig_dir)
        if name:
            figs["sweep"] = f"{rel}/{name}"

    now = dt.datetime.now(dt.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    parts = [
        sections.header(now, git_head(root)),
        sections.control_path(load(args.bench_out / "control-path.json")),
        sections.tagging(load(args.bench_out / "tagging.json")),
        sections.control_loop(load(args.bench_out / "control-loop.json"),
                              load(args.bench_out / "control-loop-native.json")),
        sections.demo(load(args.demo)),
        sections.gpu_results(results, figs),
        sections.launch_cost(args.results),
        sections.simulator(sim_validate, sim_sweep, figs, results),
        sections.not_measured(),
    ]
    args.out.write_text("\n".join(p.rstrip() + "\n" for p in parts))
    print(f"make_report: wrote {args.out} and {len(figs)} plot(s) in {fig_dir}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
