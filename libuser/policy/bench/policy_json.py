#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""Turn amdqp_policy_bench's Google Benchmark JSON into bench/out/policy.json.

Usage: policy_json.py RAW.json OUT.json

RAW is what --benchmark_out=RAW --benchmark_out_format=json wrote, with
--benchmark_repetitions=N. OUT gets, per benchmark, the policy's CPU time
per event (1e9 / items_per_second: the benchmarks count their events as
items) as the median of the repetitions, with their min and max, and the
run's context. Prints one summary line. scripts/bench.sh documents OUT.
"""
import json
import re
import statistics
import sys

CASES = {"BM_KernelEvents": "kernel_events", "BM_RequestCycle": "request_cycle"}


def parse_name(name):
    """'BM_KernelEvents/gpus:8/queues_per_gpu:2' -> (case, {'gpus': 8, ...})."""
    base, *args = name.split("/")
    params = {}
    for a in args:
        m = re.fullmatch(r"(\w+):(\d+)", a)
        if m:
            params[m.group(1)] = int(m.group(2))
    return CASES.get(base, base), params


def convert(raw):
    runs = {}
    order = []
    for b in raw.get("benchmarks", []):
        # Aggregates (mean, median, ...) are recomputed here per event.
        if b.get("run_type", "iteration") != "iteration":
            continue
        if "error_occurred" in b and b["error_occurred"]:
            raise SystemExit(f"policy_json: {b['name']} failed: {b.get('error_message')}")
        ips = b.get("items_per_second")
        if not ips:
            raise SystemExit(f"policy_json: {b['name']} has no items_per_second")
        name = b.get("run_name", b["name"])
        if name not in runs:
            order.append(name)
        runs.setdefault(name, []).append((1e9 / ips, b.get("iterations", 0)))
    if not runs:
        raise SystemExit("policy_json: no benchmark results in the input")
    out = []
    for name in order:
        per_event = [ns for ns, _ in runs[name]]
        case, params = parse_name(name)
        gpus = params.get("gpus")
        per_gpu = params.get("queues_per_gpu")
        out.append({
            "name": name,
            "case": case,
            "gpus": gpus,
            "queues": gpus * per_gpu if gpus and per_gpu else None,
            "ns_per_event": round(statistics.median(per_event), 1),
            "ns_per_event_min": round(min(per_event), 1),
            "ns_per_event_max": round(max(per_event), 1),
            "repetitions": len(per_event),
            "iterations": sum(n for _, n in runs[name]),
        })
    ctx = raw.get("context", {})
    return {
        "what": "amdqp_policy_bench (libuser/policy/bench): CPU time of the "
                "policy per activity event, median over repetitions",
        "unit": "ns",
        "build_type": ctx.get("amdqp_build_type", "unknown"),
        "context": {k: ctx[k] for k in ("date", "host_name", "num_cpus", "mhz_per_cpu",
                                        "cpu_scaling_enabled", "load_avg",
                                        "library_build_type") if k in ctx},
        "benchmarks": out,
    }


def summary(doc, path):
    parts = []
    for b in doc["benchmarks"]:
        plural = "" if b["gpus"] == 1 else "s"
        where = f"{b['gpus']} GPU{plural}/{b['queues']} queues" if b["queues"] else b["name"]
        parts.append(f"{b['case']} {where} {b['ns_per_event']:.0f}")
    reps = doc["benchmarks"][0]["repetitions"]
    line = (f"policy: ns per event (median of {reps}, {doc['build_type']} build): "
            + ", ".join(parts) + f" -> {path}")
    if doc["build_type"].lower() != "release":
        line += " (not a Release build: not a measure of the policy)"
    return line


def main(argv):
    if len(argv) != 3:
        print(__doc__.strip().splitlines()[2], file=sys.stderr)
        return 2
    with open(argv[1]) as f:
        doc = convert(json.load(f))
    with open(argv[2], "w") as f:
        json.dump(doc, f, indent=1)
        f.write("\n")
    print(summary(doc, argv[2]))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
