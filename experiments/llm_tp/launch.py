# SPDX-License-Identifier: MIT
"""Starts the two jobs' ranks and walks them through the phases.

Each job is --tp processes (worker.py), one per GPU, rank r on GPU r, with
its own rendezvous port, so the HP and LP jobs are separate
torch.distributed worlds sharing the same GPUs. Both jobs load their model
once and stay up for every phase; a job that sits a phase out idles (its
memory stays allocated, its GPUs see no work from it).

With --amdqp each rank is started as
  amdqpctl run --priority high|low --group <job> -- python3 worker.py ...
so amdqpd sees each job as one tensor-parallel group.
"""

import json
import os
import shlex
import shutil
import signal
import socket
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))


def phase_seconds(phase, duration, lp_alone_duration):
    """Measured seconds of @phase: --lp-alone-duration, when given, shortens lp_alone."""
    return lp_alone_duration if phase == "lp_alone" and lp_alone_duration else duration


class LaunchError(RuntimeError):
    """A job failed; the message carries what its ranks reported."""


def free_port():
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def write_json(path, obj):
    tmp = f"{path}.tmp"
    with open(tmp, "w") as f:
        json.dump(obj, f)
    os.replace(tmp, path)


def _tail(path, lines=25):
    try:
        with open(path, errors="replace") as f:
            return "".join(f.readlines()[-lines:])
    except OSError:
        return ""


class Job:
    def __init__(self, name, run_dir, tp, priority, amdqpctl, python, cpu_only):
        self.name = name
        self.cpu_only = cpu_only
        self.run_dir = run_dir
        self.tp = tp
        self.priority = priority
        self.amdqpctl = amdqpctl
        self.python = python
        self.port = free_port()
        self.procs = []
        self.seq = 0
        self.facts = None

    def rank_command(self):
        cmd = [self.python, os.path.join(HERE, "worker.py"), self.run_dir, self.name]
        if self.amdqpctl:
            cmd = [self.amdqpctl, "run", "--priority", self.priority, "--group", self.name,
                   "--"] + cmd
        return cmd

    def start(self):
        for r in range(self.tp):
            env = dict(os.environ)
            env.update(RANK=str(r), LOCAL_RANK=str(r), WORLD_SIZE=str(self.tp),
                       LOCAL_WORLD_SIZE=str(self.tp), MASTER_ADDR="127.0.0.1",
                       MASTER_PORT=str(self.port), AMDQP_GROUP=self.name,
                       PYTHONUNBUFFERED="1")
            env.setdefault("TOKENIZERS_PARALLELISM", "false")
            if self.cpu_only:
                # transformers' tp_plan picks the accelerator it sees
                env.update(CUDA_VISIBLE_DEVICES="", HIP_VISIBLE_DEVICES="")
            log = open(os.path.join(self.run_dir, f"{self.name}.rank{r}.log"), "w")
            self.procs.append(subprocess.Popen(self.rank_command(), env=env, stdout=log,
                                               stderr=subprocess.STDOUT,
                                               stdin=subprocess.DEVNULL))
            log.close()

    def pids(self):
        return [p.pid for p in self.procs]

    def check(self):
        """Raises LaunchError with the ranks' own words if one failed."""
        for r, p in enumerate(self.procs):
            rc = p.poll()
            if rc is not None and rc != 0:
                raise LaunchError(self.failure_text(r, rc))

    def failure_text(self, rank, rc):
        err = os.path.join(self.run_dir, f"error-{self.name}-{rank}.txt")
        text = _tail(err, 40) or _tail(os.path.join(self.run_dir,
                                                    f"{self.name}.rank{rank}.log"), 40)
        return (f"{self.name} job rank {rank} exited with status {rc}:\n"
                + "\n".join("  | " + line for line in text.rstrip().splitlines()))

    def wait_file(self, name, deadline, what):
        path = os.path.join(self.run_dir, name)
        while not os.path.exists(path):
            self.check()
            if time.time() > deadline:
                raise LaunchError(f"{self.name} job: timed out waiting for {what}; logs in "
                                  f"{self.run_dir}")
            time.sleep(0.05)
        with open(path) as f:
            return json.load(f)

    def send(self, cmd):
        seq = self.seq
        cmd = dict(cmd, seq=seq)
        write_json(os.path.join(self.run_dir, f"cmd-{self.name}-{seq}.json"), cmd)
        self.seq += 1
        return seq

    def stop_phase(self, seq):
        open(os.path.join(self.run_dir, f"stop-{self.name}-{seq}"), "w").close()

    def progress(self):
        try:
            with open(os.path.join(self.run_dir, f"progress-{self.name}.json")) as f:
                return json.load(f)
        except (OSError, ValueError):
            return None

    def shutdown(self, grace_s=20.0):
        """Exit command, then terminate (and kill) what is still running."""
        try:
            self.send({"op": "exit"})
        except OSError:
            pass
        end = time.time() + grace_s
        for p in self.procs:
            try:
                p.wait(timeout=max(0.1, end - time.time()))
            except subprocess.TimeoutExpired:
                pass
        self.kill()

    def kill(self):
        for p in self.procs:
            if p.poll() is None:
                p.send_signal(signal.SIGTERM)
        for p in self.procs:
            try:
                p.wait(timeout=5)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()


def amdqpctl_path():
    """amdqpctl from $AMDQPCTL, PATH, or this tree's usual build folders."""
    cands = [os.environ.get("AMDQPCTL"), shutil.which("amdqpctl")]
    root = os.path.dirname(os.path.dirname(HERE))
    for b in ("build", "build-user", "_build"):
        cands.append(os.path.join(root, b, "tools", "amdqpctl", "amdqpctl"))
    for c in cands:
        if c and os.path.isfile(c) and os.access(c, os.X_OK):
            return c
    return None


def check_amdqpd(amdqpctl):
    """None when amdqpd runs, else a message saying what is wrong."""
    try:
        out = subprocess.run([amdqpctl, "status", "--json"], capture_output=True, text=True,
                             timeout=30)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"'{amdqpctl} status --json' failed: {exc}"
    try:
        st = json.loads(out.stdout)
    except ValueError:
        return (f"'{amdqpctl} status --json' printed no JSON (exit {out.returncode}): "
                f"{out.stderr.strip()[:300]}")
    daemon = st.get("daemon") or {}
    if daemon.get("state") != "running":
        return (f"amdqpd is {daemon.get('state', 'unknown')} (amdqpctl status); start it "
                f"first, e.g. 'systemctl start amdqpd', then run again")
    return None


class Driver:
    """Phase sequencing; prints progress every ~5 s unless quiet."""

    def __init__(self, args, run_dir, python, log, amdqpctl):
        self.args = args
        self.run_dir = run_dir
        self.log = log
        cpu = args.device == "cpu"
        self.jobs = {"hp": Job("hp", run_dir, args.tp, "high", amdqpctl, python, cpu),
                     "lp": Job("lp", run_dir, args.tp, "low", amdqpctl, python, cpu)}
        self.last_print = 0.0

    def start(self, load_timeout_s):
        for job in self.jobs.values():
            job.start()
        self.log(f"started {self.args.tp} rank(s) per job (hp port {self.jobs['hp'].port}, "
                 f"lp port {self.jobs['lp'].port}); loading models")
        deadline = time.time() + load_timeout_s
        for job in self.jobs.values():
            job.facts = job.wait_file(f"ready-{job.name}.json", deadline,
                                      "its model to load and warm up")
        self.log(f"both jobs ready on {self.jobs['hp'].facts['device']}: "
                 f"{self.jobs['hp'].facts['model']}")

    def _tick(self, phase, t_start, total):
        if self.args.quiet or total <= 0 or time.time() - self.last_print < 5.0:
            return
        self.last_print = time.time()
        parts = []
        hp, lp = self.jobs["hp"].progress(), self.jobs["lp"].progress()
        if hp and phase in ("hp_alone", "contended"):
            last = hp.get("last_ttft_ms")
            parts.append(f"hp {hp['requests']} requests"
                         + (f", last TTFT {last:.1f} ms" if last is not None else ""))
        if lp and phase in ("lp_alone", "contended"):
            parts.append(f"lp {lp['tokens_per_s']:.1f} tokens/s")
        el = time.time() - t_start
        self.log(f"{phase}: {min(el, total):.0f}/{total:.0f} s" +
                 (" (" + "; ".join(parts) + ")" if parts else ""))

    def run_phase(self, phase, on_contended=None):
        """Runs one phase; returns {job: result} of the jobs that took part."""
        a = self.args
        members = {"hp_alone": ["hp"], "lp_alone": ["lp"], "contended": ["hp", "lp"]}[phase]
        dur = phase_seconds(phase, a.duration, a.lp_alone_duration)
        go = time.time() + 1.0
        cmd = {"op": "run", "phase": phase, "go": go, "warmup": a.warmup, "duration": dur}
        seqs = {j: self.jobs[j].send(cmd) for j in members}
        if on_contended:
            on_contended(go)
        total = 1.0 + a.warmup + dur
        self.log(f"{phase}: {a.warmup:g} s warm-up + {dur:g} s measured")
        results = {}
        t_start = time.time()
        hard = go + a.warmup + 2 * dur + max(60.0, dur) + 30.0
        if "hp" in members:
            results["hp"] = self._wait_result("hp", seqs["hp"], hard, phase, t_start, total)
        else:
            while time.time() < go + a.warmup + dur:
                for j in members:
                    self.jobs[j].check()
                self._tick(phase, t_start, total)
                time.sleep(0.1)
        if "lp" in members:
            self.jobs["lp"].stop_phase(seqs["lp"])
            results["lp"] = self._wait_result("lp", seqs["lp"], time.time() + 120, phase,
                                              t_start, total)
        return results

    def _wait_result(self, name, seq, deadline, phase, t_start, total):
        path = os.path.join(self.run_dir, f"result-{name}-{seq}.json")
        while not os.path.exists(path):
            for j in self.jobs.values():
                j.check()
            if time.time() > deadline:
                raise LaunchError(f"{name} job: no result for {phase} in time; logs in "
                                  f"{self.run_dir}")
            self._tick(phase, t_start, total)
            time.sleep(0.05)
        with open(path) as f:
            return json.load(f)

    def profile(self, name, count, extra):
        job = self.jobs[name]
        cmd = dict(extra, op="profile", count=count)
        seq = job.send(cmd)
        self.log(f"profiling {count} {'requests' if name == 'hp' else 'steps'} of the "
                 f"{name} job alone")
        return self._wait_result(name, seq, time.time() + 600, f"{name} profile",
                                 time.time(), 0)

    def all_pids(self):
        return [pid for j in self.jobs.values() for pid in j.pids()]

    def shutdown(self):
        for j in self.jobs.values():
            j.shutdown()

    def kill(self):
        for j in self.jobs.values():
            j.kill()


def shell_command(argv):
    return " ".join(shlex.quote(a) for a in argv)


def python_executable():
    return sys.executable or "python3"
