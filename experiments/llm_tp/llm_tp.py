#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""DeepSeek-class tensor-parallel experiment: an interactive high-priority
LLM server and a low-priority batch job sharing the same GPUs.

Two jobs, each tensor parallel over --tp ranks (one process per GPU per job,
torch.distributed: NCCL/RCCL on GPUs, gloo on the CPU; each job its own
world and rendezvous port; rank r of both jobs on GPU r):

  hp  interactive server: open-loop requests at --rate per second (Poisson
      or fixed arrivals); each request is a --prompt-len token prompt
      (prefill) then --new-tokens decode steps with a KV cache, batch 1.
      Rank 0 drives arrivals and broadcasts each request. Measured:
      time to first token (from the *scheduled* arrival, so queueing
      counts) and time per output token.
  lp  batch job: continuous generation at --lp-batch (or --lp-mode train:
      forward + backward steps), measured in tokens/s.

Phases: hp_alone, lp_alone, contended (both at once); each runs --warmup
seconds (not counted) then --duration measured seconds.

Exit status: 0 done, 1 a job failed at run time, 2 bad input or a missing
prerequisite (torch, transformers, GPUs, amdqpd, root for --trace).
"""

import argparse
import datetime
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(1, os.path.join(os.path.dirname(HERE), "common"))

EXIT_USAGE = 2
PHASES = ("hp_alone", "lp_alone", "contended")


def log_to_stderr(quiet):
    def log(msg):
        if not quiet:
            print(f"llm_tp: {msg}", file=sys.stderr, flush=True)
    return log


def fail(msg, code=EXIT_USAGE):
    print(f"llm_tp: error: {msg}", file=sys.stderr, flush=True)
    sys.exit(code)


def parse_args(argv):
    p = argparse.ArgumentParser(
        prog="llm_tp.py",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        description=__doc__.split("\n\n", 1)[0].replace("\n", " ") + ".",
        epilog="""\
examples:
  # one GPU, DeepSeek-V3 architecture (random, small), 30 s per phase
  llm_tp.py --model deepseek --tp 1 --duration 30 --out ds.json --md ds.md \\
            --profile-dir timelines/
  # 8 GPUs on a ROCm host, both jobs under amdqpd, ftrace capture of the
  # contended phase (root)
  sudo llm_tp.py --model deepseek --tp 8 --amdqp --trace --out ds-tp8.json
  # CPU only (gloo), tiny dense model: a smoke test
  llm_tp.py --model dense --model-scale tiny --device cpu --tp 2 \\
            --duration 3 --warmup 1 --rate 4 --out smoke.json

phases: hp_alone, lp_alone, contended. Latency of an open-loop request counts
from its scheduled arrival. Exit status: 0 done, 1 a job failed, 2 bad input
or a missing prerequisite.""")
    m = p.add_argument_group("model")
    m.add_argument("--model", choices=("deepseek", "dense"), default="deepseek",
                   help="deepseek: transformers' DeepseekV3ForCausalLM (MLA + MoE), random "
                        "weights, loaded with tp_plan='auto' when --tp > 1; dense: GPT-style "
                        "model with Megatron-style tensor parallelism in plain torch "
                        "(default: %(default)s)")
    m.add_argument("--model-scale", choices=("tiny", "small", "large"), default="small",
                   help="tiny: smoke tests; small: deepseek hidden 1024, 6 layers, 32 "
                        "experts top-4, kv_lora_rank 256 (~351M) / dense ~350M; large: "
                        "deepseek ~3B (64 experts top-6) / dense ~6.7B (default: %(default)s)")
    m.add_argument("--checkpoint", metavar="PATH",
                   help="a local Hugging Face model folder (real weights, "
                        "AutoModelForCausalLM); replaces --model/--model-scale")
    m.add_argument("--cache-dir", metavar="DIR",
                   help="where the random DeepSeek checkpoint is saved once "
                        "(default: $XDG_CACHE_HOME or ~/.cache, /amdqp-llm_tp)")
    m.add_argument("--seed", type=int, default=1, help="weights, prompts, arrivals "
                   "(default: %(default)s)")
    d = p.add_argument_group("placement")
    d.add_argument("--tp", type=int, default=1,
                   help="tensor-parallel ranks per job: GPUs 0..N-1, shared by both jobs "
                        "(default: %(default)s)")
    d.add_argument("--device", choices=("auto", "cuda", "cpu"), default="auto",
                   help="cuda also means ROCm (HIP) GPUs; auto: cuda if available "
                        "(default: %(default)s)")
    h = p.add_argument_group("high-priority server")
    h.add_argument("--rate", type=float, default=2.0, help="requests per second "
                   "(default: %(default)s)")
    h.add_argument("--arrival", choices=("poisson", "fixed"), default="poisson",
                   help="poisson: exponential gaps; fixed: one every 1/rate s "
                        "(default: %(default)s)")
    h.add_argument("--prompt-len", type=int, default=128, help="prompt tokens "
                   "(default: %(default)s)")
    h.add_argument("--new-tokens", type=int, default=16,
                   help="decode steps after the first token (default: %(default)s)")
    b = p.add_argument_group("low-priority batch job")
    b.add_argument("--lp-mode", choices=("generate", "train"), default="generate",
                   help="continuous generation, or forward+backward+SGD steps "
                        "(default: %(default)s)")
    b.add_argument("--lp-batch", type=int, default=16, help="sequences per step "
                   "(default: %(default)s)")
    b.add_argument("--lp-prompt-len", type=int, default=128,
                   help="generate: prompt tokens of each batch (default: %(default)s)")
    b.add_argument("--lp-new-tokens", type=int, default=128,
                   help="generate: decode steps before new prompts (default: %(default)s)")
    b.add_argument("--lp-seq-len", type=int, default=256,
                   help="train: tokens per sequence (default: %(default)s)")
    r = p.add_argument_group("run")
    r.add_argument("--duration", type=float, default=30.0,
                   help="measured seconds per phase (default: %(default)s)")
    r.add_argument("--lp-alone-duration", type=float, metavar="S",
                   help="measured seconds of the lp_alone phase (default: --duration); it "
                        "only measures the LP job's own throughput and host probe, so a "
                        "shorter one leaves more of a run's time to the HP phases")
    r.add_argument("--max-queue-delay", type=float, default=30.0, metavar="S",
                   help="admission bound of the HP server: a request that has waited more "
                        "than S seconds past its scheduled arrival when its turn comes is "
                        "dropped, not served; the phase is then marked overloaded (result: "
                        "'dropped', 'overloaded'), and it ends at most S seconds (plus one "
                        "request) after its window instead of draining an ever-growing "
                        "queue; 0: no bound (a server still more than max(10 s, --duration) "
                        "behind gives up on the rest) (default: %(default)s)")
    r.add_argument("--warmup", type=float, default=5.0,
                   help="seconds per phase before measuring (default: %(default)s)")
    r.add_argument("--phases", default=",".join(PHASES),
                   help="comma-separated subset of %(default)s")
    r.add_argument("--load-timeout", type=float, default=1800.0,
                   help="seconds allowed for loading and warming up the models "
                        "(default: %(default)s)")
    r.add_argument("--intra-op-threads", type=int, metavar="N",
                   help="PyTorch intra-op threads per rank (default: 1 on GPUs, as vLLM's "
                        "workers use; on CPU the host's cores split between both jobs' "
                        "ranks). PyTorch's own default, one per core in every process, "
                        "makes the two jobs contend for CPU rather than GPU")
    r.add_argument("--pin-cores", action="store_true",
                   help="give every rank of both jobs physical CPU cores of its own "
                        "(sched_setaffinity; hyperthreads stay with their core), so the "
                        "two jobs' launch threads do not contend for CPU")
    r.add_argument("--host-probe-period", type=float, default=0.5, metavar="S",
                   help="every rank of each job times a fixed burst of tiny operators "
                        "(host time only) every S seconds while idle; the contended/alone "
                        "ratio of a rank's medians is the host slowdown amdqp-sim applies "
                        "to that rank's launches; 0: off (default: %(default)s)")
    r.add_argument("--quiet", action="store_true", help="no progress lines on stderr")
    r.add_argument("--keep-run-dir", action="store_true",
                   help="keep the ranks' logs and control files (kept anyway on failure)")
    o = p.add_argument_group("output")
    o.add_argument("--out", metavar="JSON", help="result JSON (format: Documentation/experiments.rst)")
    o.add_argument("--md", metavar="FILE", help="markdown table of the phases")
    o.add_argument("--profile-dir", metavar="DIR",
                   help="torch.profiler kernel timelines of each job alone (rank 0; see "
                        "--profile-all-ranks), in amdqp-sim's timeline format")
    o.add_argument("--profile-requests", type=int, default=5,
                   help="requests (HP) / steps (LP) per timeline (default: %(default)s)")
    o.add_argument("--profile-all-ranks", action="store_true",
                   help="one timeline file per rank instead of rank 0 only")
    a = p.add_argument_group("ROCm hosts")
    a.add_argument("--amdqp", action="store_true",
                   help="start the HP ranks under 'amdqpctl run --priority high --group hp "
                        "--' and the LP ranks under '--priority low --group lp' "
                        "(AMDQP_GROUP=<job>); amdqpd must be running")
    a.add_argument("--trace", action="store_true",
                   help="run ftrace_scripts/amdqp-capture around the contended phase and "
                        "'amdqp-trace report' on it; output next to --out (root, ROCm)")
    return p.parse_args(argv)


def validate(args):
    """Input errors that need no torch: exit 2 with the reason."""
    checks = [(args.tp >= 1, f"--tp must be >= 1 (got {args.tp})"),
              (args.rate > 0, "--rate must be > 0"),
              (args.duration > 0, "--duration must be > 0"),
              (args.lp_alone_duration is None or args.lp_alone_duration > 0,
               "--lp-alone-duration must be > 0"),
              (args.warmup >= 0, "--warmup must be >= 0"),
              (args.max_queue_delay >= 0, "--max-queue-delay must be >= 0"),
              (args.prompt_len >= 1, "--prompt-len must be >= 1"),
              (args.new_tokens >= 1, "--new-tokens must be >= 1"),
              (args.lp_batch >= 1, "--lp-batch must be >= 1"),
              (args.lp_prompt_len >= 1, "--lp-prompt-len must be >= 1"),
              (args.lp_new_tokens >= 1, "--lp-new-tokens must be >= 1"),
              (args.lp_seq_len >= 2, "--lp-seq-len must be >= 2"),
              (args.profile_requests >= 1, "--profile-requests must be >= 1"),
              (args.host_probe_period >= 0, "--host-probe-period must be >= 0"),
              (args.intra_op_threads is None or args.intra_op_threads >= 1,
               "--intra-op-threads must be >= 1")]
    for ok, msg in checks:
        if not ok:
            fail(msg)
    phases = [x.strip() for x in args.phases.split(",") if x.strip()]
    bad = [x for x in phases if x not in PHASES]
    if bad or not phases:
        fail(f"--phases: unknown phase(s) {', '.join(bad) or '(none given)'}; "
             f"choose from {', '.join(PHASES)}")
    args.phase_list = [x for x in PHASES if x in phases]
    if args.checkpoint and not os.path.isdir(args.checkpoint):
        fail(f"--checkpoint {args.checkpoint}: not a folder")
    if args.trace and not args.out:
        fail("--trace writes its capture next to --out: give --out")


def gpu_driver_version():
    for cmd, parse in (
            (["nvidia-smi", "--query-gpu=driver_version", "--format=csv,noheader"],
             lambda s: s.strip().splitlines()[0].strip()),
            (["rocm-smi", "--showdriverversion"],
             lambda s: next(ln.split(":", 1)[1].strip() for ln in s.splitlines()
                            if "driver version" in ln.lower()))):
        if not shutil.which(cmd[0]):
            continue
        try:
            out = subprocess.run(cmd, capture_output=True, text=True, timeout=20)
            if out.returncode == 0:
                return parse(out.stdout)
        except (OSError, subprocess.TimeoutExpired, StopIteration, IndexError):
            pass
    return None


def resolve_device(args, torch):
    have_gpu = torch.cuda.is_available()
    if args.device == "auto":
        args.device = "cuda" if have_gpu else "cpu"
    if args.device == "cuda":
        if not have_gpu:
            fail("--device cuda: torch sees no GPU (torch.cuda.is_available() is False)")
        n = torch.cuda.device_count()
        if args.tp > n:
            fail(f"--tp {args.tp} needs {args.tp} GPUs; this host has {n}")


def build_config(args, run_dir):
    from models import check_divisible
    label = (f"checkpoint:{os.path.basename(os.path.normpath(args.checkpoint))}"
             if args.checkpoint else f"{args.model}-{args.model_scale}")
    if not args.checkpoint:
        msg = check_divisible(args.model, args.model_scale, args.tp)
        if msg:
            fail(msg)
    ncpu = os.cpu_count() or 1
    cpu_sets = None
    if args.pin_cores:
        import cpu_pinning
        cores = cpu_pinning.physical_cores()
        cpu_sets = cpu_pinning.plan(args.tp, cores)
        if cpu_sets is None:
            fail(f"--pin-cores: {2 * args.tp} ranks need as many physical cores; "
                 f"this process may use {len(cores)}")
    cfg = {k: getattr(args, k) for k in (
        "model", "model_scale", "checkpoint", "seed", "tp", "device", "rate", "arrival",
        "prompt_len", "new_tokens", "lp_mode", "lp_batch", "lp_prompt_len",
        "lp_new_tokens", "lp_seq_len", "duration", "lp_alone_duration", "warmup",
        "profile_dir",
        "profile_requests", "profile_all_ranks", "amdqp", "trace")}
    cfg.update(phases=args.phase_list, model_label=label, deepseek_path=None,
               cpu_sets=cpu_sets,
               intra_op_threads=args.intra_op_threads or (
                   1 if args.device == "cuda" else max(1, ncpu // (2 * args.tp))),
               dist_timeout_s=int(max(3600, 4 * (args.duration + args.warmup))),
               profile_period_s=0.05,
               host_probe_period_s=args.host_probe_period,
               max_queue_delay_s=args.max_queue_delay,
               file_stem=f"llm_tp_{label.replace(':', '_')}_tp{args.tp}",
               run_dir=run_dir)
    return cfg


def default_cache_dir():
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "amdqp-llm_tp")


def phase_record(cfg, phase, results):
    import stats
    tasks = {}
    if "hp" in results:
        tasks["hp"] = stats.hp_task(cfg, results["hp"])
    if "lp" in results:
        tasks["lp"] = stats.lp_task(cfg, results["lp"], phase_duration(cfg, phase))
    return {"duration_s": phase_duration(cfg, phase), "warmup_s": cfg["warmup"],
            "overloaded": bool(tasks.get("hp", {}).get("overloaded", False)),
            "tasks": tasks}


def phase_duration(cfg, phase):
    """Measured seconds of @phase, as the driver ran it."""
    from launch import phase_seconds
    return phase_seconds(phase, cfg["duration"], cfg.get("lp_alone_duration"))


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    args = parse_args(argv)
    validate(args)
    log = log_to_stderr(args.quiet)
    try:
        import torch
    except ImportError as exc:
        fail(f"PyTorch is not importable by {sys.executable} ({exc}); install torch")
    resolve_device(args, torch)

    transformers_version = None
    try:
        import transformers
        transformers_version = transformers.__version__
    except ImportError:
        pass
    from models import ModelError, prepare_deepseek_checkpoint, import_transformers
    if args.model == "deepseek" or args.checkpoint:
        try:
            import_transformers()
        except ModelError as exc:
            fail(str(exc))
    if args.model == "deepseek" and not args.checkpoint and args.tp > 1:
        if tuple(int(x) for x in torch.__version__.split("+")[0].split(".")[:2]) < (2, 5):
            fail(f"--model deepseek --tp {args.tp} needs torch >= 2.5 (transformers' "
                 f"tp_plan); this is torch {torch.__version__}")

    amdqpctl = None
    if args.amdqp:
        from launch import amdqpctl_path, check_amdqpd
        amdqpctl = amdqpctl_path()
        if not amdqpctl:
            fail("--amdqp: amdqpctl not found (set $AMDQPCTL or put it on PATH)")
        problem = check_amdqpd(amdqpctl)
        if problem:
            fail(f"--amdqp: {problem}")
        if not getattr(torch.version, "hip", None):
            log("warning: --amdqp on a non-ROCm torch: amdqp only manages AMD GPU queues")
    if args.trace:
        import trace_capture
        problem = trace_capture.preflight()
        if problem:
            fail(problem)

    from launch import Driver, LaunchError, python_executable, shell_command
    import stats

    run_dir = tempfile.mkdtemp(prefix="llm_tp-")
    cfg = build_config(args, run_dir)
    if args.profile_dir:
        cfg["profile_dir"] = os.path.abspath(args.profile_dir)
    if args.model == "deepseek" and not args.checkpoint:
        try:
            cfg["deepseek_path"] = prepare_deepseek_checkpoint(
                args.cache_dir or default_cache_dir(), args.model_scale, args.seed, log)
        except ModelError as exc:
            fail(str(exc))
        except Exception as exc:
            fail(f"creating the random DeepSeek-V3 checkpoint failed: "
                 f"{type(exc).__name__}: {exc}", 1)
    with open(os.path.join(run_dir, "config.json"), "w") as f:
        json.dump(cfg, f, indent=1)

    started = time.time()
    date = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
    driver = Driver(args, run_dir, python_executable(), log, amdqpctl)
    phases, profiles, trace_info = {}, [], None
    ok = False
    try:
        driver.start(args.load_timeout)
        facts = driver.jobs["hp"].facts
        for phase in args.phase_list:
            capture = None

            def start_capture(go, phase=phase):
                nonlocal capture
                if args.trace and phase == "contended":
                    import trace_capture
                    capture = trace_capture.Capture(
                        os.path.splitext(os.path.abspath(args.out))[0] + "-trace", log)
                    capture.start(driver.all_pids())

            res = driver.run_phase(phase, start_capture if args.trace else None)
            if capture:
                folder = capture.stop()
                trace_info = capture.report(
                    os.path.splitext(os.path.abspath(args.out))[0] + "-trace-report.txt")
                log(f"trace: capture {folder}, report {trace_info and trace_info['report']}")
            phases[phase] = phase_record(cfg, phase, res)
            done = phases[phase]["tasks"]
            if "hp" in done:
                t = done["hp"]["ttft_ms"]
                log(f"{phase}: hp {done['hp']['requests']} requests, TTFT p50 "
                    f"{t['p50'] or 0:.1f} / p99 {t['p99'] or 0:.1f} ms, TPOT p99 "
                    f"{done['hp']['tpot_ms']['p99'] or 0:.2f} ms")
                if done["hp"]["overloaded"]:
                    log(f"{phase}: overloaded: {done['hp']['dropped']} measured request(s) "
                        f"dropped (waited over {args.max_queue_delay:g} s), first at "
                        f"{done['hp']['first_drop_s']} s")
            if "lp" in done:
                log(f"{phase}: lp {done['lp']['tokens_per_s']:.1f} tokens/s")
            if args.profile_dir and phase in ("hp_alone", "lp_alone"):
                name = phase[:2]
                walls = (res["hp"]["service_us"] if name == "hp" else res["lp"]["step_us"])
                extra = {"device_name": facts["device"], "torch": facts["torch"],
                         "request_wall_us": walls[:args.profile_requests * 20]}
                pr = driver.profile(name, args.profile_requests, extra)
                if pr:
                    profiles.append(os.path.join(cfg["profile_dir"], pr["file"]))
                    log(f"timeline: {profiles[-1]} ({pr['requests']} requests)")
        driver.shutdown()
        ok = True
    except LaunchError as exc:
        print(f"llm_tp: error: {exc}", file=sys.stderr)
        print(f"llm_tp: logs kept in {run_dir}", file=sys.stderr)
        driver.kill()
        return 1
    except KeyboardInterrupt:
        print(f"llm_tp: interrupted; logs in {run_dir}", file=sys.stderr)
        driver.kill()
        return 130
    finally:
        if not ok:
            driver.kill()

    result = {
        "experiment": "llm_tp",
        "preset": f"{cfg['model_label']}-tp{args.tp}-{args.lp_mode}",
        "device": facts["device"],
        "device_count": facts.get("device_count"),
        "command": shell_command([os.path.basename(sys.executable)] + sys.argv),
        "date": date,
        "versions": {"python": facts["python"], "torch": facts["torch"],
                     "cuda": facts["cuda"], "hip": facts["hip"],
                     "transformers": facts["transformers"] or transformers_version,
                     "driver": gpu_driver_version() if args.device == "cuda" else None},
        "config": {k: v for k, v in cfg.items() if k not in ("run_dir", "file_stem")},
        "model": {"description": facts["model"], "params": facts["params"]},
        "host": facts.get("hostname"),
        "phases": phases,
        "summary": stats.summary(phases),
        "profiles": profiles,
        "trace": trace_info,
        "wall_s": round(time.time() - started, 1),
    }
    if args.out:
        os.makedirs(os.path.dirname(os.path.abspath(args.out)), exist_ok=True)
        with open(args.out, "w") as f:
            json.dump(result, f, indent=1)
        log(f"wrote {args.out}")
    table = stats.markdown(result)
    if args.md:
        with open(args.md, "w") as f:
            f.write(table)
        log(f"wrote {args.md}")
    if not args.quiet:
        print(table)
    if not args.keep_run_dir:
        shutil.rmtree(run_dir, ignore_errors=True)
    else:
        log(f"run folder kept: {run_dir}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
