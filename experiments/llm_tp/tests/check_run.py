#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Runs llm_tp.py and checks what it did (the CTest smoke tests).

  check_run.py [--needs MOD,...] [--expect-exit N] [--validate]
               [--min-requests N] [--tp N] [--threads N] -- COMMAND...

{out}, {md} and {prof} in COMMAND become paths in a fresh temporary folder.
Exit 77 (CTest: skipped) when a module in --needs is not importable by this
interpreter. --validate checks the result JSON against the experiments'
data contract, the markdown table and the --profile-dir timelines.
"""

import argparse
import importlib
import json
import math
import os
import re
import subprocess
import sys
import tempfile

SKIP = 77


def probe_problems(where, task, cfg, back_to_back):
    """The in-situ host probe: present when on, consistent, and never
    missing from a back-to-back job (there is always slack between steps)."""
    if not cfg.get("host_probe_period_s"):
        return [] if "host_probe" not in task else [f"{where}: host_probe while off"]
    if "host_probe" not in task:
        return [f"{where}: host_probe missing (host_probe_period_s > 0)"]
    p, us = task["host_probe"], task.get("host_probe_us", [])
    errs = []
    if p["n"] != len(us):
        errs.append(f"{where}: host_probe.n {p['n']} but {len(us)} samples")
    ts = task.get("host_probe_t_s", [])
    if len(ts) != len(us) or ts != sorted(ts) or (ts and ts[0] < 0):
        errs.append(f"{where}: host_probe_t_s is not one time >= 0 per sample, in order")
    if back_to_back and not us:
        errs.append(f"{where}: no host probe sample in a back-to-back job")
    if us and not (min(us) <= p["median_us"] <= max(us) and min(us) > 0):
        errs.append(f"{where}: host_probe median {p['median_us']} outside its samples")
    # Every rank samples when rank 0 does: one summary per rank, rank 0's
    # its own, the others with as many samples (one more or less where a
    # sample straddles the window's start: each rank's own clock says).
    ranks = task.get("host_probe_ranks")
    tp = cfg.get("tp", 1)
    if not isinstance(ranks, list) or len(ranks) != tp:
        return errs + [f"{where}: host_probe_ranks is not one summary per rank ({tp}): {ranks!r}"]
    if ranks[0] != p:
        errs.append(f"{where}: host_probe_ranks[0] {ranks[0]} is not host_probe {p}")
    for r, q in enumerate(ranks):
        if not isinstance(q, dict) or not isinstance(q.get("n"), int) or abs(q["n"] - p["n"]) > 1:
            errs.append(f"{where}: host_probe_ranks[{r}] {q} has not rank 0's {p['n']} samples")
        elif q["n"] and not q.get("median_us", 0) > 0:
            errs.append(f"{where}: host_probe_ranks[{r}] median {q.get('median_us')} not > 0")
    return errs


def overload_problems(name, phase, hp, doc, args):
    """The admission bound's fields: every measured request served or
    dropped, the phase flagged exactly when requests were dropped, and the
    phases the test expects overloaded (and only those) flagged."""
    errs = []
    flag = phase.get("overloaded")
    if not isinstance(flag, bool):
        return [f"{name}: phase 'overloaded' is {flag!r}, not a bool"]
    if not hp:
        return [] if not flag else [f"{name}: overloaded without an HP job"]
    for key in ("dropped", "dropped_warmup", "scheduled"):
        if not isinstance(hp.get(key), int) or hp[key] < 0:
            return [f"{name}: hp.{key} is {hp.get(key)!r}, not a count"]
    if hp.get("overloaded") is not flag:
        errs.append(f"{name}: hp.overloaded {hp.get('overloaded')!r} != phase's {flag!r}")
    if hp["requests"] + hp["dropped"] != hp["scheduled"]:
        errs.append(f"{name}: {hp['requests']} served + {hp['dropped']} dropped != "
                    f"{hp['scheduled']} scheduled")
    if flag != (hp["dropped"] + hp["dropped_warmup"] > 0):
        errs.append(f"{name}: overloaded {flag} but {hp['dropped']} + "
                    f"{hp['dropped_warmup']} (warm-up) dropped")
    if flag and hp.get("first_drop_s") is None:
        errs.append(f"{name}: overloaded without first_drop_s")
    bound = doc["config"].get("max_queue_delay_s")
    if bound and hp["ttfts_ms"]:
        # a served request waited at most the bound, then one prefill
        worst = bound * 1e3 + args.max_prefill_ms
        if max(hp["ttfts_ms"]) > worst:
            errs.append(f"{name}: a TTFT of {max(hp['ttfts_ms']):.0f} ms passed the "
                        f"{bound} s admission bound (+{args.max_prefill_ms} ms)")
    if args.expect_overloaded is not None:
        want = name in args.expect_overloaded
        if flag != want:
            errs.append(f"{name}: overloaded is {flag}, expected {want}")
        if want and not hp["dropped"]:
            errs.append(f"{name}: overloaded but no measured request dropped")
    in_summary = name in (doc["summary"].get("overloaded_phases") or [])
    if in_summary != flag:
        errs.append(f"{name}: summary.overloaded_phases disagrees with the phase's flag")
    if (doc["summary"].get("dropped") or {}).get(name) != hp["dropped"]:
        errs.append(f"{name}: summary.dropped[{name}] is not hp.dropped")
    return errs


def problems_in_result(doc, args):
    errs = []

    def need(cond, msg):
        if not cond:
            errs.append(msg)

    for key in ("experiment", "preset", "device", "command", "date", "versions", "config",
                "phases", "summary"):
        need(key in doc, f"top-level key {key!r} missing")
    if errs:
        return errs
    need(doc["experiment"] == "llm_tp", "experiment is not llm_tp")
    need(re.match(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$", doc["date"]) is not None,
         f"date {doc['date']!r} is not ISO 8601 UTC")
    need("llm_tp.py" in doc["command"], "command does not name llm_tp.py")
    for key in ("python", "torch", "transformers", "driver"):
        need(key in doc["versions"], f"versions.{key} missing")
    need("cuda" in doc["versions"] or "hip" in doc["versions"], "versions.cuda/hip missing")
    need(doc["config"].get("tp") == args.tp, f"config.tp is not {args.tp}")
    threads = doc["config"].get("intra_op_threads")
    need(isinstance(threads, int) and threads >= 1,
         f"config.intra_op_threads is {threads!r}, not a count >= 1")
    if args.pinned:
        sets = doc["config"].get("cpu_sets") or {}
        ranks = [set(c) for job in ("hp", "lp") for c in sets.get(job, [])]
        need(len(ranks) == 2 * args.tp and all(ranks),
             f"config.cpu_sets has {len(ranks)} non-empty rank sets, not {2 * args.tp}")
        need(sum(map(len, ranks)) == len(set().union(*ranks)),
             "config.cpu_sets: two ranks share a CPU")
    if args.threads is not None:
        need(threads == args.threads, f"config.intra_op_threads is {threads}, not {args.threads}")
    need(set(doc["phases"]) == {"hp_alone", "lp_alone", "contended"},
         f"phases are {sorted(doc['phases'])}")
    for name, phase in doc["phases"].items():
        cfg = doc["config"]
        want_s = (cfg.get("lp_alone_duration") or cfg["duration"] if name == "lp_alone"
                  else cfg["duration"])
        need(phase.get("duration_s") == want_s,
             f"{name}: duration_s is {phase.get('duration_s')!r}, not {want_s}")
        tasks = phase.get("tasks", {})
        want = {"hp_alone": {"hp"}, "lp_alone": {"lp"}, "contended": {"hp", "lp"}}[name]
        need(set(tasks) == want, f"{name}: tasks {sorted(tasks)}, expected {sorted(want)}")
        hp = tasks.get("hp")
        errs += overload_problems(name, phase, hp, doc, args)
        if hp:
            need(hp["role"] == "hp" and hp["tp"] == args.tp, f"{name}: hp role/tp wrong")
            n = hp["requests"]
            need(n >= args.min_requests, f"{name}: {n} HP requests, want >= {args.min_requests}")
            need(len(hp["ttfts_ms"]) == n and len(hp["tpots_ms"]) == n,
                 f"{name}: {n} requests but {len(hp['ttfts_ms'])} TTFTs, "
                 f"{len(hp['tpots_ms'])} TPOTs")
            for metric in ("ttft_ms", "tpot_ms"):
                d = hp[metric]
                if n:
                    need(0 < d["p50"] <= d["p95"] <= d["p99"] <= d["max"],
                         f"{name}: {metric} percentiles out of order: {d}")
            need(all(t > 0 for t in hp["ttfts_ms"]), f"{name}: a TTFT <= 0")
            if n:
                # latency counts from the scheduled arrival: TTFT >= prefill alone
                need(max(hp["ttfts_ms"]) >= hp["ttft_ms"]["p99"], f"{name}: max < p99")
        lp = tasks.get("lp")
        if lp:
            need(lp["role"] == "lp" and lp["tp"] == args.tp, f"{name}: lp role/tp wrong")
            need(lp["tokens_per_s"] > 0, f"{name}: LP tokens_per_s is {lp['tokens_per_s']}")
            need(lp["steps"] > 0, f"{name}: LP steps is {lp['steps']}")
            need(lp["batch"] == doc["config"]["lp_batch"], f"{name}: LP batch wrong")
            secs = len(lp["tokens_per_s_by_second"])
            need(secs == max(1, math.ceil(want_s)),
                 f"{name}: {secs} per-second LP buckets for a {want_s} s phase")
        for job, t in tasks.items():
            errs += probe_problems(f"{name}.{job}", t, doc["config"], job == "lp")
        if hp and hp["requests"]:
            split = [len(hp.get(k, [])) for k in ("decode_issue_ms", "decode_wait_ms")]
            need(split == [hp["requests"]] * 2,
                 f"{name}: decode_issue_ms/decode_wait_ms have {split} values, not "
                 f"{hp['requests']}")
    if args.max_wall is not None and doc.get("wall_s", 0) > args.max_wall:
        errs.append(f"wall_s {doc.get('wall_s')} over {args.max_wall} s")
    s = doc["summary"]
    for key in ("ttft_p99_alone_ms", "ttft_p99_contended_ms", "ttft_ratio",
                "tpot_p99_alone_ms", "tpot_p99_contended_ms", "tpot_ratio",
                "lp_tokens_per_s_alone", "lp_tokens_per_s_contended", "lp_loss_pct"):
        need(s.get(key) is not None, f"summary.{key} missing or null")
    if not errs:
        ratio = s["ttft_p99_contended_ms"] / s["ttft_p99_alone_ms"]
        need(abs(ratio - s["ttft_ratio"]) < 1e-6, "summary.ttft_ratio inconsistent")
        if doc["config"].get("host_probe_period_s"):
            lp_a = doc["phases"]["lp_alone"]["tasks"]["lp"]["host_probe"]["median_us"]
            lp_c = doc["phases"]["contended"]["tasks"]["lp"]["host_probe"]["median_us"]
            need(s.get("host_probe_ratio_lp") is not None
                 and abs(s["host_probe_ratio_lp"] - lp_c / lp_a) < 1e-9,
                 f"summary.host_probe_ratio_lp {s.get('host_probe_ratio_lp')} is not "
                 f"{lp_c} / {lp_a}")
    return errs


def problems_in_timelines(prof_dir, tp, all_ranks):
    llm_tp = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    sys.path[:0] = [llm_tp, os.path.join(os.path.dirname(llm_tp), "common")]
    from trace_timeline import load
    errs = []
    files = sorted(os.listdir(prof_dir)) if os.path.isdir(prof_dir) else []
    for job in ("hp", "lp"):
        ranks = range(tp) if all_ranks else [0]
        for r in ranks:
            # the driver writes gzip-compressed JSON (.json.gz)
            name = [f for f in files if f.endswith(f"_{job}_rank{r}.json.gz")]
            if not name:
                errs.append(f"no {job} timeline for rank {r} in {prof_dir} ({files})")
                continue
            with open(os.path.join(prof_dir, name[0]), "rb") as f:
                if f.read(2) != b"\x1f\x8b":
                    errs.append(f"{name[0]}: not gzip-compressed")
            doc = load(os.path.join(prof_dir, name[0]))
            for key in ("workload", "device", "torch", "batch", "period_s", "requests",
                        "summary", "rank", "tp"):
                if key not in doc:
                    errs.append(f"{name[0]}: key {key!r} missing")
            reqs = doc.get("requests", [])
            if not reqs or not all(reqs):
                errs.append(f"{name[0]}: empty requests")
                continue
            for req in reqs:
                if req[0][0] != 0:
                    errs.append(f"{name[0]}: a request does not start at 0")
                    break
                bad = [k for k in req if len(k) != 3 or k[1] < 0
                       or k[2] not in ("nccl", "gemm", "other")]
                if bad:
                    errs.append(f"{name[0]}: malformed kernels {bad[:3]}")
                    break
            if doc.get("rank") != r or doc.get("tp") != tp:
                errs.append(f"{name[0]}: rank/tp {doc.get('rank')}/{doc.get('tp')}")
    return errs


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--needs", default="")
    p.add_argument("--expect-exit", type=int, default=0)
    p.add_argument("--expect-stderr", default=None)
    p.add_argument("--validate", action="store_true")
    p.add_argument("--min-requests", type=int, default=1)
    p.add_argument("--tp", type=int, default=1)
    p.add_argument("--all-ranks", action="store_true")
    p.add_argument("--threads", type=int, default=None)
    p.add_argument("--pinned", action="store_true")
    p.add_argument("--min-cores", type=int, default=0)
    p.add_argument("--expect-overloaded", type=lambda v: [x for x in v.split(",") if x],
                   default=None, metavar="PHASES",
                   help="comma-separated phases that must be overloaded (dropped "
                        "requests); every other phase must not be ('' : none)")
    p.add_argument("--max-prefill-ms", type=float, default=5000.0,
                   help="slack over --max-queue-delay a served request's TTFT may have")
    p.add_argument("--max-wall", type=float, default=None,
                   help="the run's wall_s must not exceed this")
    p.add_argument("--min-gpus", type=int, default=0,
                   help="exit 77 (skipped) when torch sees fewer CUDA GPUs")
    p.add_argument("cmd", nargs=argparse.REMAINDER)
    args = p.parse_args()
    cmd = args.cmd[1:] if args.cmd[:1] == ["--"] else args.cmd
    for mod in filter(None, args.needs.split(",")):
        try:
            importlib.import_module(mod)
        except ImportError as exc:
            print(f"SKIP: {mod} is not importable by {sys.executable} ({exc})")
            return SKIP
    if args.min_gpus:
        import torch
        have = torch.cuda.device_count() if torch.cuda.is_available() else 0
        if have < args.min_gpus:
            print(f"SKIP: torch sees {have} CUDA GPU(s), the test needs {args.min_gpus}")
            return SKIP
    if args.min_cores:
        sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
        import cpu_pinning
        have = len(cpu_pinning.physical_cores())
        if have < args.min_cores:
            print(f"SKIP: {have} physical core(s) usable, the test needs {args.min_cores}")
            return SKIP
    tmp = tempfile.mkdtemp(prefix="llm_tp-test-")
    paths = {"{out}": os.path.join(tmp, "result.json"), "{md}": os.path.join(tmp, "table.md"),
             "{prof}": os.path.join(tmp, "timelines")}
    cmd = [paths.get(a, a) for a in cmd]
    print("running:", " ".join(cmd), flush=True)
    proc = subprocess.run(cmd, stderr=subprocess.PIPE, text=True)
    sys.stderr.write(proc.stderr)
    if proc.returncode != args.expect_exit:
        print(f"FAIL: exit status {proc.returncode}, expected {args.expect_exit}")
        return 1
    if args.expect_stderr and not re.search(args.expect_stderr, proc.stderr):
        print(f"FAIL: stderr does not match {args.expect_stderr!r}")
        return 1
    if args.validate:
        with open(paths["{out}"]) as f:
            doc = json.load(f)
        errs = problems_in_result(doc, args)
        if "--md" in cmd:
            with open(paths["{md}"]) as f:
                table = f.read()
            for phase in ("hp_alone", "lp_alone", "contended"):
                if f"| {phase} |" not in table:
                    errs.append(f"markdown table has no {phase} row")
        if "--profile-dir" in cmd:
            errs += problems_in_timelines(paths["{prof}"], args.tp, args.all_ranks)
        for e in errs:
            print("FAIL:", e)
        if errs:
            print(f"(output kept in {tmp})")
            return 1
    print("PASS")
    return 0


if __name__ == "__main__":
    sys.exit(main())
