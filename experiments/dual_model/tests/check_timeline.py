#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Validate kernel timeline files (format of Documentation/experiments.rst, the shape of the H200
fixtures): workload, device, torch, batch, period_s, requests of
[start_us, dur_us(, class)] with each request starting at 0, summary.

Usage: check_timeline.py FILE... [--requests N]
Exit 0 when every file is valid, 1 with one line per problem otherwise."""
from __future__ import annotations

import argparse
import json
import sys
from typing import Any

CLASSES = ("nccl", "gemm", "other")


def _number(v: Any) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def check(path: str, requests: int | None = None) -> list[str]:
    try:
        with open(path, encoding="utf-8") as f:
            d = json.load(f)
    except (OSError, ValueError) as e:
        return [str(e)]
    bad: list[str] = []
    for key, kind in (
        ("workload", str),
        ("device", str),
        ("torch", str),
        ("batch", int),
        ("requests", list),
        ("summary", dict),
    ):
        if not isinstance(d.get(key), kind):
            bad.append(f"{key!r} missing or not {kind.__name__}")
    if not _number(d.get("period_s")) or d["period_s"] < 0:
        bad.append("'period_s' missing or negative")
    if bad:
        return bad
    if d["batch"] < 1:
        bad.append(f"batch {d['batch']}")
    reqs = d["requests"]
    if requests is not None and len(reqs) != requests:
        bad.append(f"{len(reqs)} requests, expected {requests}")
    if not reqs:
        bad.append("no requests")
    for i, req in enumerate(reqs):
        if not isinstance(req, list) or not req:
            bad.append(f"request {i}: no kernels")
            continue
        prev = None
        for j, k in enumerate(req):
            where = f"request {i} kernel {j}"
            if not isinstance(k, list) or len(k) not in (2, 3):
                bad.append(f"{where}: not [start_us, dur_us(, class)]: {k!r}")
                break
            if not (_number(k[0]) and _number(k[1])) or k[0] < 0 or k[1] < 0:
                bad.append(f"{where}: start/duration not non-negative numbers: {k!r}")
                break
            if len(k) == 3 and k[2] not in CLASSES:
                bad.append(f"{where}: class {k[2]!r} not one of {CLASSES}")
                break
            if prev is not None and k[0] < prev:
                bad.append(f"{where}: starts before the previous kernel")
                break
            prev = k[0]
        if req and isinstance(req[0], list) and req[0] and req[0][0] != 0:
            bad.append(f"request {i}: first kernel starts at {req[0][0]}, not 0")
    wall = d.get("request_wall_us")
    if wall is not None and (len(wall) != len(reqs) or not all(_number(w) and w > 0 for w in wall)):
        bad.append("request_wall_us: not one positive time per request")
    if "rank" in d and not ("tp" in d and 0 <= d["rank"] < d["tp"]):
        bad.append("rank without a matching tp")
    return bad


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("files", nargs="+")
    ap.add_argument("--requests", type=int)
    a = ap.parse_args()
    failed = False
    for path in a.files:
        problems = check(path, a.requests)
        for p in problems:
            print(f"{path}: {p}")
        if not problems:
            print(f"{path}: ok")
        failed |= bool(problems)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
