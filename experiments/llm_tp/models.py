# SPDX-License-Identifier: MIT
"""The models the experiment serves and trains, behind one small interface.

Runner (what server.py and batch.py use):
  vocab_size
  new_session(batch, max_len) -> opaque state (KV cache)
  prefill(state, ids[B, T]) -> next token ids [B] (on the device)
  decode(state, tok[B]) -> next token ids [B]
  train_step(ids[B, T]) -> loss (float)

Models:
  dense     GPT-style decoder written here in plain torch, Megatron-style
            tensor parallel (column-parallel QKV/fc1, row-parallel out/fc2,
            one all_reduce after each; vocab-parallel LM head + all_gather).
            Works on gloo (CPU) and NCCL/RCCL, torch 1.13 and 2.x.
  deepseek  transformers' own DeepseekV3ForCausalLM (MLA attention + MoE),
            random weights at a small size, saved once with save_pretrained
            and loaded in every rank with from_pretrained(tp_plan="auto").
  --checkpoint PATH: AutoModelForCausalLM from a local folder (real weights).
"""

import hashlib
import json
import math
import os
import sys

import torch
import torch.distributed as dist
import torch.nn.functional as F
from torch import nn

# Scales of the dense model: (hidden, layers, heads, vocab, max positions).
# Heads and vocab are multiples of 8 so that --tp 8 divides them.
DENSE_SCALES = {
    "tiny": dict(hidden=128, layers=2, heads=8, vocab=1024, max_pos=1024),
    # about GPT-2 medium (350M)
    "small": dict(hidden=1024, layers=24, heads=16, vocab=32000, max_pos=4096),
    # about LLaMA-7B's width and depth (6.7B)
    "large": dict(hidden=4096, layers=32, heads=32, vocab=32000, max_pos=4096),
}

# DeepSeek-V3 architecture at reduced sizes. "small" matches the vendored
# H200 fixture (hidden 1024, 6 layers, 32 routed experts top-4, kv_lora_rank
# 256, ~351M parameters).
DEEPSEEK_SCALES = {
    "tiny": dict(hidden_size=256, intermediate_size=512, moe_intermediate_size=128,
                 num_hidden_layers=2, num_attention_heads=8, n_routed_experts=8,
                 num_experts_per_tok=2, n_shared_experts=1, first_k_dense_replace=1,
                 kv_lora_rank=64, q_lora_rank=128, qk_rope_head_dim=16,
                 qk_nope_head_dim=32, v_head_dim=32, vocab_size=4096),
    "small": dict(hidden_size=1024, intermediate_size=2816, moe_intermediate_size=512,
                  num_hidden_layers=6, num_attention_heads=16, n_routed_experts=32,
                  num_experts_per_tok=4, n_shared_experts=1, first_k_dense_replace=1,
                  kv_lora_rank=256, q_lora_rank=512, qk_rope_head_dim=32,
                  qk_nope_head_dim=64, v_head_dim=64, vocab_size=32000),
    # DeepSeek-V2-Lite-like width, fewer layers (~3B parameters)
    "large": dict(hidden_size=2048, intermediate_size=10944, moe_intermediate_size=1408,
                  num_hidden_layers=12, num_attention_heads=16, n_routed_experts=64,
                  num_experts_per_tok=6, n_shared_experts=2, first_k_dense_replace=1,
                  kv_lora_rank=512, q_lora_rank=1536, qk_rope_head_dim=64,
                  qk_nope_head_dim=128, v_head_dim=128, vocab_size=32000),
}


class ModelError(RuntimeError):
    """A model could not be built or loaded; the message says what to do."""


class TP:
    """This rank's place in its job's tensor-parallel group."""

    def __init__(self, rank, world, group=None):
        self.rank = rank
        self.world = world
        self.group = group


# --- tensor-parallel autograd pieces (so --lp-mode train works too) -------


class _CopyToTP(torch.autograd.Function):
    """Identity forward; the gradient is summed over the ranks."""

    @staticmethod
    def forward(ctx, x, tp):
        ctx.tp = tp
        return x

    @staticmethod
    def backward(ctx, grad):
        grad = grad.contiguous()
        dist.all_reduce(grad, group=ctx.tp.group)
        return grad, None


class _ReduceFromTP(torch.autograd.Function):
    """Sum of the partial results of a row-parallel linear."""

    @staticmethod
    def forward(ctx, x, tp):
        x = x.contiguous()
        dist.all_reduce(x, group=tp.group)
        return x

    @staticmethod
    def backward(ctx, grad):
        return grad, None


class _GatherLastDim(torch.autograd.Function):
    """Concatenates the ranks' vocabulary shards of the logits."""

    @staticmethod
    def forward(ctx, x, tp):
        ctx.tp = tp
        ctx.width = x.shape[-1]
        x = x.contiguous()
        parts = [torch.empty_like(x) for _ in range(tp.world)]
        dist.all_gather(parts, x, group=tp.group)
        return torch.cat(parts, dim=-1)

    @staticmethod
    def backward(ctx, grad):
        lo = ctx.tp.rank * ctx.width
        return grad[..., lo:lo + ctx.width].contiguous(), None


def copy_to_tp(x, tp):
    return _CopyToTP.apply(x, tp) if tp.world > 1 else x


def reduce_from_tp(x, tp):
    return _ReduceFromTP.apply(x, tp) if tp.world > 1 else x


def gather_last_dim(x, tp):
    return _GatherLastDim.apply(x, tp) if tp.world > 1 else x


# --- the dense model -------------------------------------------------------


class _Attention(nn.Module):
    def __init__(self, hidden, heads, tp, dev, dtype):
        super().__init__()
        self.tp = tp
        self.local_heads = heads // tp.world
        self.head_dim = hidden // heads
        width = self.local_heads * self.head_dim
        kw = dict(device=dev, dtype=dtype)
        self.w_qkv = nn.Parameter(torch.empty(3 * width, hidden, **kw))
        self.b_qkv = nn.Parameter(torch.zeros(3 * width, **kw))
        self.w_out = nn.Parameter(torch.empty(hidden, width, **kw))
        self.b_out = nn.Parameter(torch.zeros(hidden, **kw))
        self.sharded = {"w_qkv", "b_qkv", "w_out"}

    def forward(self, x, cache, pos):
        b, t, _ = x.shape
        x = copy_to_tp(x, self.tp)
        qkv = F.linear(x, self.w_qkv, self.b_qkv)
        qkv = qkv.view(b, t, 3, self.local_heads, self.head_dim).permute(2, 0, 3, 1, 4)
        q, k, v = qkv[0], qkv[1], qkv[2]
        if cache is not None:
            k_buf, v_buf = cache
            k_buf[:, :, pos:pos + t] = k
            v_buf[:, :, pos:pos + t] = v
            k = k_buf[:, :, :pos + t]
            v = v_buf[:, :, :pos + t]
        scores = torch.matmul(q, k.transpose(-1, -2)) * (1.0 / math.sqrt(self.head_dim))
        if t > 1:
            keys = k.shape[-2]
            # query i sits at absolute position pos + i and sees keys <= it
            allowed = torch.ones(t, keys, dtype=torch.bool, device=x.device).tril(diagonal=pos)
            scores = scores.masked_fill(~allowed, float("-inf"))
        probs = torch.softmax(scores.float(), dim=-1).to(q.dtype)
        y = torch.matmul(probs, v).transpose(1, 2).reshape(b, t, -1)
        y = reduce_from_tp(F.linear(y, self.w_out), self.tp)
        return y + self.b_out


class _MLP(nn.Module):
    def __init__(self, hidden, tp, dev, dtype):
        super().__init__()
        self.tp = tp
        width = 4 * hidden // tp.world
        kw = dict(device=dev, dtype=dtype)
        self.w_in = nn.Parameter(torch.empty(width, hidden, **kw))
        self.b_in = nn.Parameter(torch.zeros(width, **kw))
        self.w_out = nn.Parameter(torch.empty(hidden, width, **kw))
        self.b_out = nn.Parameter(torch.zeros(hidden, **kw))
        self.sharded = {"w_in", "b_in", "w_out"}

    def forward(self, x):
        x = copy_to_tp(x, self.tp)
        h = F.gelu(F.linear(x, self.w_in, self.b_in))
        return reduce_from_tp(F.linear(h, self.w_out), self.tp) + self.b_out


class _Block(nn.Module):
    def __init__(self, hidden, heads, tp, dev, dtype):
        super().__init__()
        self.ln1 = nn.LayerNorm(hidden, device=dev, dtype=dtype)
        self.attn = _Attention(hidden, heads, tp, dev, dtype)
        self.ln2 = nn.LayerNorm(hidden, device=dev, dtype=dtype)
        self.mlp = _MLP(hidden, tp, dev, dtype)

    def forward(self, x, cache, pos):
        x = x + self.attn(self.ln1(x), cache, pos)
        return x + self.mlp(self.ln2(x))


class DenseGPT(nn.Module):
    def __init__(self, scale, tp, dev, dtype, seed):
        super().__init__()
        s = DENSE_SCALES[scale]
        self.tp = tp
        self.hidden, self.heads, self.vocab = s["hidden"], s["heads"], s["vocab"]
        self.max_pos = s["max_pos"]
        kw = dict(device=dev, dtype=dtype)
        self.tok_emb = nn.Parameter(torch.empty(self.vocab, self.hidden, **kw))
        self.pos_emb = nn.Parameter(torch.empty(self.max_pos, self.hidden, **kw))
        self.blocks = nn.ModuleList(
            [_Block(self.hidden, self.heads, tp, dev, dtype) for _ in range(s["layers"])])
        self.ln_f = nn.LayerNorm(self.hidden, device=dev, dtype=dtype)
        self.w_head = nn.Parameter(torch.empty(self.vocab // tp.world, self.hidden, **kw))
        self._init_weights(seed)

    def sharded_names(self):
        """Names of the parameters split over the ranks (the rest are replicated)."""
        sharded = {"w_head"}
        for mname, mod in self.named_modules():
            for pname in getattr(mod, "sharded", ()):
                sharded.add(f"{mname}.{pname}" if mname else pname)
        return sharded

    def _init_weights(self, seed):
        # Replicated weights must match on every rank, shards must differ:
        # one seed per parameter, plus the rank for shards.
        sharded = self.sharded_names()
        with torch.no_grad():
            for i, (name, p) in enumerate(self.named_parameters()):
                if p.dim() < 2:
                    continue  # biases and LayerNorms keep zeros / ones
                shard = self.tp.rank if name in sharded else 0
                torch.manual_seed(seed * 1000003 + i * 131 + shard)
                p.normal_(0.0, 0.02)

    def forward(self, ids, caches=None, pos=0, last_only=True):
        t = ids.shape[1]
        x = F.embedding(ids, self.tok_emb) + self.pos_emb[pos:pos + t]
        for i, blk in enumerate(self.blocks):
            x = blk(x, None if caches is None else caches[i], pos)
        x = self.ln_f(x)
        if last_only:
            x = x[:, -1]
        return gather_last_dim(F.linear(x, self.w_head), self.tp)


class _DenseState:
    def __init__(self, caches):
        self.caches = caches
        self.pos = 0


class DenseRunner:
    def __init__(self, scale, tp, dev, dtype, seed):
        self.model = DenseGPT(scale, tp, dev, dtype, seed).eval()
        self.vocab_size = self.model.vocab
        self.max_pos = self.model.max_pos
        self.dev, self.dtype = dev, dtype
        self.optim = None
        self.description = (f"dense GPT-style, hidden {self.model.hidden}, "
                            f"{len(self.model.blocks)} layers, {self.model.heads} heads, "
                            f"vocab {self.vocab_size}")
        sharded = self.model.sharded_names()
        # the whole model's count: shards times the ranks, replicated ones once
        self.params = sum(p.numel() * (tp.world if name in sharded else 1)
                          for name, p in self.model.named_parameters())

    def new_session(self, batch, max_len):
        if max_len > self.max_pos:
            raise ModelError(f"sequence of {max_len} tokens exceeds the dense model's "
                             f"{self.max_pos} positions")
        a = self.model.blocks[0].attn
        shape = (batch, a.local_heads, max_len, a.head_dim)
        caches = [(torch.zeros(shape, device=self.dev, dtype=self.dtype),
                   torch.zeros(shape, device=self.dev, dtype=self.dtype))
                  for _ in self.model.blocks]
        return _DenseState(caches)

    @torch.no_grad()
    def prefill(self, state, ids):
        state.pos = 0
        logits = self.model(ids, state.caches, 0)
        state.pos = ids.shape[1]
        return logits.argmax(-1)

    @torch.no_grad()
    def decode(self, state, tok):
        logits = self.model(tok[:, None], state.caches, state.pos)
        state.pos += 1
        return logits.argmax(-1)

    def train_step(self, ids):
        if self.optim is None:
            self.model.train()
            self.optim = torch.optim.SGD(self.model.parameters(), lr=1e-4)
        logits = self.model(ids[:, :-1], None, 0, last_only=False)
        loss = F.cross_entropy(logits.float().reshape(-1, logits.shape[-1]),
                               ids[:, 1:].reshape(-1))
        loss.backward()
        self.optim.step()
        self.optim.zero_grad(set_to_none=True)
        return float(loss.item())


# --- transformers models -----------------------------------------------------


def import_transformers():
    """transformers, or ModelError naming what is missing."""
    try:
        import transformers  # noqa: F401 (imported for its side effects too)
    except ImportError as exc:
        raise ModelError(
            f"--model deepseek and --checkpoint need the 'transformers' package "
            f"({exc}); install it (pip install transformers) or use --model dense") from exc
    return transformers


def deepseek_config_kwargs(scale):
    kw = dict(DEEPSEEK_SCALES[scale])
    kw.update(num_key_value_heads=kw["num_attention_heads"], n_group=1, topk_group=1,
              routed_scaling_factor=2.5, norm_topk_prob=True, max_position_embeddings=4096,
              tie_word_embeddings=False, use_cache=True)
    return kw


def deepseek_cache_path(cache_dir, scale, seed):
    kw = deepseek_config_kwargs(scale)
    tag = hashlib.sha1(json.dumps([kw, seed], sort_keys=True).encode()).hexdigest()[:10]
    return os.path.join(cache_dir, f"deepseek_v3-{scale}-{tag}")


def prepare_deepseek_checkpoint(cache_dir, scale, seed, log):
    """Saves a random DeepSeek-V3-architecture model once; returns its folder.

    Runs in the driver, before any rank starts, so every rank of both jobs
    loads the same weights and nobody races to write them.
    """
    transformers = import_transformers()
    path = deepseek_cache_path(cache_dir, scale, seed)
    done = os.path.join(path, ".complete")
    if os.path.exists(done):
        return path
    try:
        from transformers import DeepseekV3Config, DeepseekV3ForCausalLM
    except ImportError as exc:
        raise ModelError(f"transformers {transformers.__version__} has no DeepseekV3 model "
                         f"class ({exc}); DeepSeek-V3 needs transformers >= 4.51") from exc
    log(f"creating a random DeepSeek-V3-architecture model ({scale}) in {path}")
    torch.manual_seed(seed)
    cfg = DeepseekV3Config(**deepseek_config_kwargs(scale))
    try:
        model = DeepseekV3ForCausalLM(cfg)
    except Exception as exc:
        raise ModelError(f"DeepseekV3ForCausalLM(config) failed: {type(exc).__name__}: "
                         f"{exc}") from exc
    model = model.to(torch.bfloat16)
    os.makedirs(path, exist_ok=True)
    model.save_pretrained(path)
    params = sum(p.numel() for p in model.parameters())
    with open(os.path.join(path, "amdqp_model.json"), "w") as f:
        json.dump({"scale": scale, "seed": seed, "params": params,
                   "transformers": transformers.__version__}, f)
    with open(done, "w") as f:
        f.write("ok\n")
    del model
    return path


def _dtype_kwarg(dtype):
    import transformers
    major = int(transformers.__version__.split(".")[0])
    minor = int(transformers.__version__.split(".")[1])
    # transformers 4.56 renamed torch_dtype to dtype
    return {"dtype": dtype} if (major, minor) >= (4, 56) else {"torch_dtype": dtype}


def _is_dtensor(t):
    return hasattr(t, "full_tensor") and hasattr(t, "placements")


def _local(t):
    """A DTensor output (tp_plan) as a plain tensor, gathering only when it
    is sharded: a replicated one is already whole on every rank."""
    if not _is_dtensor(t):
        return t
    if all(type(p).__name__ == "Replicate" for p in t.placements):
        return t.to_local()
    return t.full_tensor()


def _last_logits(logits):
    """logits[:, -1] as a plain tensor. The slice comes first, so a logits
    DTensor still sharded over the vocabulary (or the sequence) gathers one
    position per sequence, not the whole prompt's [B, T, vocab]."""
    if not _is_dtensor(logits):
        return logits[:, -1]
    return _local(logits[:, -1:])[:, -1]


class _HFState:
    def __init__(self):
        self.past = None


class HFRunner:
    def __init__(self, path, tp, dev, dtype, what):
        import_transformers()
        from transformers import AutoModelForCausalLM
        kw = _dtype_kwarg(dtype)
        try:
            if tp.world > 1:
                model = AutoModelForCausalLM.from_pretrained(path, tp_plan="auto", **kw)
            else:
                model = AutoModelForCausalLM.from_pretrained(path, **kw).to(dev)
        except Exception as exc:
            how = 'tp_plan="auto"' if tp.world > 1 else "a single device"
            raise ModelError(f"loading {what} from {path} on {how} failed: "
                             f"{type(exc).__name__}: {exc}") from exc
        self.model = model.eval()
        self.dev = dev
        cfg = model.config
        self.vocab_size = int(cfg.vocab_size)
        self.max_pos = int(getattr(cfg, "max_position_embeddings", 4096) or 4096)
        self.optim = None
        self.description = f"{what}: {type(model).__name__} ({getattr(cfg, 'model_type', '?')})"
        # A DTensor parameter's numel() is its global one: no gather (torch
        # 2.11 cannot even gather the _StridedShard placements tp_plan="auto"
        # gives DeepSeek's experts, issue 26).
        self.params = sum(p.numel() for p in model.parameters())

    def new_session(self, batch, max_len):
        if max_len > self.max_pos:
            raise ModelError(f"sequence of {max_len} tokens exceeds the model's "
                             f"{self.max_pos} positions")
        return _HFState()

    @torch.no_grad()
    def prefill(self, state, ids):
        out = self.model(input_ids=ids, use_cache=True)
        state.past = out.past_key_values
        return _last_logits(out.logits).argmax(-1)

    @torch.no_grad()
    def decode(self, state, tok):
        out = self.model(input_ids=tok[:, None], past_key_values=state.past, use_cache=True)
        state.past = out.past_key_values
        return _last_logits(out.logits).argmax(-1)

    def train_step(self, ids):
        if self.optim is None:
            self.model.train()
            self.optim = torch.optim.SGD(self.model.parameters(), lr=1e-4)
        out = self.model(input_ids=ids, labels=ids)
        out.loss.backward()
        self.optim.step()
        self.optim.zero_grad(set_to_none=True)
        return float(_local(out.loss).item())


def build_runner(cfg, tp, dev, dtype):
    """The runner for this rank; ModelError on anything the user can fix."""
    if cfg["checkpoint"]:
        return HFRunner(cfg["checkpoint"], tp, dev, dtype, f"checkpoint {cfg['checkpoint']}")
    if cfg["model"] == "deepseek":
        return HFRunner(cfg["deepseek_path"], tp, dev, dtype,
                        f"DeepSeek-V3 architecture ({cfg['model_scale']}, random)")
    return DenseRunner(cfg["model_scale"], tp, dev, dtype, cfg["seed"])


def check_divisible(model, scale, tp):
    """A message when --tp cannot split the model evenly, else None."""
    if model == "dense":
        s = DENSE_SCALES[scale]
        for what, n in (("heads", s["heads"]), ("vocabulary", s["vocab"])):
            if n % tp:
                return f"dense {scale}: {what} ({n}) is not divisible by --tp {tp}"
    elif model == "deepseek":
        s = DEEPSEEK_SCALES[scale]
        for what, n in (("attention heads", s["num_attention_heads"]),
                        ("moe_intermediate_size", s["moe_intermediate_size"]),
                        ("vocab_size", s["vocab_size"])):
            if n % tp:
                return f"deepseek {scale}: {what} ({n}) is not divisible by --tp {tp}"
    return None


def log_stderr(msg):
    print(f"llm_tp: {msg}", file=sys.stderr, flush=True)
