#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""CPU smoke test of collective_cost.py: gloo, two ranks per group, a
host-bound and a work A mode, with no partner, a TP partner doing work
and a launch-bound TP partner, then the one-rank reference (--tp 1); the
result must carry every rank's collectives and the partner's rate. Exit
77 without torch."""

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
    bad = []
    runs = [(2, ("host50", "mm50"), ("none", "ringwork", "ringhost")),
            (1, ("host50",), ("none", "ringhost"))]
    for tp, modes, partners in runs:
        with tempfile.TemporaryDirectory() as d:
            out = os.path.join(d, "cc.json")
            rc = subprocess.run([sys.executable, TOOL, "--device", "cpu", "--tp", str(tp),
                                 "--a-modes", ",".join(modes), "--partners", ",".join(partners),
                                 "--seconds", "1", "--block", "4", "--out", out]).returncode
            if rc != 0:
                print(f"FAIL: --tp {tp}: exit {rc}")
                return 1
            res = json.load(open(out, encoding="utf-8"))
        cases = res.get("cases", [])
        want = [(p, m) for p in partners for m in modes]
        if [(c["partner"], c["a_mode"]) for c in cases] != want:
            bad.append(f"--tp {tp}: cases {cases}")
        for c in cases:
            what = f"--tp {tp} {c['partner']}"
            ranks = c["a_ranks"]
            if [r["rank"] for r in ranks] != list(range(tp)):
                bad.append(f"{what}: ranks {ranks}")
            if any(r["collectives"] < 4 or r["us_per_collective"] <= 0 for r in ranks):
                bad.append(f"{what}: no timed collectives {ranks}")
            if ranks and ranks[0]["collectives"] != ranks[-1]["collectives"]:
                bad.append(f"{what}: ranks disagree on the count")
            want_b = 0 if c["partner"] == "none" else tp
            if len(c["b_per_s"]) != want_b or any(x <= 0 for x in c["b_per_s"]):
                bad.append(f"{what}: partner rate {c['b_per_s']}")
            if len(c["b_per_s_with_a"]) != want_b or any(
                    x is None or x <= 0 for x in c["b_per_s_with_a"]):
                bad.append(f"{what}: partner rate next to A {c['b_per_s_with_a']}")
    for b in bad:
        print("FAIL:", b)
    print("collective_cost cpu:", "ok" if not bad else f"{len(bad)} problem(s)")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
