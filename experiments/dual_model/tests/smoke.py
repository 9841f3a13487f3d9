#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""ctest harness of the dual_model driver.

  smoke.py --driver D run --workdir DIR [--profile-requests N] [--amdqp-fake] -- ARGS...
      run the driver (tiny, CPU) with --out/--md in DIR, then validate the
      result, the table and any timelines; exit 77 (skip) without torch.
  smoke.py --driver D fail --code N --message REGEX -- ARGS...
      the driver must exit N and say REGEX on stderr.
"""
from __future__ import annotations

import argparse
import glob
import json
import os
import re
import shutil
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import check_result  # noqa: E402
import check_timeline  # noqa: E402

SKIP = 77


def _torch_or_skip() -> None:
    try:
        import torch  # noqa: F401
        import torchvision  # noqa: F401
    except Exception as e:  # any import failure means the smoke test cannot run here
        print(f"SKIP: torch/torchvision not importable by {sys.executable}: {e}")
        sys.exit(SKIP)


def _fail(msg: str) -> None:
    print(f"FAIL: {msg}")
    sys.exit(1)


def _run_driver(driver: str, args: list[str], env: dict[str, str]) -> subprocess.CompletedProcess:
    cmd = [sys.executable, driver] + args
    print("+", " ".join(cmd), flush=True)
    p = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=600, check=False)
    sys.stdout.write(p.stdout)
    sys.stdout.write(p.stderr)
    return p


def cmd_run(a: argparse.Namespace) -> None:
    _torch_or_skip()
    shutil.rmtree(a.workdir, ignore_errors=True)
    os.makedirs(a.workdir)
    out = os.path.join(a.workdir, "result.json")
    md = os.path.join(a.workdir, "result.md")
    args = a.args + ["--out", out, "--md", md]
    env = dict(os.environ)
    log = os.path.join(a.workdir, "amdqpctl.log")
    if a.amdqp_fake:
        env["FAKE_AMDQPCTL_LOG"] = log
        args += ["--amdqp", "--amdqpctl", os.path.join(HERE, "fake_amdqpctl.sh")]
    if a.profile_requests:
        args += [
            "--profile-dir",
            os.path.join(a.workdir, "timelines"),
            "--profile-requests",
            str(a.profile_requests),
        ]
    p = _run_driver(a.driver, args, env)
    if p.returncode != 0:
        _fail(f"driver exited {p.returncode}")
    with open(md, encoding="utf-8") as f:
        if f.read() not in p.stdout:
            _fail("the markdown table on stdout differs from --md")
    problems = check_result.check(out, md)
    for msg in problems:
        print(f"{out}: {msg}")
    if problems:
        _fail("result JSON or table invalid")
    with open(out, encoding="utf-8") as f:
        result = json.load(f)
    if a.profile_requests:
        files = sorted(glob.glob(os.path.join(a.workdir, "timelines", "*.json")))
        workloads = {t["workload"] for t in result["config"]["tasks"]}
        if len(files) != len(workloads):
            _fail(f"{len(files)} timeline files for {len(workloads)} workloads: {files}")
        for path in files:
            bad = check_timeline.check(path, a.profile_requests)
            for msg in bad:
                print(f"{path}: {msg}")
            if bad:
                _fail("timeline invalid")
    if a.amdqp_fake:
        _check_amdqp(result, log)
    if a.rounds:
        _check_rounds(result, a.rounds)
    print(f"ok: {out}")


def _check_rounds(result: dict, n: int) -> None:
    """--rounds N: every phase pools N windows and lists each one."""
    if result["config"].get("rounds") != n:
        _fail(f"config.rounds is {result['config'].get('rounds')!r}, not {n}")
    for name, phase in result["phases"].items():
        rounds = phase.get("rounds", [])
        if len(rounds) != n:
            _fail(f"phase {name}: {len(rounds)} rounds listed, not {n}")
        for task, r in phase["tasks"].items():
            per = [x[task] for x in rounds]
            if "latencies_ms" in r:
                if r["requests"] != sum(x["requests"] for x in per) or r["requests"] != len(
                    r["latencies_ms"]
                ):
                    _fail(f"phase {name} task {task}: requests not the rounds' sum")
            elif r["iterations"] != sum(x["iterations"] for x in per):
                _fail(f"phase {name} task {task}: iterations not the rounds' sum")


def _check_amdqp(result: dict, log: str) -> None:
    """Every task went through `amdqpctl run` at its role's level."""
    with open(log, encoding="utf-8") as f:
        calls = f.read().splitlines()
    if (
        not result["config"]["amdqp"]
        or result["config"]["amdqp_status"]["daemon_state"] != "running"
    ):
        _fail("config does not record the amdqp mode and daemon state")
    for phase, body in result["phases"].items():
        for name, t in body["tasks"].items():
            if t.get("amdqp_priority_env") != t["priority"]:
                _fail(f"{phase}/{name}: AMDQP_PRIORITY {t.get('amdqp_priority_env')!r}")
            if not any(c.startswith(f"run --priority {t['priority']} -- ") for c in calls):
                _fail(f"{phase}/{name}: no `amdqpctl run --priority {t['priority']}` call")
    if not any(c == "status --json" for c in calls):
        _fail("amdqpctl status --json was not asked")


def cmd_fail(a: argparse.Namespace) -> None:
    env = dict(os.environ)
    for kv in a.env:
        k, _, v = kv.partition("=")
        env[k] = v
    if a.needs_torch:
        _torch_or_skip()
    p = _run_driver(a.driver, a.args, env)
    if p.returncode != a.code:
        _fail(f"exit status {p.returncode}, expected {a.code}")
    if not re.search(a.message, p.stderr):
        _fail(f"stderr does not match {a.message!r}")
    print("ok: failed as expected")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--driver", required=True)
    sub = ap.add_subparsers(dest="cmd", required=True)
    r = sub.add_parser("run")
    r.add_argument("--workdir", required=True)
    r.add_argument("--profile-requests", type=int, default=0)
    r.add_argument("--amdqp-fake", action="store_true")
    r.add_argument("--rounds", type=int, default=0, help="check a --rounds N result")
    r.add_argument("args", nargs=argparse.REMAINDER)
    f = sub.add_parser("fail")
    f.add_argument("--code", type=int, required=True)
    f.add_argument("--message", required=True)
    f.add_argument("--env", action="append", default=[], metavar="K=V")
    f.add_argument("--needs-torch", action="store_true")
    f.add_argument("args", nargs=argparse.REMAINDER)
    a = ap.parse_args()
    if a.args[:1] == ["--"]:
        a.args = a.args[1:]
    cmd_run(a) if a.cmd == "run" else cmd_fail(a)


if __name__ == "__main__":
    main()
