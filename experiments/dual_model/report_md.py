# SPDX-License-Identifier: MIT
"""The result as a markdown table: one row per task and phase, then the summary."""
from __future__ import annotations

from typing import Any, Optional


def _num(v: Optional[float], digits: int = 2) -> str:
    return "-" if v is None else f"{v:.{digits}f}"


def _rate(task: dict[str, Any]) -> str:
    r = task.get("rate_per_s")
    return f"{r:g}/s" if r else "back to back"


def table(result: dict[str, Any]) -> str:
    unit = "seq/s" if any(t["model"] == "bert_base" for t in result["config"]["tasks"]) else "img/s"
    lines = [
        f"### dual_model {result['preset']} on {result['device']}",
        "",
        f"| phase | task | role | model | batch | arrivals | requests / iterations "
        f"| P50 ms | P95 ms | P99 ms | max ms | it/s | {unit} |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for phase, body in result["phases"].items():
        for name, t in body["tasks"].items():
            model = t["model"] + (f" seq{t['seq_len']}" if t.get("seq_len") else "")
            if "latency_ms" in t:
                lat = t["latency_ms"]
                cells = [
                    str(t["requests"]),
                    _num(lat["p50"]),
                    _num(lat["p95"]),
                    _num(lat["p99"]),
                    _num(lat["max"]),
                    "-",
                    "-",
                ]
            else:
                cells = [
                    str(t["iterations"]),
                    "-",
                    "-",
                    "-",
                    "-",
                    _num(t["it_per_s"], 3),
                    _num(t["img_per_s"], 1),
                ]
            lines.append(
                "| "
                + " | ".join([phase, name, t["role"], model, str(t["batch"]), _rate(t)] + cells)
                + " |"
            )
    s = result["summary"]
    lines += [
        "",
        f"High priority P99: {_num(s['hp_p99_alone_ms'])} ms alone, "
        f"{_num(s['hp_p99_contended_ms'])} ms contended "
        f"(ratio {_num(s['p99_ratio'])}x). "
        f"Low priority: {_num(s['lp_it_per_s_alone'], 3)} it/s alone, "
        f"{_num(s['lp_it_per_s_contended'], 3)} it/s contended "
        f"(loss {_num(s['lp_loss_pct'], 1)} %).",
    ]
    for name, t in (s.get("tasks") or {}).items():
        if "p99_ratio" in t:
            lines.append(
                f"- {name} ({t['role']}): P99 {_num(t['p99_alone_ms'])} ms alone, "
                f"{_num(t['p99_contended_ms'])} ms contended (ratio {_num(t['p99_ratio'])}x)"
            )
        else:
            lines.append(
                f"- {name} ({t['role']}): {_num(t['it_per_s_alone'], 3)} it/s alone, "
                f"{_num(t['it_per_s_contended'], 3)} it/s contended "
                f"(loss {_num(t['loss_pct'], 1)} %)"
            )
    mech = (
        "amdqp (amdqpctl run + amdqpd)"
        if result["config"]["amdqp"]
        else "none (native GPU scheduling)"
    )
    lines += [
        "",
        f"Priority mechanism: {mech}. Measured: {result['date']}, "
        f"torch {result['versions']['torch']}.",
    ]
    return "\n".join(lines) + "\n"
