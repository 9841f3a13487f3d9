# SPDX-License-Identifier: MIT
"""What the host reports about itself, for the result's "versions"."""
from __future__ import annotations

import os
import platform
import re
import shutil
import subprocess
from typing import Optional


def _run(cmd: list[str]) -> Optional[str]:
    if not shutil.which(cmd[0]):
        return None
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=20, check=False)
    except (OSError, subprocess.SubprocessError):
        return None
    return p.stdout if p.returncode == 0 else None


def driver_version() -> Optional[str]:
    """The GPU driver's version: nvidia-smi, else rocm-smi, else the amdgpu
    module's version file; None on a host with neither."""
    out = _run(["nvidia-smi", "--query-gpu=driver_version", "--format=csv,noheader"])
    if out and out.strip():
        return "nvidia " + out.strip().splitlines()[0].strip()
    out = _run(["rocm-smi", "--showdriverversion"])
    if out:
        m = re.search(r"[Dd]river version:\s*(\S+)", out)
        if m:
            return "amdgpu " + m.group(1)
    try:
        with open("/sys/module/amdgpu/version", encoding="utf-8") as f:
            return "amdgpu " + f.read().strip()
    except OSError:
        return None


def host() -> dict[str, Optional[str]]:
    return {
        "hostname": platform.node() or None,
        "kernel": platform.release() or None,
        "cpus": str(os.cpu_count()),
    }
