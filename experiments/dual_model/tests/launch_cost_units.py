#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""launch_cost.py's pure parts, without a GPU: mode names and the stall
summary that turns A's round trips into the slice the other context got."""
from __future__ import annotations

import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

import launch_cost  # noqa: E402


def check(cond: bool, what: str) -> None:
    if not cond:
        sys.stderr.write(f"launch_cost_units: FAIL: {what}\n")
        sys.exit(1)


def main() -> int:
    check(launch_cost._spin_us("spin2000") == 2000.0, "spin2000 -> 2000 us")
    check(launch_cost._spin_us("spin0") is None, "spin0 is not a mode")
    check(launch_cost._spin_us("spinx") is None, "spinx is not a mode")
    check(launch_cost._spin_us("gap40") is None, "gap40 is not a spin mode")
    check(launch_cost._gap_s("spin40") is None, "spin40 is not a gap mode")
    check(abs(launch_cost._gap_s("gap160") - 160e-6) < 1e-12, "gap160 -> 160 us")
    check(launch_cost._gap_s("gap0") == 0.0, "gap0 is a gap of 0")
    check(launch_cost._gap_s("gap-1") is None, "gap-1 is not a mode")

    # Round trips of 14 us, every third one stalled behind a 2380-us slice.
    starts, per, t = [], [], 0.0
    for i in range(30):
        us = 2380.0 if i % 3 == 2 else 14.0
        starts.append(t)
        per.append(us)
        t += us * 1e-6 + 1e-6  # 1 us of host time between round trips
    st = launch_cost._stalls(starts, per)
    check(st["count"] == 10, f"10 stalls, got {st['count']}")
    check(st["us_p50"] == 2380.0 and st["us_max"] == 2380.0, f"stall length: {st}")
    # From a stall's end to the next's start: 1 + 14 + 1 + 14 + 1 us.
    check(abs(st["between_us_p50"] - 31.0) < 0.01, f"31 us between stalls: {st}")
    check(launch_cost._stalls([0.0, 1.0], [10.0, 20.0]) == {"count": 0}, "no stall")
    one = launch_cost._stalls([0.0], [500.0])
    check(one["count"] == 1 and "between_us_p50" not in one, f"one stall: {one}")
    print("launch_cost_units: all checks passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
