# SPDX-License-Identifier: MIT
"""Percentiles, the phases' task records, the summary and the markdown table."""

import host_probe


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
            "dropped": res["dropped"], "dropped_warmup": res.get("dropped_warmup", 0),
            "overloaded": bool(res.get("overloaded", False)),
            "first_drop_s": res.get("first_drop_s"),
            "max_queue_delay_s": cfg.get("max_queue_delay_s"),
            "warmup_requests": res["warmup_requests"],
            "ttft_ms": dist_summary(res["ttfts_ms"]), "tpot_ms": dist_summary(res["tpots_ms"]),
            "ttfts_ms": res["ttfts_ms"], "tpots_ms": res["tpots_ms"],
            **decode_split(res.get("decode_split_ms", [])), **probe_fields(res)}


def decode_split(split):
    """Per request: the decode step's mean host issue time and token wait."""
    if not split:
        return {}
    issue = [round(a, 4) for a, _ in split]
    wait = [round(b, 4) for _, b in split]
    return {"decode_issue_ms": issue, "decode_wait_ms": wait,
            "decode_issue_mean_ms": sum(issue) / len(issue),
            "decode_wait_mean_ms": sum(wait) / len(wait)}


def probe_fields(res):
    """The rank's HostProbe.take() fields, as it returned them (none when off)."""
    return {k: res[k] for k in ("host_probe_us", "host_probe_t_s", "host_probe",
                                "host_probe_ranks") if k in res}


def lp_task(cfg, res, duration):
    return {"role": "lp", "model": cfg["model_label"], "tp": cfg["tp"],
            "batch": cfg["lp_batch"], "mode": cfg["lp_mode"],
            "tokens_per_s": res["tokens_per_s"], "steps": res["steps"],
            "tokens": res["tokens"],
            "step_ms": dist_summary([u / 1e3 for u in res["step_us"]]),
            "tokens_per_s_by_second": per_second(res.get("step_end_s", []),
                                                 res["tokens"] / max(1, res["steps"]),
                                                 duration),
            **probe_fields(res)}


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
    # Phases whose server could not keep up (requests dropped at the
    # admission bound): their TTFT tail is the bound's, not the queue's.
    s["overloaded_phases"] = [name for name, ph in phases.items() if ph.get("overloaded")]
    s["dropped"] = {name: ph["tasks"]["hp"]["dropped"] for name, ph in phases.items()
                    if "hp" in ph.get("tasks", {})}
    s["ttft_ratio"] = _ratio(s["ttft_p99_contended_ms"], s["ttft_p99_alone_ms"])
    s["tpot_ratio"] = _ratio(s["tpot_p99_contended_ms"], s["tpot_p99_alone_ms"])
    a, c = s["lp_tokens_per_s_alone"], s["lp_tokens_per_s_contended"]
    s["lp_loss_pct"] = (100.0 * (1.0 - c / a)) if a and c is not None else None
    # The host's slowdown in the contended phase, per job (host_probe.py).
    for job, alone in (("hp", "hp_alone"), ("lp", "lp_alone")):
        pa, pc = get(alone, job, "host_probe"), get("contended", job, "host_probe")
        s[f"host_probe_ratio_{job}"] = host_probe.ratio(pa, pc) if pa and pc else None
    s["decode_issue_ratio"] = _ratio(get("contended", "hp", "decode_issue_mean_ms"),
                                     get("hp_alone", "hp", "decode_issue_mean_ms"))
    s["decode_wait_ratio"] = _ratio(get("contended", "hp", "decode_wait_mean_ms"),
                                    get("hp_alone", "hp", "decode_wait_mean_ms"))
    return s


def _f(v, digits=2):
    return "-" if v is None else f"{v:.{digits}f}"


def markdown(result):
    cfg = result["config"]
    lines = [f"### llm_tp: {cfg['model_label']}, tp {cfg['tp']} on {result['device']}", "",
             f"HP: {cfg['rate']}/s {cfg['arrival']} arrivals, prompt {cfg['prompt_len']} + "
             f"{cfg['new_tokens']} new tokens; LP: {cfg['lp_mode']} batch {cfg['lp_batch']}; "
             f"{cfg['duration']} s per phase after {cfg['warmup']} s warm-up"
             + (f" (lp_alone {cfg['lp_alone_duration']} s)." if cfg.get("lp_alone_duration")
                else "."), "",
             "| phase | HP requests | dropped | TTFT p50 / p95 / p99 / max (ms) "
             "| TPOT p50 / p95 / p99 / max (ms) | LP tokens/s |",
             "|---|---|---|---|---|---|"]
    for name, ph in result["phases"].items():
        hp = ph["tasks"].get("hp")
        lp = ph["tasks"].get("lp")
        if hp:
            t, p = hp["ttft_ms"], hp["tpot_ms"]
            ttft = " / ".join(_f(t[k]) for k in ("p50", "p95", "p99", "max"))
            tpot = " / ".join(_f(p[k]) for k in ("p50", "p95", "p99", "max"))
            reqs = str(hp["requests"])
            drop = str(hp["dropped"]) + (" (overloaded)" if hp.get("overloaded") else "")
        else:
            ttft = tpot = reqs = drop = "-"
        lines.append(f"| {name} | {reqs} | {drop} | {ttft} | {tpot} | "
                     f"{_f(lp['tokens_per_s'], 1) if lp else '-'} |")
    s = result["summary"]
    lines += ["", f"TTFT p99 ratio contended/alone: {_f(s['ttft_ratio'])}x; "
              f"TPOT p99 ratio: {_f(s['tpot_ratio'])}x; "
              f"LP throughput loss: {_f(s['lp_loss_pct'], 1)} %", ""]
    if s.get("overloaded_phases"):
        lines += [f"Overloaded (requests waiting over {cfg.get('max_queue_delay_s')} s "
                  f"dropped): {', '.join(s['overloaded_phases'])}", ""]
    if s.get("host_probe_ratio_hp") is not None or s.get("decode_issue_ratio") is not None:
        lines += [f"Host probe contended/alone: HP {_f(s.get('host_probe_ratio_hp'))}x, "
                  f"LP {_f(s.get('host_probe_ratio_lp'))}x; HP decode step contended/alone: "
                  f"host issue {_f(s.get('decode_issue_ratio'))}x, token wait "
                  f"{_f(s.get('decode_wait_ratio'))}x", ""]
    return "\n".join(lines)
