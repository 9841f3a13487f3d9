#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Validate a dual_model result JSON (Documentation/experiments.rst) and its markdown table.

Usage: check_result.py RESULT.json [--md TABLE.md] [--preset NAME]
Exit 0 when valid, 1 with one line per problem otherwise. Usable on GPU
results before they are committed, not only in the smoke tests."""
from __future__ import annotations

import argparse
import datetime
import json
import math
import sys
from typing import Any

TOP_KEYS = (
    "experiment",
    "preset",
    "device",
    "command",
    "date",
    "versions",
    "config",
    "phases",
    "summary",
)
VERSION_KEYS = ("python", "torch", "driver")
SUMMARY_KEYS = (
    "hp_p99_alone_ms",
    "hp_p99_contended_ms",
    "p99_ratio",
    "lp_it_per_s_alone",
    "lp_it_per_s_contended",
    "lp_loss_pct",
)
PERCENTILES = ("p50", "p95", "p99", "max", "mean")
PRESET_PHASES = {
    "test3": ["hp_alone", "lp_alone", "contended"],
    "test4": ["hp_alone", "lp_alone", "contended"],
    "bert3": ["alone_high", "alone_normal", "alone_low", "contended"],
}


def _percentile(values: list[float], q: float) -> float:
    s = sorted(values)
    pos = (len(s) - 1) * q / 100.0
    lo = int(pos)
    hi = min(lo + 1, len(s) - 1)
    return s[lo] + (s[hi] - s[lo]) * (pos - lo)


def _close(a: float, b: float, rel: float = 1e-3, abs_: float = 2e-3) -> bool:
    return math.isclose(a, b, rel_tol=rel, abs_tol=abs_)


class Checker:
    def __init__(self) -> None:
        self.problems: list[str] = []

    def expect(self, ok: bool, what: str) -> bool:
        if not ok:
            self.problems.append(what)
        return ok

    def latency_task(self, where: str, t: dict[str, Any]) -> None:
        for k in ("role", "model", "batch", "rate_per_s", "requests", "latency_ms", "latencies_ms"):
            self.expect(k in t, f"{where}: no {k!r}")
        if not all(k in t for k in ("requests", "latency_ms", "latencies_ms", "rate_per_s")):
            return
        lat, summ = t["latencies_ms"], t["latency_ms"]
        self.expect(t["role"] in ("hp", "normal", "lp"), f"{where}: role {t['role']!r}")
        self.expect(t["rate_per_s"] > 0, f"{where}: rate_per_s {t['rate_per_s']} <= 0")
        self.expect(
            t["requests"] == len(lat), f"{where}: requests {t['requests']} != {len(lat)} latencies"
        )
        if not self.expect(t["requests"] > 0, f"{where}: no requests measured"):
            return
        self.expect(all(v > 0 for v in lat), f"{where}: a latency <= 0")
        if not self.expect(all(k in summ for k in PERCENTILES), f"{where}: latency_ms keys"):
            return
        self.expect(
            summ["p50"] <= summ["p95"] <= summ["p99"] <= summ["max"],
            f"{where}: percentiles not ordered: {summ}",
        )
        for q in (50, 95, 99):
            self.expect(
                _close(summ[f"p{q}"], _percentile(lat, q)),
                f"{where}: p{q} {summ[f'p{q}']} is not the p{q} of latencies_ms",
            )
        self.expect(_close(summ["max"], max(lat)), f"{where}: max is not max(latencies_ms)")
        self.expect(_close(summ["mean"], sum(lat) / len(lat)), f"{where}: mean is wrong")
        self.issue_split(where, t)

    def issue_split(self, where: str, t: dict[str, Any]) -> None:
        """Each request's host issue time is part of its service time."""
        issued, svc = t.get("issues_ms"), t.get("services_ms")
        if not self.expect(issued is not None and "issue_ms" in t, f"{where}: no issues_ms"):
            return
        if not self.expect(len(issued) == len(svc or []), f"{where}: {len(issued)} issues_ms"):
            return
        self.expect(
            all(0 < i <= s + 1e-3 for i, s in zip(issued, svc)),
            f"{where}: an issue time <= 0 or over its service time",
        )
        self.expect(_close(t["issue_ms"]["max"], max(issued)), f"{where}: issue_ms.max")

    def throughput_task(self, where: str, t: dict[str, Any]) -> None:
        for k in ("role", "model", "batch", "iterations", "it_per_s", "img_per_s"):
            if not self.expect(k in t, f"{where}: no {k!r}"):
                return
        self.expect(t["role"] == "lp", f"{where}: throughput task with role {t['role']!r}")
        self.expect(t["iterations"] >= 1, f"{where}: iterations {t['iterations']}")
        self.expect(t["it_per_s"] > 0, f"{where}: it_per_s {t['it_per_s']} <= 0")
        self.expect(
            _close(t["img_per_s"], t["it_per_s"] * t["batch"], rel=1e-3, abs_=0.01),
            f"{where}: img_per_s {t['img_per_s']} != it_per_s * batch",
        )

    def phases(self, r: dict[str, Any], preset: str) -> None:
        phases = r["phases"]
        expected = r["config"].get("phases") or PRESET_PHASES.get(preset)
        self.expect(
            list(phases) == list(expected), f"phases {list(phases)} != configured {expected}"
        )
        for name, body in phases.items():
            self.expect(body.get("duration_s", 0) > 0, f"{name}: duration_s")
            tasks = body.get("tasks") or {}
            self.expect(bool(tasks), f"{name}: no tasks")
            if name == "contended":
                self.expect(len(tasks) >= 2, f"contended has {len(tasks)} task(s)")
            for tname, t in tasks.items():
                where = f"{name}/{tname}"
                if "latency_ms" in t or "latencies_ms" in t:
                    self.latency_task(where, t)
                else:
                    self.throughput_task(where, t)
                self.host_probe(where, t, r["config"].get("host_probe_period_s"))

    def host_probe(self, where: str, t: dict[str, Any], period: float | None) -> None:
        """The in-situ host probe: present when on, consistent; a back-to-back
        task always has slack between iterations, so it has samples."""
        if not period:
            self.expect("host_probe" not in t, f"{where}: host_probe while off")
            return
        if not self.expect("host_probe" in t, f"{where}: no host_probe (period {period})"):
            return
        p, us = t["host_probe"], t.get("host_probe_us", [])
        self.expect(p["n"] == len(us), f"{where}: host_probe.n {p['n']} != {len(us)} samples")
        ts = t.get("host_probe_t_s", [])
        self.expect(len(ts) == len(us), f"{where}: {len(ts)} host_probe_t_s, {len(us)} samples")
        if "iterations" in t:
            self.expect(bool(us), f"{where}: no host probe sample in a back-to-back task")
        if us:
            self.expect(
                0 < min(us) <= p["median_us"] <= max(us),
                f"{where}: host_probe median {p['median_us']} outside its samples",
            )

    def summary(self, r: dict[str, Any]) -> None:
        s = r["summary"]
        for k in SUMMARY_KEYS:
            self.expect(k in s, f"summary: no {k!r}")
        if not all(k in s for k in SUMMARY_KEYS):
            return
        hp = next(t for t in r["config"]["tasks"] if t["role"] == "hp")
        lp = next(t for t in r["config"]["tasks"] if t["role"] == "lp")
        alone = {next(iter(b["tasks"])): b for n, b in r["phases"].items() if len(b["tasks"]) == 1}
        cont = r["phases"].get("contended", {}).get("tasks", {})
        if hp["name"] in alone:
            self.expect(
                s["hp_p99_alone_ms"] == alone[hp["name"]]["tasks"][hp["name"]]["latency_ms"]["p99"],
                "summary: hp_p99_alone_ms is not the hp_alone P99",
            )
        if hp["name"] in cont:
            self.expect(
                s["hp_p99_contended_ms"] == cont[hp["name"]]["latency_ms"]["p99"],
                "summary: hp_p99_contended_ms is not the contended P99",
            )
        if lp["name"] in alone:
            self.expect(
                s["lp_it_per_s_alone"] == alone[lp["name"]]["tasks"][lp["name"]]["it_per_s"],
                "summary: lp_it_per_s_alone is not the lp_alone it/s",
            )
        if lp["name"] in cont:
            self.expect(
                s["lp_it_per_s_contended"] == cont[lp["name"]]["it_per_s"],
                "summary: lp_it_per_s_contended is not the contended it/s",
            )
        if s["hp_p99_alone_ms"] and s["hp_p99_contended_ms"] is not None:
            self.expect(
                s["p99_ratio"] is not None
                and _close(
                    s["p99_ratio"], s["hp_p99_contended_ms"] / s["hp_p99_alone_ms"], abs_=1e-3
                ),
                f"summary: p99_ratio {s['p99_ratio']} != contended / alone",
            )
        else:
            self.expect(s["p99_ratio"] is None, "summary: p99_ratio without both P99s")
        if s["lp_it_per_s_alone"] and s["lp_it_per_s_contended"] is not None:
            want = (1 - s["lp_it_per_s_contended"] / s["lp_it_per_s_alone"]) * 100
            self.expect(
                s["lp_loss_pct"] is not None and _close(s["lp_loss_pct"], want, abs_=0.01),
                f"summary: lp_loss_pct {s['lp_loss_pct']} != {want:.2f}",
            )

    def result(self, r: dict[str, Any], preset: str | None) -> None:
        for k in TOP_KEYS:
            self.expect(k in r, f"no top-level {k!r}")
        if self.problems:
            return
        self.expect(r["experiment"] == "dual_model", f"experiment {r['experiment']!r}")
        if preset:
            self.expect(r["preset"] == preset, f"preset {r['preset']!r}, expected {preset!r}")
        self.expect(isinstance(r["device"], str) and bool(r["device"]), "device is not a name")
        self.expect(
            isinstance(r["command"], str) and "dual_model" in r["command"],
            "command does not name the driver",
        )
        try:
            when = datetime.datetime.fromisoformat(r["date"])
            self.expect(when.utcoffset() == datetime.timedelta(0), "date is not UTC")
        except (TypeError, ValueError):
            self.expect(False, f"date {r['date']!r} is not ISO 8601")
        for k in VERSION_KEYS:
            self.expect(k in r["versions"], f"versions: no {k!r}")
        self.expect("cuda" in r["versions"] or "hip" in r["versions"], "versions: no cuda/hip")
        self.expect(isinstance(r["config"].get("tasks"), list), "config: no tasks list")
        if self.problems:
            return
        self.phases(r, r["preset"])
        self.summary(r)

    def markdown(self, text: str, r: dict[str, Any]) -> None:
        lines = text.splitlines()
        header = next((ln for ln in lines if ln.startswith("| phase |")), None)
        if not self.expect(header is not None, "md: no table header"):
            return
        for col in ("P50 ms", "P95 ms", "P99 ms", "max ms", "it/s"):
            self.expect(col in header, f"md: no {col!r} column")
        rows = [
            ln
            for ln in lines
            if ln.startswith("| ") and ln is not header and not ln.startswith("|---")
        ]
        rows = [[c.strip() for c in ln.strip("|").split("|")] for ln in rows]
        cols = [c.strip() for c in header.strip("|").split("|")]
        for phase, body in r["phases"].items():
            for tname, t in body["tasks"].items():
                row = next((x for x in rows if x[0] == phase and x[1] == tname), None)
                if not self.expect(row is not None, f"md: no row for {phase}/{tname}"):
                    continue
                cell = dict(zip(cols, row))
                if "latency_ms" in t:
                    self.expect(
                        cell.get("P99 ms") == f"{t['latency_ms']['p99']:.2f}",
                        f"md: {phase}/{tname} P99 {cell.get('P99 ms')!r}",
                    )
                else:
                    self.expect(
                        cell.get("it/s") == f"{t['it_per_s']:.3f}",
                        f"md: {phase}/{tname} it/s {cell.get('it/s')!r}",
                    )
        self.expect(
            any("loss" in ln and "ratio" in ln for ln in lines),
            "md: no summary line with ratio and loss",
        )


def check(path: str, md: str | None = None, preset: str | None = None) -> list[str]:
    c = Checker()
    try:
        with open(path, encoding="utf-8") as f:
            r = json.load(f)
    except (OSError, ValueError) as e:
        return [f"{path}: {e}"]
    c.result(r, preset)
    if md and not c.problems:
        with open(md, encoding="utf-8") as f:
            c.markdown(f.read(), r)
    return c.problems


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("result")
    ap.add_argument("--md")
    ap.add_argument("--preset")
    a = ap.parse_args()
    problems = check(a.result, a.md, a.preset)
    for p in problems:
        print(f"{a.result}: {p}")
    if not problems:
        print(f"{a.result}: ok")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
