#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Summary of repeated demo runs (scripts/demo-repeat.sh): each run's
verdict from its experiments/out/demo.json, side by side, and the median
of the verdict ratios against the 1.1x goal.

Usage: repeat_summary.py OUT.json RUN.json [RUN.json ...]
   (a RUN.json may carry a "wall_s" key that the driver added)

Writes OUT.json:
  {"runs": [{"run", "result", "ratio", "lo", "hi", "percentile", "n",
             "lp_loss", "without_amdqpd", "wall_s", "confine"}],
   "median_ratio", "target", "goal", "all_pass", "count", "confine"}
and prints a table. Runs with the both+amdqpd-confine phase add, per run,
"confine": {PHASE: {"hp_p99_vs_alone", "lp_loss"}} for suspension
(both+amdqpd), confinement and the static CU mask, and the summary's
"confine": the medians of each over the runs, the goal (issue 27: HP P99
<= 1.1x with LP loss <= 5 %) and whether the medians meet it. Exit status 0 when every run passed, 1 otherwise,
2 on unusable input."""
import json
import statistics
import sys

GOAL = 1.1


def run_row(k, doc):
    v = doc.get("verdict")
    if not v or "ratio_ci" not in v:
        raise ValueError(f"run {k}: no verdict (the demo did not reach it)")
    ci, q = v["ratio_ci"], v["percentile"]
    return {"run": k, "result": v["result"], "ratio": ci["ratio"], "lo": ci["lo"],
            "hi": ci["hi"], "percentile": q, "n": ci.get("n"),
            "lp_loss": v["lp_loss"].get("both+amdqpd"),
            "without_amdqpd": v.get(f"hp_p{q:g}_vs_alone", {}).get("both"),
            "wall_s": doc.get("wall_s"),
            "confine": {ph: {"hp_p99_vs_alone": x["hp_p99_vs_alone"], "lp_loss": x["lp_loss"]}
                        for ph, x in v.get("confine", {}).get("side_by_side", {}).items()}
                       or None}


def confine_medians(docs, rows):
    """Medians over the runs that have the confine phase, None without."""
    have = [r["confine"] for r in rows if r["confine"]]
    if not have:
        return None
    goal = next(d["verdict"]["confine"]["goal"] for d in docs if "confine" in d["verdict"])
    med = {}
    for ph in dict.fromkeys(k for c in have for k in c):
        vals = [c[ph] for c in have if ph in c]
        med[ph] = {k: statistics.median(v[k] for v in vals) for k in ("hp_p99_vs_alone", "lp_loss")}
    c = med["both+amdqpd-confine"]
    return {"runs": len(have), "median": med, "goal": goal,
            "met": c["hp_p99_vs_alone"] <= goal["hp_p99_vs_alone"]
            and c["lp_loss"] <= goal["lp_loss"]}


def summarize(docs):
    rows = [run_row(k, d) for k, d in enumerate(docs, 1)]
    if not rows:
        raise ValueError("no runs")
    targets = {d["verdict"]["target"] for d in docs}
    return {"runs": rows, "count": len(rows),
            "median_ratio": statistics.median(r["ratio"] for r in rows),
            "target": max(targets), "goal": GOAL,
            "all_pass": all(r["result"] == "pass" for r in rows),
            "confine": confine_medians(docs, rows)}


def table(s):
    lines = [f"{'run':>3}  {'verdict':<12} {'ratio':>6}  {'95 % interval':<14} "
             f"{'w/o amdqpd':>10} {'LP loss':>8} {'wall':>7}"]
    for r in s["runs"]:
        wall = "-" if r["wall_s"] is None else f"{r['wall_s']:.0f} s"
        lp = "-" if r["lp_loss"] is None else f"{r['lp_loss'] * 100:.1f} %"
        w = "-" if r["without_amdqpd"] is None else f"{r['without_amdqpd']:.2f}x"
        lines.append(f"{r['run']:>3}  {r['result'].upper():<12} {r['ratio']:5.2f}x  "
                     f"[{r['lo']:.2f}, {r['hi']:.2f}]   {w:>10} {lp:>8} {wall:>7}")
    passed = sum(r["result"] == "pass" for r in s["runs"])
    lines.append(f"{passed} of {s['count']} passed (target: the whole interval <= "
                 f"{s['target']:g}x); median ratio {s['median_ratio']:.2f}x against the "
                 f"goal {s['goal']:g}x ({'met' if s['median_ratio'] <= s['goal'] else 'not met'})")
    c = s.get("confine")
    if c:
        lines.append(f"medians over {c['runs']} runs: HP P99 x alone, LP loss")
        for ph, m in c["median"].items():
            lines.append(f"  {ph:<22} {m['hp_p99_vs_alone']:5.2f}x  {m['lp_loss'] * 100:5.1f} %")
        g = c["goal"]
        lines.append(f"confine goal (HP P99 <= {g['hp_p99_vs_alone']:g}x, LP loss <= "
                     f"{g['lp_loss'] * 100:g} %) by the medians: "
                     + ("met" if c["met"] else "not met"))
    return "\n".join(lines)


def main(argv):
    if len(argv) < 3:
        print(__doc__.split("\n\n")[1], file=sys.stderr)
        return 2
    try:
        docs = []
        for path in argv[2:]:
            with open(path) as f:
                docs.append(json.load(f))
        s = summarize(docs)
    except (OSError, ValueError, KeyError, TypeError) as e:
        print(f"repeat_summary.py: {e}", file=sys.stderr)
        return 2
    with open(argv[1], "w") as f:
        json.dump(s, f, indent=2)
    print(table(s))
    return 0 if s["all_pass"] else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv))
