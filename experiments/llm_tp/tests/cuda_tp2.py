#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""The driver's GPU path at --tp 2: both models, NCCL, every rank profiled.

    python3 experiments/llm_tp/tests/cuda_tp2.py [--cache-dir DIR] [--keep DIR]

Runs check_run.py --validate on two short three-phase runs on GPUs 0-1
(dense tiny: Megatron-style TP written here; deepseek tiny: transformers'
tp_plan="auto", the DTensor path that crashed in issue 26) and one run
whose server cannot keep up (--max-queue-delay: the phases must end
overloaded, with dropped requests, not hang). Exit 0 all passed, 1 one
failed, 77 skipped: fewer than two CUDA GPUs (the message says how many
torch sees), or no torch / transformers for the deepseek case.
"""

import argparse
import os
import subprocess
import sys
import tempfile

SKIP = 77
HERE = os.path.dirname(os.path.abspath(__file__))
DRIVER = os.path.join(os.path.dirname(HERE), "llm_tp.py")
CHECK = os.path.join(HERE, "check_run.py")


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--cache-dir", help="where the random deepseek checkpoint goes "
                   "(default: a temporary folder)")
    args = p.parse_args()
    try:
        import torch
    except ImportError as exc:
        print(f"SKIP: torch is not importable by {sys.executable} ({exc})")
        return SKIP
    n = torch.cuda.device_count() if torch.cuda.is_available() else 0
    if n < 2:
        print(f"SKIP: the --tp 2 CUDA test needs 2 GPUs; torch sees {n} "
              f"(CUDA available: {torch.cuda.is_available()})")
        return SKIP
    cache = args.cache_dir or tempfile.mkdtemp(prefix="llm_tp-cuda-cache-")
    py = sys.executable
    common = ["--device", "cuda", "--tp", "2", "--model-scale", "tiny", "--warmup", "1",
              "--prompt-len", "32", "--new-tokens", "8", "--lp-batch", "4",
              "--lp-prompt-len", "32", "--lp-new-tokens", "16", "--arrival", "fixed",
              "--quiet", "--pin-cores", "--cache-dir", cache]
    cases = [
        ("dense tiny tp2", ["--needs", "torch", "--expect-overloaded", ""],
         ["--model", "dense", "--duration", "4", "--rate", "4"]),
        ("deepseek tiny tp2", ["--needs", "torch,transformers", "--expect-overloaded", ""],
         ["--model", "deepseek", "--duration", "4", "--rate", "2"]),
        # 400 requests/s cannot be served: every HP phase must shed load
        ("dense tiny tp2 overloaded",
         ["--needs", "torch", "--expect-overloaded", "hp_alone,contended",
          "--max-wall", "120"],
         ["--model", "dense", "--duration", "4", "--rate", "400",
          "--max-queue-delay", "0.5"]),
    ]
    failed, skipped = [], []
    for name, checks, extra in cases:
        cmd = [py, CHECK, "--min-gpus", "2", "--validate", "--tp", "2", "--all-ranks",
               *checks, "--", py, DRIVER, *common, *extra, "--out", "{out}", "--md", "{md}",
               "--profile-dir", "{prof}", "--profile-requests", "2", "--profile-all-ranks"]
        print(f"== {name}", flush=True)
        rc = subprocess.run(cmd).returncode
        if rc == SKIP:
            skipped.append(name)
        elif rc != 0:
            failed.append(name)
    print(f"cuda_tp2: {len(cases) - len(failed) - len(skipped)} passed, "
          f"{len(failed)} failed {failed}, {len(skipped)} skipped {skipped}")
    if failed:
        return 1
    return SKIP if len(skipped) == len(cases) else 0


if __name__ == "__main__":
    sys.exit(main())
