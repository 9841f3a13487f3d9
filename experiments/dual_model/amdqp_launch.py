# SPDX-License-Identifier: MIT
"""--amdqp: start each task through `amdqpctl run --priority LEVEL --` with
amdqpd running, so the tasks' GPU queues are tagged and the daemon acts on them."""
from __future__ import annotations

import json
import os
import shutil
import subprocess
from typing import Any


class AmdqpUnavailable(RuntimeError):
    """The host cannot run an --amdqp measurement; the message says why."""


def resolve(amdqpctl: str) -> str:
    path = shutil.which(amdqpctl)
    if path is None:
        raise AmdqpUnavailable(
            f"--amdqp: {amdqpctl!r} is not an executable on PATH; install amdqp "
            "(tools/amdqpctl) or pass --amdqpctl /path/to/amdqpctl"
        )
    return os.path.abspath(path)


def status(amdqpctl: str) -> dict[str, Any]:
    """`amdqpctl status --json`, checked: amdqpd must be running. Its exit
    status says whether /dev/amdqp is usable (the cooperative fallback may
    still serve), so only the report's daemon state decides."""
    try:
        p = subprocess.run(
            [amdqpctl, "status", "--json"], capture_output=True, text=True, timeout=30, check=False
        )
    except (OSError, subprocess.SubprocessError) as e:
        raise AmdqpUnavailable(f"--amdqp: cannot run {amdqpctl} status --json: {e}") from e
    try:
        report = json.loads(p.stdout)
        state = report["daemon"]["state"]
    except (ValueError, KeyError, TypeError) as e:
        raise AmdqpUnavailable(
            f"--amdqp: {amdqpctl} status --json (exit {p.returncode}) gave no daemon state: "
            f"{(p.stderr or p.stdout).strip()[:300]!r}"
        ) from e
    if state != "running":
        raise AmdqpUnavailable(
            f"--amdqp: amdqpd is {state} (amdqpctl status); start it first, "
            "e.g. `sudo systemctl start amdqpd` or `sudo amdqpd &`"
        )
    daemon = report["daemon"]
    return {
        "amdqpctl": amdqpctl,
        "status_exit": p.returncode,
        "module_available": (report.get("module") or {}).get("available"),
        "library_version": report.get("library_version"),
        "daemon_state": state,
        "daemon_pid": daemon.get("pid"),
        "daemon_path": daemon.get("path"),
        "devices": report.get("devices"),
    }


def prefix(amdqpctl: str, level: str) -> list[str]:
    return [amdqpctl, "run", "--priority", level, "--"]
