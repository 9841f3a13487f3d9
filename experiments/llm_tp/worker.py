#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""One rank of one job (started by launch.py, not by hand).

Environment (torchrun's names, so transformers' tp_plan="auto" finds them):
RANK, LOCAL_RANK, WORLD_SIZE, MASTER_ADDR, MASTER_PORT. Arguments: the run
folder and the job name ("hp" or "lp"). The run folder holds config.json and
the control files the driver and the job's rank 0 exchange:

  ready-JOB.json        rank 0, after the model is loaded and warmed up
  cmd-JOB-SEQ.json      driver: {"op": "run"|"profile"|"exit", ...}
  stop-JOB-SEQ          driver: the LP job ends its phase
  result-JOB-SEQ.json   rank 0, when the command is done
  progress-JOB.json     rank 0, about once a second while running
  error-JOB-RANK.txt    any rank that failed: the traceback

Rank 0 reads the driver's files and forwards commands to the other ranks
over a gloo group (CPU), so NCCL/RCCL only ever carries model traffic.
"""

import datetime
import json
import os
import platform
import sys
import time
import traceback

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(1, os.path.join(os.path.dirname(HERE), "common"))


def write_json(path, obj):
    tmp = f"{path}.tmp{os.getpid()}"
    with open(tmp, "w") as f:
        json.dump(obj, f)
    os.replace(tmp, path)


class Context:
    """What a job's phase code needs: config, rank, device, model, channel."""

    def __init__(self, run_dir, job):
        self.run_dir = run_dir
        self.job = job
        with open(os.path.join(run_dir, "config.json")) as f:
            self.cfg = json.load(f)
        self.rank = int(os.environ.get("RANK", "0"))
        self.world = int(os.environ.get("WORLD_SIZE", "1"))
        self.local_rank = int(os.environ.get("LOCAL_RANK", str(self.rank)))
        self.ctrl = None
        self.runner = None
        self.lp_work = None
        self.device = None
        self.probe = None

    def path(self, name):
        return os.path.join(self.run_dir, name)

    def broadcast_tensor(self, t):
        if self.world > 1:
            import torch.distributed as dist
            dist.broadcast(t, src=0, group=self.ctrl)

    def gather_object(self, obj):
        """Every rank's @obj, in rank order, on rank 0 (None elsewhere)."""
        if self.world == 1:
            return [obj]
        import torch.distributed as dist
        out = [None] * self.world if self.rank == 0 else None
        dist.gather_object(obj, out, dst=0, group=self.ctrl)
        return out

    def probe_ranks(self, since):
        """Rank 0's HostProbe.take(@since) fields plus host_probe_ranks (every
        rank's summary, index = rank); None on the other ranks. Every rank
        of the job calls it at a phase's end."""
        mine = self.probe.take(since)
        summaries = self.gather_object(mine.get("host_probe"))
        if self.rank != 0:
            return None
        if mine:
            mine["host_probe_ranks"] = summaries
        return mine

    def broadcast_object(self, obj):
        if self.world == 1:
            return obj
        import torch.distributed as dist
        box = [obj]
        dist.broadcast_object_list(box, src=0, group=self.ctrl)
        return box[0]


def setup(ctx):
    import torch
    import torch.distributed as dist
    from models import TP, build_runner

    cfg = ctx.cfg
    if cfg.get("cpu_sets"):
        import cpu_pinning
        cpu_pinning.apply(cfg["cpu_sets"][ctx.job][ctx.rank])
    on_gpu = cfg["device"] == "cuda"
    if on_gpu:
        torch.cuda.set_device(ctx.local_rank)
        ctx.device = torch.device("cuda", ctx.local_rank)
        dtype = torch.bfloat16
    else:
        ctx.device = torch.device("cpu")
        dtype = torch.float32
    # Every rank of both jobs shares the host's cores.
    torch.set_num_threads(cfg["intra_op_threads"])
    tp = TP(ctx.rank, ctx.world)
    if ctx.world > 1:
        timeout = datetime.timedelta(seconds=cfg["dist_timeout_s"])
        dist.init_process_group("nccl" if on_gpu else "gloo", init_method="env://",
                                rank=ctx.rank, world_size=ctx.world, timeout=timeout)
        ctx.ctrl = dist.new_group(backend="gloo", timeout=timeout) if on_gpu else None
        tp.group = None  # the default group: the job's own world
    torch.manual_seed(cfg["seed"])
    ctx.runner = build_runner(cfg, tp, ctx.device, dtype)
    from host_probe import HostProbe
    # Rank 0 decides when (idle time is its schedule's); every rank samples
    # then, its own host path (amdqp-sim slows each rank by its own).
    ctx.probe = HostProbe(ctx.device, cfg["host_probe_period_s"])
    if ctx.job == "lp":
        from batch import LPWorkload
        ctx.lp_work = LPWorkload(ctx)


def warm_up(ctx):
    """Loads kernels and the allocator before anything is timed."""
    import server
    if ctx.job == "hp":
        for i in range(2):
            server.profile_step(ctx, 1000 + i)
    else:
        # One whole sequence and the next prefill: every KV-cache size the
        # phase will see is allocated once (a first pass through growing
        # caches runs several times slower on a fresh allocator).
        steps = 3 if ctx.cfg["lp_mode"] == "train" else ctx.cfg["lp_new_tokens"] + 2
        for _ in range(steps):
            ctx.lp_work.step()


def device_facts(ctx):
    import torch
    facts = {"python": platform.python_version(), "torch": torch.__version__,
             "cuda": torch.version.cuda, "hip": getattr(torch.version, "hip", None),
             "transformers": None, "hostname": platform.node()}
    try:
        import transformers
        facts["transformers"] = transformers.__version__
    except ImportError:
        pass
    if ctx.device.type == "cuda":
        facts["device"] = torch.cuda.get_device_name(ctx.device)
        facts["device_count"] = torch.cuda.device_count()
    else:
        facts["device"] = "cpu"
        facts["cpu"] = platform.processor() or platform.machine()
    facts["model"] = ctx.runner.description
    facts["params"] = ctx.runner.params
    return facts


def wait_command(ctx, seq):
    path = ctx.path(f"cmd-{ctx.job}-{seq}.json")
    while not os.path.exists(path):
        time.sleep(0.005)
    with open(path) as f:
        return json.load(f)


def run_profile(ctx, cmd):
    import batch
    import server
    from trace_timeline import capture, summarize
    cfg = ctx.cfg
    step = server.profile_step if ctx.job == "hp" else batch.profile_step
    period = 1.0 / cfg["rate"] if ctx.job == "hp" else 0.0
    # prof_period caps the idle time between profiled HP requests
    period = min(period, cfg["profile_period_s"])
    requests, on_gpu = capture(ctx, step, cmd["count"], period)
    if ctx.rank != 0 and not cfg["profile_all_ranks"]:
        return None
    name = f"{cfg['file_stem']}_{ctx.job}_rank{ctx.rank}.json.gz"
    doc = {"workload": f"llm_tp {ctx.job} {cfg['model_label']}"
                       + (f" prompt {cfg['prompt_len']} + {cfg['new_tokens']} new tokens"
                          if ctx.job == "hp" else f" {cfg['lp_mode']} batch {cfg['lp_batch']}"),
           "device": cmd["device_name"], "torch": cmd["torch"],
           "batch": 1 if ctx.job == "hp" else cfg["lp_batch"],
           "period_s": 1.0 / cfg["rate"] if ctx.job == "hp" else 0.0,
           "rank": ctx.rank, "tp": ctx.world, "cpu_launch": True,
           "requests": requests,
           "request_wall_us": cmd.get("request_wall_us", []),
           "summary": summarize(requests)}
    if not on_gpu:
        doc["summary"]["note"] = ("CPU run: outermost aten operators stand in for GPU "
                                  "kernels; not a GPU timeline")
    os.makedirs(cfg["profile_dir"], exist_ok=True)
    from trace_timeline import save
    save(os.path.join(cfg["profile_dir"], name), doc)
    return {"file": name, "requests": len(requests)}


def main():
    run_dir, job = sys.argv[1], sys.argv[2]
    ctx = Context(run_dir, job)
    try:
        setup(ctx)
        warm_up(ctx)
        if ctx.rank == 0:
            write_json(ctx.path(f"ready-{job}.json"), device_facts(ctx))
        import batch
        import server
        seq = 0
        while True:
            cmd = wait_command(ctx, seq) if ctx.rank == 0 else None
            cmd = ctx.broadcast_object(cmd)

            def progress(obj, seq=seq):
                obj["seq"] = seq
                obj["time"] = time.time()
                write_json(ctx.path(f"progress-{job}.json"), obj)

            stop_path = ctx.path(f"stop-{job}-{seq}")
            if cmd["op"] == "exit":
                break
            if cmd["op"] == "run":
                if job == "hp":
                    res = server.run_phase(ctx, cmd, progress)
                else:
                    res = batch.run_phase(ctx, cmd, progress,
                                          lambda p=stop_path: os.path.exists(p))
            elif cmd["op"] == "profile":
                res = run_profile(ctx, cmd)
            else:
                raise RuntimeError(f"unknown command {cmd['op']!r}")
            if ctx.rank == 0:
                write_json(ctx.path(f"result-{job}-{seq}.json"), res or {})
            seq += 1
    except BaseException as exc:  # the driver shows this to the user
        with open(ctx.path(f"error-{job}-{ctx.rank}.txt"), "w") as f:
            f.write(f"{job} rank {ctx.rank}: {type(exc).__name__}: {exc}\n\n")
            f.write(traceback.format_exc())
        traceback.print_exc()
        os._exit(1)
    try:
        import torch.distributed as dist
        if dist.is_available() and dist.is_initialized():
            dist.destroy_process_group()
    except Exception:
        pass
    os._exit(0)


if __name__ == "__main__":
    main()
