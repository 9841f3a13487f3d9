# SPDX-License-Identifier: MIT
"""Messages between the driver and its task processes, and exit statuses.

A task process writes one line per message on stdout: MARK KIND JSON. Lines
without the mark (a library printing to stdout) are passed on to stderr by
the driver. The driver writes "GO <monotonic t0>" and "STOP" on its stdin;
CLOCK_MONOTONIC is system-wide on Linux, so t0 means the same to every task.
"""
from __future__ import annotations

import json
import sys
from typing import Any, NoReturn, Optional

MARK = "@@dual_model"

EXIT_RUN = 1  # a task failed while running
EXIT_USAGE = 2  # bad command line
EXIT_ENV = 3  # the host cannot run what was asked (no CUDA, no amdqpd, ...)


def send(kind: str, payload: Any) -> None:
    sys.stdout.write(f"{MARK} {kind} {json.dumps(payload)}\n")
    sys.stdout.flush()


def parse(line: str) -> Optional[tuple[str, Any]]:
    if not line.startswith(MARK + " "):
        return None
    kind, _, payload = line[len(MARK) + 1 :].partition(" ")
    return kind, json.loads(payload) if payload.strip() else None


def fail(message: str, code: int) -> NoReturn:
    """Report a task's fatal error to the driver (which prints it) and exit
    with its status."""
    send("ERROR", {"message": message, "code": code})
    sys.exit(code)
