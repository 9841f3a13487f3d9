# SPDX-License-Identifier: MIT
"""The high-priority interactive server: one tensor-parallel job.

Rank 0 owns the clock: it waits for each request's scheduled arrival (open
loop: the schedule does not wait for the server), broadcasts the request
(its prompt) to the other ranks over the job's CPU control group, and every
rank runs prefill and --new-tokens decode steps with a KV cache. Requests are
served one at a time (batch 1), so a late request queues behind the one in
progress, and its time-to-first-token counts from its *scheduled* arrival.

  ttft = first token on the host - scheduled arrival
  tpot = (last token - first token) / new_tokens

A server that cannot keep up does not queue for ever: a request that has
waited more than --max-queue-delay seconds when its turn comes is dropped
(counted in `dropped`, the phase marked `overloaded`), so the queue stays
bounded and the phase ends at most that long after its window.
"""

import random
import time

import torch

OP_REQUEST = 1
OP_DONE = 2
OP_PROBE = 3  # every rank samples its host (HostProbe) in the idle time


def arrival_schedule(rate, span_s, arrival, seed):
    """Arrival offsets (s) in [0, span_s): Poisson (exponential gaps) or fixed."""
    rng = random.Random(seed)
    out, t = [], 0.0
    while True:
        t += rng.expovariate(rate) if arrival == "poisson" else 1.0 / rate
        if t >= span_s:
            return out
        out.append(t)


def make_prompt(rng_seed, length, vocab):
    g = torch.Generator()
    g.manual_seed(rng_seed)
    return torch.randint(0, vocab, (length,), generator=g, dtype=torch.int64)


def serve_one(runner, prompt_dev, new_tokens, max_len, split=None):
    """Runs one request; returns (first token time, last token time).

    @split, a list, gets the mean per decode step of the host's time to
    issue the step and of its wait for the token (ms): where a slower step
    comes from, the host or the GPU.
    """
    state = runner.new_session(1, max_len)
    tok = runner.prefill(state, prompt_dev[None, :])
    tok.item()  # the token reaches the host: a streaming server sends it now
    t_first = time.time()
    issue = wait = 0.0
    for _ in range(new_tokens):
        t0 = time.perf_counter()
        tok = runner.decode(state, tok)
        t1 = time.perf_counter()
        tok.item()
        wait += time.perf_counter() - t1
        issue += t1 - t0
    if split is not None:
        split.append((issue * 1e3 / new_tokens, wait * 1e3 / new_tokens))
    return t_first, time.time()


def run_phase(ctx, cmd, progress):
    """Serves the phase's schedule; rank 0 returns the result dict."""
    cfg = ctx.cfg
    runner = ctx.runner
    plen, ntok = cfg["prompt_len"], cfg["new_tokens"]
    max_len = plen + ntok + 1
    header = torch.zeros(2 + plen, dtype=torch.int64)

    if ctx.rank != 0:
        while True:
            ctx.broadcast_tensor(header)
            if int(header[0]) == OP_PROBE:
                ctx.probe.sample()
                continue
            if int(header[0]) != OP_REQUEST:
                ctx.probe_ranks(cmd["go"] + cmd["warmup"])
                return None
            serve_one(runner, header[2:].to(ctx.device), ntok, max_len)

    go, warm, dur = cmd["go"], cmd["warmup"], cmd["duration"]
    sched = arrival_schedule(cfg["rate"], warm + dur, cfg["arrival"],
                             cfg["seed"] * 7919 + cmd["seq"])
    # Admission bound (--max-queue-delay): a request that has waited longer
    # than this when the server gets to it is dropped, not served, so an
    # overloaded server's queue stops growing and the phase ends at most one
    # bound (plus one request) after its window. Backstop without the bound:
    # a server this far behind would never catch up, give up on the rest.
    max_delay = cfg.get("max_queue_delay_s") or 0.0
    give_up = go + warm + dur + max(10.0, dur)
    ttfts, tpots, walls, arrivals, split = [], [], [], [], []
    probe = ctx.probe
    warm_n = dropped = dropped_warm = 0
    overloaded = False
    first_drop = None
    last_progress = 0.0
    for i, offset in enumerate(sched):
        t_arr = go + offset
        now = time.time()
        if now > give_up:
            dropped += sum(1 for o in sched[i:] if o >= warm)
            dropped_warm += sum(1 for o in sched[i:] if o < warm)
            overloaded = True
            first_drop = offset - warm if first_drop is None else first_drop
            break
        if max_delay and now - t_arr > max_delay:
            if offset >= warm:
                dropped += 1
            else:
                dropped_warm += 1
            overloaded = True
            first_drop = offset - warm if first_drop is None else first_drop
            continue
        if probe.due(t_arr - now):
            header[0] = OP_PROBE
            ctx.broadcast_tensor(header)
            probe.sample()
            now = time.time()
        if t_arr > now:
            time.sleep(t_arr - now)
        header[0] = OP_REQUEST
        header[1] = i
        header[2:] = make_prompt(cfg["seed"] * 1000003 + cmd["seq"] * 100003 + i, plen,
                                 runner.vocab_size)
        t_start = time.time()
        ctx.broadcast_tensor(header)
        steps = []
        t_first, t_last = serve_one(runner, header[2:].to(ctx.device), ntok, max_len, steps)
        if offset < warm:
            warm_n += 1
        else:
            split += steps
            ttfts.append((t_first - t_arr) * 1e3)
            tpots.append((t_last - t_first) * 1e3 / ntok)
            walls.append((t_last - t_start) * 1e6)
            arrivals.append(offset - warm)
        if time.time() - last_progress > 1.0:
            last_progress = time.time()
            progress({"requests": len(ttfts), "warmup_requests": warm_n,
                      "last_ttft_ms": ttfts[-1] if ttfts else None})
    header[0] = OP_DONE
    ctx.broadcast_tensor(header)
    probed = ctx.probe_ranks(go + warm)
    return {"requests": len(ttfts), "warmup_requests": warm_n, "dropped": dropped,
            "dropped_warmup": dropped_warm, "overloaded": overloaded,
            "first_drop_s": None if first_drop is None else round(first_drop, 3),
            "scheduled": sum(1 for o in sched if o >= warm),
            "ttfts_ms": ttfts, "tpots_ms": tpots, "service_us": walls,
            "arrivals_s": arrivals, "decode_split_ms": split,
            **probed, "end": time.time()}


def profile_step(ctx, i):
    """One request for the profiler (every rank, no broadcast: seeded prompt)."""
    cfg = ctx.cfg
    prompt = make_prompt(cfg["seed"] * 31 + i, cfg["prompt_len"], ctx.runner.vocab_size)
    serve_one(ctx.runner, prompt.to(ctx.device), cfg["new_tokens"],
              cfg["prompt_len"] + cfg["new_tokens"] + 1)
