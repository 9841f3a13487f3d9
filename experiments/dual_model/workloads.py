# SPDX-License-Identifier: MIT
"""Models with random weights and their inputs: one forward pass is one request
(high priority) or one iteration (low priority)."""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Callable

import torch
from torch import nn
import torch.nn.functional as F

from presets import TaskSpec

# BERT-base (the transformers defaults) and the tiny stand-in for smoke tests.
BERT_SHAPES = {
    "full": dict(vocab=30522, hidden=768, layers=12, heads=12, ffn=3072, max_pos=512),
    "tiny": dict(vocab=1000, hidden=64, layers=2, heads=2, ffn=256, max_pos=64),
}


@dataclass
class Workload:
    task: TaskSpec
    model: nn.Module
    run: Callable[[], Any]  # one forward pass, not synchronized
    items_per_iter: int  # images or sequences per forward pass
    impl: str  # where the model class comes from


def inference_context():
    # inference_mode is torch >= 1.9; no_grad keeps older builds working.
    mode = getattr(torch, "inference_mode", None)
    return mode() if mode is not None else torch.no_grad()


class _EncoderLayer(nn.Module):
    def __init__(self, hidden: int, heads: int, ffn: int) -> None:
        super().__init__()
        self.heads = heads
        self.qkv = nn.Linear(hidden, 3 * hidden)
        self.out = nn.Linear(hidden, hidden)
        self.ln1 = nn.LayerNorm(hidden, eps=1e-12)
        self.up = nn.Linear(hidden, ffn)
        self.down = nn.Linear(ffn, hidden)
        self.ln2 = nn.LayerNorm(hidden, eps=1e-12)

    def forward(self, x: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        b, s, h = x.shape
        d = h // self.heads
        q, k, v = self.qkv(x).view(b, s, 3, self.heads, d).permute(2, 0, 3, 1, 4)
        sdpa = getattr(F, "scaled_dot_product_attention", None)
        if sdpa is not None:
            ctx = sdpa(q, k, v, attn_mask=mask)
        else:
            scores = q @ k.transpose(-1, -2) / math.sqrt(d) + mask
            ctx = scores.softmax(-1) @ v
        ctx = ctx.transpose(1, 2).reshape(b, s, h)
        x = self.ln1(x + self.out(ctx))
        return self.ln2(x + self.down(F.gelu(self.up(x))))


class SmallBert(nn.Module):
    """BERT-base-shaped encoder in plain torch, for hosts without transformers:
    the same layer count, widths and kernel mix (GEMMs, softmax, LayerNorm,
    GELU), not the same numerics."""

    def __init__(
        self, vocab: int, hidden: int, layers: int, heads: int, ffn: int, max_pos: int
    ) -> None:
        super().__init__()
        self.word = nn.Embedding(vocab, hidden)
        self.pos = nn.Embedding(max_pos, hidden)
        self.token_type = nn.Embedding(2, hidden)
        self.ln = nn.LayerNorm(hidden, eps=1e-12)
        self.layers = nn.ModuleList(_EncoderLayer(hidden, heads, ffn) for _ in range(layers))
        self.pool = nn.Linear(hidden, hidden)

    def forward(self, input_ids: torch.Tensor, attention_mask: torch.Tensor) -> torch.Tensor:
        s = input_ids.shape[1]
        pos = torch.arange(s, device=input_ids.device)
        x = self.word(input_ids) + self.pos(pos) + self.token_type(torch.zeros_like(input_ids))
        x = self.ln(x)
        # Additive mask: 0 where attended, a large negative where padded.
        mask = (1.0 - attention_mask[:, None, None, :].to(x.dtype)) * -1e4
        for layer in self.layers:
            x = layer(x, mask)
        return torch.tanh(self.pool(x[:, 0]))


def _transformers_bert(shape: dict[str, int]) -> nn.Module:
    from transformers import BertConfig, BertModel  # noqa: WPS433 (optional dependency)

    cfg = BertConfig(
        vocab_size=shape["vocab"],
        hidden_size=shape["hidden"],
        num_hidden_layers=shape["layers"],
        num_attention_heads=shape["heads"],
        intermediate_size=shape["ffn"],
        max_position_embeddings=shape["max_pos"],
    )
    return BertModel(cfg)


def transformers_available() -> bool:
    try:
        import transformers  # noqa: F401
    except Exception:  # a broken install is as good as none here
        return False
    return True


def _bert(task: TaskSpec, scale: str, device: torch.device, impl: str) -> Workload:
    shape = BERT_SHAPES[scale]
    if impl == "auto":
        impl = "transformers" if transformers_available() else "builtin"
    model = _transformers_bert(shape) if impl == "transformers" else SmallBert(**shape)
    model = model.to(device).eval()
    ids = torch.randint(0, shape["vocab"], (task.batch, task.seq_len), device=device)
    mask = torch.ones_like(ids)

    def run() -> Any:
        return model(input_ids=ids, attention_mask=mask)

    return Workload(task, model, run, task.batch, impl)


def _resnet(task: TaskSpec, device: torch.device) -> Workload:
    import torchvision

    ctor = getattr(torchvision.models, task.model)
    model = ctor(weights=None).to(device).eval()
    x = torch.randn(task.batch, 3, task.image_size, task.image_size, device=device)

    def run() -> Any:
        return model(x)

    return Workload(task, model, run, task.batch, f"torchvision {torchvision.__version__}")


def build(task: TaskSpec, scale: str, device: torch.device, bert_impl: str = "auto") -> Workload:
    """The task's model on the device, random weights, fixed random input."""
    torch.manual_seed(0)
    if task.model.startswith("resnet"):
        return _resnet(task, device)
    if task.model == "bert_base":
        return _bert(task, scale, device, bert_impl)
    raise ValueError(f"unknown model {task.model!r}")


def device_sync(device: torch.device) -> Callable[[], None]:
    """A function that waits for the device's queued work (no-op on CPU)."""
    if device.type == "cuda":
        return torch.cuda.synchronize
    return lambda: None
