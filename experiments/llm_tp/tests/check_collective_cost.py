#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""CPU smoke test of collective_cost.py: gloo, two ranks per group, a
host-bound and a work A mode, with no partner, a TP partner doing work and a
launch-bound TP partner; the result must carry every rank's collectives and the partner's
rate. Exit 77 without torch."""

import json
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
TOOL = os.path.join(os.path.dirname(HERE), "collective_cost.py")


def main() -> int:
    try:
        import torch  # noqa: F401
    except ImportError as exc:
        print(f"SKIP: no torch ({exc})")
        return 77
    with tempfile.TemporaryDirectory() as d:
        out = os.path.join(d, "cc.json")
        rc = subprocess.run([sys.executable, TOOL, "--device", "cpu", "--tp", "2",
                             "--a-modes", "host50,mm50", "--partners", "none,ringwork,ringhost",
                             "--seconds", "0.5", "--block", "4", "--out", out]).returncode
        if rc != 0:
            print(f"FAIL: exit {rc}")
            return 1
        res = json.load(open(out, encoding="utf-8"))
    bad = []
    cases = res.get("cases", [])
    want = [(p, m) for p in ("none", "ringwork", "ringhost") for m in ("host50", "mm50")]
    if [(c["partner"], c["a_mode"]) for c in cases] != want:
        bad.append(f"cases {cases}")
    for c in cases:
        ranks = c["a_ranks"]
        if [r["rank"] for r in ranks] != [0, 1]:
            bad.append(f"{c['partner']}: ranks {ranks}")
        if any(r["collectives"] < 4 or r["us_per_collective"] <= 0 for r in ranks):
            bad.append(f"{c['partner']}: no timed collectives {ranks}")
        if ranks and ranks[0]["collectives"] != ranks[-1]["collectives"]:
            bad.append(f"{c['partner']}: ranks disagree on the count")
        want_b = 0 if c["partner"] == "none" else 2
        if len(c["b_per_s"]) != want_b or any(x <= 0 for x in c["b_per_s"]):
            bad.append(f"{c['partner']}: partner rate {c['b_per_s']}")
    for b in bad:
        print("FAIL:", b)
    print("collective_cost cpu:", "ok" if not bad else f"{len(bad)} problem(s)")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
