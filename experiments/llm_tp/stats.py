# SPDX-License-Identifier: MIT
"""Percentiles, the phases' task records, the summary and the markdown table."""


def percentile(values, q):
    """Linear interpolation between closest ranks (numpy's default)."""
    if not values:
        return None
    s = sorted(values)
    k = (len(s) - 1) * q / 100.0
    lo = int(k)
    hi = min(lo + 1, len(s) - 1)
    return s[lo] + (s[hi] - s[lo]) * (k - lo)


def dist_summary(values):
    if not values:
        return {"p50": None, "p95": None, "p99": None, "max": None, "mean": None}
    return {"p50": percentile(values, 50), "p95": percentile(values, 95),
            "p99": percentile(values, 99), "max": max(values),
            "mean": sum(values) / len(values)}


def hp_task(cfg, res):
    return {"role": "hp", "model": cfg["model_label"], "tp": cfg["tp"],
            "requests": res["requests"], "rate_per_s": cfg["rate"],
            "arrival": cfg["arrival"], "prompt_len": cfg["prompt_len"],
            "new_tokens": cfg["new_tokens"], "scheduled": res["scheduled"],
            "dropped": res["dropped"], "warmup_requests": res["warmup_requests"],
            "ttft_ms": dist_summary(res["ttfts_ms"]), "tpot_ms": dist_summary(res["tpots_ms"]),
            "ttfts_ms": res["ttfts_ms"], "tpots_ms": res["tpots_ms"]}


def lp_task(cfg, res):
    return {"role": "lp", "model": cfg["model_label"], "tp": cfg["tp"],
            "batch": cfg["lp_batch"], "mode": cfg["lp_mode"],
            "tokens_per_s": res["tokens_per_s"], "steps": res["steps"],
            "tokens": res["tokens"],
            "step_ms": dist_summary([u / 1e3 for u in res["step_us"]]),
            "tokens_per_s_by_second": per_second(res.get("step_end_s", []),
                                                 res["tokens"] / max(1, res["steps"]),
                                                 cfg["duration"])}


def per_second(ends, tokens_per_step, duration):
    """Throughput in each second of the window (shows drift and stalls)."""
    buckets = [0] * max(1, int(duration + 0.999))
    for t in ends:
        buckets[min(len(buckets) - 1, max(0, int(t)))] += 1
    return [round(n * tokens_per_step, 1) for n in buckets]


def _ratio(a, b):
    if a is None or b is None or b == 0:
        return None
    return a / b


def summary(phases):
    def get(phase, task, *keys):
        node = phases.get(phase, {}).get("tasks", {}).get(task)
        for k in keys:
            if node is None:
                return None
            node = node.get(k)
        return node

    s = {"ttft_p99_alone_ms": get("hp_alone", "hp", "ttft_ms", "p99"),
         "ttft_p99_contended_ms": get("contended", "hp", "ttft_ms", "p99"),
         "tpot_p99_alone_ms": get("hp_alone", "hp", "tpot_ms", "p99"),
         "tpot_p99_contended_ms": get("contended", "hp", "tpot_ms", "p99"),
         "lp_tokens_per_s_alone": get("lp_alone", "lp", "tokens_per_s"),
         "lp_tokens_per_s_contended": get("contended", "lp", "tokens_per_s")}
    s["ttft_ratio"] = _ratio(s["ttft_p99_contended_ms"], s["ttft_p99_alone_ms"])
    s["tpot_ratio"] = _ratio(s["tpot_p99_contended_ms"], s["tpot_p99_alone_ms"])
    a, c = s["lp_tokens_per_s_alone"], s["lp_tokens_per_s_contended"]
    s["lp_loss_pct"] = (100.0 * (1.0 - c / a)) if a and c is not None else None
    return s


def _f(v, digits=2):
    return "-" if v is None else f"{v:.{digits}f}"


def markdown(result):
    cfg = result["config"]
    lines = [f"### llm_tp: {cfg['model_label']}, tp {cfg['tp']} on {result['device']}", "",
             f"HP: {cfg['rate']}/s {cfg['arrival']} arrivals, prompt {cfg['prompt_len']} + "
             f"{cfg['new_tokens']} new tokens; LP: {cfg['lp_mode']} batch {cfg['lp_batch']}; "
             f"{cfg['duration']} s per phase after {cfg['warmup']} s warm-up.", "",
             "| phase | HP requests | TTFT p50 / p95 / p99 / max (ms) "
             "| TPOT p50 / p95 / p99 / max (ms) | LP tokens/s |",
             "|---|---|---|---|---|"]
    for name, ph in result["phases"].items():
        hp = ph["tasks"].get("hp")
        lp = ph["tasks"].get("lp")
        if hp:
            t, p = hp["ttft_ms"], hp["tpot_ms"]
            ttft = " / ".join(_f(t[k]) for k in ("p50", "p95", "p99", "max"))
            tpot = " / ".join(_f(p[k]) for k in ("p50", "p95", "p99", "max"))
            reqs = str(hp["requests"])
        else:
            ttft = tpot = reqs = "-"
        lines.append(f"| {name} | {reqs} | {ttft} | {tpot} | "
                     f"{_f(lp['tokens_per_s'], 1) if lp else '-'} |")
    s = result["summary"]
    lines += ["", f"TTFT p99 ratio contended/alone: {_f(s['ttft_ratio'])}x; "
              f"TPOT p99 ratio: {_f(s['tpot_ratio'])}x; "
              f"LP throughput loss: {_f(s['lp_loss_pct'], 1)} %", ""]
    return "\n".join(lines)
