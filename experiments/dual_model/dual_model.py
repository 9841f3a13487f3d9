#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""The seeds' dual-model priority tests as one reproducible driver.

A high-priority task serves open-loop requests at a fixed rate while a
low-priority task runs back to back on the same GPU, each in its own process
(its own GPU context). Phases run in order: each task alone, then all
together. Runs unchanged on CUDA and ROCm builds of PyTorch, and on the CPU
for smoke tests.
"""
from __future__ import annotations

import argparse
import dataclasses
import datetime
import json
import os
import shlex
import sys
from typing import Any, Optional

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
# host_probe.py, shared with experiments/llm_tp
sys.path.insert(1, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "common"))

import protocol  # noqa: E402  (after the path fix-up above)
from presets import MODEL_SCALES, PRESETS, PRIORITY_LEVELS, Preset, scaled  # noqa: E402

EPILOG = """\
phases:
  test3, test4: hp_alone, lp_alone, contended
  bert3:        alone_high, alone_normal, alone_low, contended
  Each phase starts its tasks as separate processes, waits until every one has
  loaded its model (2 unmeasured passes), releases them together (the barrier),
  runs --warmup seconds unmeasured, then measures --duration seconds. Tasks of
  a contended phase keep running until every task has reported. With
  --rounds N the whole sequence runs N times; each phase's result pools its
  rounds (every request and iteration) and lists the rounds' own numbers.

measurement:
  open-loop task: request k is scheduled at t0 + k/rate; a late request is
    run at once (never skipped) and its latency counts from the scheduled
    arrival to the end of a device synchronize, so queueing is included.
  back-to-back task: iterations that start inside the window; it/s from the
    first one's start to the last one's end; img/s = it/s * batch.

examples:
  %(prog)s --preset test4 --duration 30 --out test4.json --md test4.md
  %(prog)s --preset bert3 --profile-dir timelines/
  %(prog)s --preset test4 --amdqp          (ROCm host with amdqpd running)
  %(prog)s --preset test4 --model-scale tiny --device cpu --duration 2 --warmup 1

exit status: 0 ok, 1 a task failed, 2 bad arguments, 3 the host cannot run it
  (no CUDA/ROCm device for --device cuda, no amdqpctl or amdqpd for --amdqp).
"""


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # type: ignore[override]
        self.print_usage(sys.stderr)
        self.exit(protocol.EXIT_USAGE, f"{self.prog}: error: {message}\n")


def _positive(text: str) -> float:
    try:
        v = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None
    if not v > 0:
        raise argparse.ArgumentTypeError(f"must be > 0, got {text}")
    return v


def _non_negative(text: str) -> float:
    try:
        v = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None
    if not v >= 0:
        raise argparse.ArgumentTypeError(f"must be >= 0, got {text}")
    return v


def _preset_name(text: str) -> str:
    if text not in PRESETS:
        raise argparse.ArgumentTypeError(
            f"unknown preset {text!r}; presets: {', '.join(sorted(PRESETS))}"
        )
    return text


def _count(text: str) -> int:
    try:
        v = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not an integer: {text!r}") from None
    if v < 1:
        raise argparse.ArgumentTypeError(f"must be >= 1, got {text}")
    return v


def build_parser() -> argparse.ArgumentParser:
    presets = "; ".join(f"{p.name}: {p.description}" for p in PRESETS.values())
    p = _Parser(
        prog=os.path.basename(sys.argv[0]) if sys.argv and sys.argv[0] else "dual_model.py",
        description=__doc__,
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument(
        "--preset",
        default="test4",
        type=_preset_name,
        metavar="{" + ",".join(sorted(PRESETS)) + "}",
        help=f"which test (default test4). {presets}",
    )
    p.add_argument(
        "--list-presets", action="store_true", help="print the presets' tasks and phases and exit"
    )
    p.add_argument(
        "--duration",
        type=_positive,
        default=30.0,
        metavar="S",
        help="measured seconds per phase (default 30)",
    )
    p.add_argument(
        "--warmup",
        type=_non_negative,
        default=5.0,
        metavar="S",
        help="unmeasured seconds per phase after the barrier (default 5)",
    )
    p.add_argument(
        "--device",
        choices=("auto", "cuda", "cpu"),
        default="auto",
        help="cuda (also ROCm builds of PyTorch), cpu, or auto: cuda when "
        "torch.cuda.is_available() (default auto)",
    )
    p.add_argument(
        "--model-scale",
        choices=MODEL_SCALES,
        default="full",
        help="full: the seeds' models, batches and inputs; tiny: batches 1/8/64/1024 "
        "-> 1/2/3/5, 32x32 images, a 2-layer BERT (hidden 64) with seq 16, for CPU "
        "smoke tests (default full)",
    )
    p.add_argument(
        "--rounds",
        type=_count,
        default=1,
        metavar="N",
        help="run the phases N times in turn (hp_alone, lp_alone, contended, "
        "hp_alone, ...), each window --duration long, and pool each phase's rounds: "
        "host disturbances then fall on the isolated and the contended phases "
        "alike (default 1)",
    )
    p.add_argument(
        "--host-probe-period",
        type=_non_negative,
        default=0.5,
        metavar="S",
        help="every task times a fixed burst of tiny operators (host time only) "
        "every S seconds while idle (open-loop tasks) or between iterations; the "
        "contended/alone ratio of the medians is the host slowdown amdqp-sim applies "
        "to that task's launches; 0: off (default 0.5)",
    )
    p.add_argument(
        "--phases",
        metavar="LIST",
        help="comma-separated subset of the preset's phases (default all, in order)",
    )
    p.add_argument(
        "--out",
        metavar="FILE",
        help="result JSON (Documentation/experiments.rst); rewritten after every phase",
    )
    p.add_argument("--md", metavar="FILE", help="markdown table of the result")
    p.add_argument(
        "--profile-dir",
        metavar="DIR",
        help="after the phases, capture each workload alone with torch.profiler "
        "and write its kernel timeline to DIR/<workload>.json",
    )
    p.add_argument(
        "--profile-requests",
        type=_count,
        default=30,
        metavar="N",
        help="requests (iterations) per profiled workload (default 30)",
    )
    p.add_argument(
        "--bert-impl",
        choices=("auto", "transformers", "builtin"),
        default="auto",
        help="BERT model class: transformers.BertModel, the built-in BERT-base-shaped "
        "encoder, or auto: transformers when it imports (default auto)",
    )
    p.add_argument(
        "--cpu-threads",
        type=_count,
        default=1,
        metavar="N",
        help="torch threads per task process on --device cpu (default 1)",
    )
    p.add_argument(
        "--amdqp",
        action="store_true",
        help="ROCm hosts: start each task through `amdqpctl run --priority "
        "high|normal|low --` (levels high=12 normal=7 low=2); requires amdqpd "
        "running (checked with `amdqpctl status --json`)",
    )
    p.add_argument(
        "--amdqpctl",
        default="amdqpctl",
        metavar="PATH",
        help="amdqpctl to use with --amdqp (default: the one on PATH)",
    )
    p.add_argument(
        "--progress-interval",
        type=_positive,
        default=5.0,
        metavar="S",
        help="seconds between progress lines on stderr (default 5)",
    )
    p.add_argument("--quiet", action="store_true", help="no progress lines on stderr")
    p.add_argument("--worker", help=argparse.SUPPRESS)
    return p


def _phases(preset: Preset, arg: Optional[str], parser: argparse.ArgumentParser) -> list[str]:
    if not arg:
        return preset.phase_names
    wanted = [x.strip() for x in arg.split(",") if x.strip()]
    unknown = [x for x in wanted if x not in preset.phase_names]
    if unknown or not wanted:
        parser.error(
            f"--phases {arg!r}: preset {preset.name} has phases {', '.join(preset.phase_names)}"
        )
    return [x for x in preset.phase_names if x in wanted]


def _list_presets() -> None:
    for p in PRESETS.values():
        print(f"{p.name}: {p.description}")
        for t in p.tasks:
            arrivals = f"{t.rate_per_s:g} req/s open loop" if t.open_loop else "back to back"
            seq = f" seq {t.seq_len}" if t.seq_len else ""
            print(
                f"  task {t.name}: role {t.role}, priority {t.priority} "
                f"({PRIORITY_LEVELS[t.priority]}), {t.model} bs{t.batch}{seq}, {arrivals}"
            )
        for name, tasks in p.phases:
            print(f"  phase {name}: {', '.join(tasks)}")


def _write_json(path: str, data: dict[str, Any]) -> None:
    tmp = path + ".tmp"
    with open(tmp, "w", encoding="utf-8") as f:
        json.dump(data, f, indent=1)
        f.write("\n")
    os.replace(tmp, path)


def main(argv: Optional[list[str]] = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["--worker"] and len(argv) == 2:
        import traceback

        import worker

        try:
            worker.main(argv[1])
        except Exception as e:  # the driver gets the reason, the log the traceback
            traceback.print_exc()
            protocol.fail(f"{type(e).__name__}: {e}", protocol.EXIT_RUN)
        return 0
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.list_presets:
        _list_presets()
        return 0
    preset = PRESETS[args.preset]
    phases = _phases(preset, args.phases, parser)

    import report_md
    import runner
    import stats
    import amdqp_launch

    amdqp_status = None
    amdqpctl = None
    if args.amdqp:
        try:
            amdqpctl = amdqp_launch.resolve(args.amdqpctl)
            amdqp_status = amdqp_launch.status(amdqpctl)
        except amdqp_launch.AmdqpUnavailable as e:
            sys.stderr.write(f"dual_model: error: {e}\n")
            return protocol.EXIT_ENV

    tasks = {t.name: scaled(t, args.model_scale) for t in preset.tasks}
    settings = runner.Settings(
        script=os.path.abspath(__file__),
        scale=args.model_scale,
        device=args.device,
        bert_impl=args.bert_impl,
        warmup_s=args.warmup,
        duration_s=args.duration,
        cpu_threads=args.cpu_threads,
        quiet=args.quiet,
        progress_interval_s=args.progress_interval,
        host_probe_period_s=args.host_probe_period,
        launch_prefix=(lambda t: amdqp_launch.prefix(amdqpctl, t.priority))
        if amdqpctl
        else (lambda t: []),
    )
    if amdqpctl:
        settings.check_ready = _tag_checker(amdqpctl, runner)
    result = _result_skeleton(args, preset, phases, tasks, amdqp_status)

    bodies: dict[str, list[dict[str, Any]]] = {p: [] for p in phases}
    try:
        for rnd in range(args.rounds):
            for phase in phases:
                names = dict(preset.phases)[phase]
                label = phase if args.rounds == 1 else f"{phase} {rnd + 1}/{args.rounds}"
                body, ready = runner.run_phase(settings, label, [tasks[n] for n in names])
                _record_ready(result, ready)
                bodies[phase].append(body)
                result["phases"][phase] = stats.pool_rounds(bodies[phase])
                result["summary"] = stats.summarize(preset, result["phases"])
                if args.out:
                    _write_json(args.out, result)
        if args.profile_dir:
            result["profiles"] = _profile_all(args, settings, tasks, runner)
    except runner.TaskFailed as e:
        sys.stderr.write(f"dual_model: error: {e}\n")
        if args.out and result["phases"]:
            _write_json(args.out, result)
        return e.code
    except KeyboardInterrupt:
        sys.stderr.write("dual_model: interrupted\n")
        return 130

    if args.out:
        _write_json(args.out, result)
    table = report_md.table(result)
    if args.md:
        with open(args.md, "w", encoding="utf-8") as f:
            f.write(table)
    sys.stdout.write(table)
    return 0


def _tag_checker(amdqpctl: str, runner):
    """Check on each task's READY that `amdqpctl run` tagged it, before any
    measurement: a run meant to show amdqp must not silently measure without."""

    def check(task, info: dict[str, Any]) -> None:
        if info.get("amdqp_priority") not in _level_names(task):
            raise runner.TaskFailed(
                f"--amdqp: task {task.name} runs with AMDQP_PRIORITY="
                f"{info.get('amdqp_priority')!r}, expected {task.priority!r}: "
                f"{amdqpctl} run did not tag it",
                protocol.EXIT_ENV,
            )
        if not info.get("amdqp_preload"):
            sys.stderr.write(
                f"dual_model: warning: task {task.name}: libamdqp-preload is in neither "
                "LD_PRELOAD nor HSA_TOOLS_LIB\n"
            )

    return check


def _result_skeleton(
    args, preset: Preset, phases: list[str], tasks, amdqp_status
) -> dict[str, Any]:
    import env_info

    return {
        "experiment": "dual_model",
        "preset": preset.name,
        "device": None,
        "command": shlex.join([sys.executable] + sys.argv),
        "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "versions": {
            "python": sys.version.split()[0],
            "torch": None,
            "cuda": None,
            "hip": None,
            "transformers": None,
            "driver": env_info.driver_version(),
        },
        "host": env_info.host(),
        "config": {
            "preset": preset.name,
            "description": preset.description,
            "duration_s": args.duration,
            "warmup_s": args.warmup,
            "rounds": args.rounds,
            "device_requested": args.device,
            "device_type": None,
            "model_scale": args.model_scale,
            "phases": phases,
            "bert_impl_requested": args.bert_impl,
            "cpu_threads": args.cpu_threads,
            "host_probe_period_s": args.host_probe_period,
            "amdqp": args.amdqp,
            "amdqp_status": amdqp_status,
            "profile_dir": args.profile_dir,
            "profile_requests": args.profile_requests if args.profile_dir else None,
            "sync": "device synchronize after every request/iteration",
            "tasks": [_task_config(t, args.model_scale) for t in tasks.values()],
        },
        "phases": {},
        "summary": {},
    }


def _record_ready(result: dict[str, Any], ready: dict[str, dict[str, Any]]) -> None:
    """What only the task processes know: device, torch build, model class."""
    first = next(iter(ready.values()))
    result["device"] = result["device"] or first["device"]
    result["config"]["device_type"] = first["device_type"]
    result["versions"].update(first["versions"])
    for name, info in ready.items():
        for t in result["config"]["tasks"]:
            if t["name"] == name:
                t["impl"] = info["impl"]
        if info["impl"] == "transformers":
            result["versions"]["transformers"] = info.get("transformers")


def _level_names(task) -> tuple[str, str]:
    return task.priority, str(PRIORITY_LEVELS[task.priority])


def _workload(t, scale: str) -> str:
    return t.workload_name + ("_tiny" if scale == "tiny" else "")


def _task_config(t, scale: str) -> dict[str, Any]:
    return {
        "name": t.name,
        "role": t.role,
        "model": t.model,
        "batch": t.batch,
        "rate_per_s": t.rate_per_s,
        "seq_len": t.seq_len or None,
        "image_size": t.image_size or None,
        "priority": t.priority,
        "priority_level": PRIORITY_LEVELS[t.priority],
        "workload": _workload(t, scale),
    }


def _profile_all(args, settings, tasks, runner) -> dict[str, Any]:
    os.makedirs(args.profile_dir, exist_ok=True)
    # Timelines are of the workload alone, as it runs without amdqp.
    settings = dataclasses.replace(settings, launch_prefix=lambda t: [])
    out: dict[str, Any] = {}
    for t in tasks.values():
        name = _workload(t, args.model_scale)
        if name in out:
            continue
        path = os.path.join(args.profile_dir, name + ".json")
        summary = runner.run_profile(settings, t, path, name, args.profile_requests)
        out[name] = {"file": path, "task": t.name, "summary": summary}
    return out


if __name__ == "__main__":
    sys.exit(main())
