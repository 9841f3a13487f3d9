# SPDX-License-Identifier: MIT
"""The low-priority batch job: one tensor-parallel job kept busy back to back.

generate: --lp-batch sequences, prefill of --lp-prompt-len tokens, then
          --lp-new-tokens decode steps, then new prompts; every forward call
          is one step and yields --lp-batch tokens.
train:    forward + backward + SGD on --lp-batch x --lp-seq-len tokens per
          step (tokens/s counts every token trained on).

Only steps that end inside the measured window count. The job runs on until
the driver says stop (after the high-priority job finished the phase), so
the server is contended for the whole window, queue drain included.
"""

import time

import torch

# Rank 0's word before each step, broadcast to every rank.
STEP, STOP, PROBE = 0, 1, 2


class LPWorkload:
    def __init__(self, ctx):
        self.ctx = ctx
        cfg = ctx.cfg
        self.mode = cfg["lp_mode"]
        self.batch = cfg["lp_batch"]
        self.state = None
        self.left = 0
        self.tok = None
        self.n_seq = 0
        self.gen = torch.Generator()
        self.gen.manual_seed(cfg["seed"] * 17 + 5)

    def _ids(self, length):
        v = self.ctx.runner.vocab_size
        ids = torch.randint(0, v, (self.batch, length), generator=self.gen, dtype=torch.int64)
        return ids.to(self.ctx.device)

    def step(self):
        """One forward (or train) call; returns the tokens it produced."""
        cfg = self.ctx.cfg
        runner = self.ctx.runner
        if self.mode == "train":
            runner.train_step(self._ids(cfg["lp_seq_len"]))
            return self.batch * cfg["lp_seq_len"]
        if self.left == 0:
            plen = cfg["lp_prompt_len"]
            self.state = runner.new_session(self.batch, plen + cfg["lp_new_tokens"] + 1)
            self.tok = runner.prefill(self.state, self._ids(plen))
            self.left = cfg["lp_new_tokens"]
        else:
            self.tok = runner.decode(self.state, self.tok)
            self.left -= 1
        self.tok[0].item()  # the step is done when its tokens reach the host
        return self.batch


def run_phase(ctx, cmd, progress, stop_requested):
    """Runs steps until rank 0 sees the stop file; rank 0 returns the result."""
    work = ctx.lp_work
    flag = torch.zeros(1, dtype=torch.int64)
    go, warm, dur = cmd["go"], cmd["warmup"], cmd["duration"]
    w0, w1 = go + warm, go + warm + dur
    now = time.time()
    if ctx.rank == 0 and go > now:
        time.sleep(go - now)
    ctx.broadcast_tensor(flag)  # start together
    tokens = steps = 0
    step_us = []
    ends = []
    last_progress = 0.0
    while True:
        if ctx.rank == 0:
            # Back to back: there is always slack for the host probe, which
            # every rank takes at once between two steps.
            flag[0] = STOP if stop_requested() else PROBE if ctx.probe.due(1.0) else STEP
        ctx.broadcast_tensor(flag)
        if int(flag[0]) == STOP:
            break
        if int(flag[0]) == PROBE:
            ctx.probe.sample()
            continue
        t0 = time.time()
        n = work.step()
        t1 = time.time()
        if ctx.rank != 0:
            continue
        if w0 <= t1 <= w1:
            tokens += n
            steps += 1
            step_us.append((t1 - t0) * 1e6)
            ends.append(round(t1 - w0, 4))
        if t1 - last_progress > 1.0:
            last_progress = t1
            progress({"tokens": tokens, "steps": steps,
                      "tokens_per_s": tokens / max(1e-9, min(t1, w1) - w0) if t1 > w0 else 0.0})
    probed = ctx.probe_ranks(w0)
    if ctx.rank != 0:
        return None
    return {"tokens": tokens, "steps": steps, "window_s": dur,
            "tokens_per_s": tokens / dur if dur > 0 else 0.0, "step_us": step_us,
            "step_end_s": ends, **probed, "end": time.time()}


def profile_step(ctx, i):
    ctx.lp_work.step()
