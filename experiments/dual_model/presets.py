# SPDX-License-Identifier: MIT
"""The seeds' dual-model tests as data: tasks, their phases, and the tiny scale."""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass

# amdqpctl's level names; amdqp priorities are KFD's (0 lowest, 15 highest).
PRIORITY_LEVELS = {"high": 12, "normal": 7, "low": 2}
ROLE_PRIORITY = {"hp": "high", "normal": "normal", "lp": "low"}


@dataclass(frozen=True)
class TaskSpec:
    """One process of a test: what it runs and how requests arrive."""

    name: str  # key in the result's "tasks"
    role: str  # "hp" | "normal" | "lp" (contract)
    model: str  # "resnet18" | "resnet50" | "bert_base"
    batch: int
    rate_per_s: float  # open-loop arrival rate; 0.0 = back to back
    seq_len: int = 0  # BERT only
    image_size: int = 0  # ResNet only

    @property
    def priority(self) -> str:
        return ROLE_PRIORITY[self.role]

    @property
    def open_loop(self) -> bool:
        return self.rate_per_s > 0.0

    @property
    def workload_name(self) -> str:
        """File stem of the task's kernel timeline (matches the H200 fixtures)."""
        name = f"{self.model}_bs{self.batch}"
        if self.seq_len:
            name += f"_seq{self.seq_len}"
        return name


@dataclass(frozen=True)
class Preset:
    name: str
    description: str
    tasks: tuple[TaskSpec, ...]
    # Phases in run order: (phase name, names of the tasks running in it).
    phases: tuple[tuple[str, tuple[str, ...]], ...]

    def task(self, name: str) -> TaskSpec:
        for t in self.tasks:
            if t.name == name:
                return t
        raise KeyError(name)

    @property
    def phase_names(self) -> list[str]:
        return [p for p, _ in self.phases]


def _two_task(name: str, description: str, hp: TaskSpec, lp: TaskSpec) -> Preset:
    return Preset(
        name=name,
        description=description,
        tasks=(hp, lp),
        phases=(
            ("hp_alone", (hp.name,)),
            ("lp_alone", (lp.name,)),
            ("contended", (hp.name, lp.name)),
        ),
    )


def _bert3() -> Preset:
    tasks = (
        TaskSpec("high", "hp", "bert_base", 1, 20.0, seq_len=128),
        TaskSpec("normal", "normal", "bert_base", 8, 5.0, seq_len=128),
        TaskSpec("low", "lp", "bert_base", 64, 0.0, seq_len=128),
    )
    return Preset(
        name="bert3",
        description="BERT-base 3-task concurrency: high bs1 seq128 @20 req/s, "
        "normal bs8 seq128 @5 req/s, low bs64 seq128 back to back",
        tasks=tasks,
        phases=tuple((f"alone_{t.name}", (t.name,)) for t in tasks)
        + (("contended", tuple(t.name for t in tasks)),),
    )


PRESETS: dict[str, Preset] = {
    "test3": _two_task(
        "test3",
        "seeds' Test 3: ResNet-18 bs1 @10 req/s (high) vs ResNet-50 bs8 back to back (low)",
        TaskSpec("hp", "hp", "resnet18", 1, 10.0, image_size=224),
        TaskSpec("lp", "lp", "resnet50", 8, 0.0, image_size=224),
    ),
    "test4": _two_task(
        "test4",
        "seeds' Test 4: ResNet-18 bs1 @20 req/s (high) vs ResNet-50 bs1024 back to back (low)",
        TaskSpec("hp", "hp", "resnet18", 1, 20.0, image_size=224),
        TaskSpec("lp", "lp", "resnet50", 1024, 0.0, image_size=224),
    ),
    "bert3": _bert3(),
}

MODEL_SCALES = ("full", "tiny")


def scaled(task: TaskSpec, scale: str) -> TaskSpec:
    """The task at a model scale; "tiny" keeps the structure (processes, rates,
    phases) but shrinks models, batches and inputs so a CPU run takes seconds."""
    if scale == "full":
        return task
    # Batches shrink to a handful but stay distinct, so tasks keep distinct
    # workloads (and timeline files): 1, 8, 64, 1024 -> 1, 2, 3, 5.
    batch = 1 if task.batch == 1 else max(2, task.batch.bit_length() // 2)
    return dataclasses.replace(
        task,
        batch=batch,
        seq_len=16 if task.seq_len else 0,
        image_size=32 if task.image_size else 0,
    )
