# SPDX-License-Identifier: MIT
"""--trace: the repository's ftrace capture around the contended phase.

ftrace_scripts/amdqp-capture records the amdqp tracepoints, amdgpu/KFD
events and KFD queue-manager calls system wide (--no-pid-filter: runlist
updates happen in kernel threads, not in the ranks' own context); the ranks'
pids are passed so the capture's pids.txt names them. When the phase ends
the capture gets SIGINT (its documented way to stop), then
`amdqp-trace report` analyses the folder. Both land next to --out.
"""

import glob
import os
import shutil
import signal
import subprocess
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))


def _find(env, name, candidates):
    for c in [os.environ.get(env), shutil.which(name)] + candidates:
        if c and os.path.isfile(c) and os.access(c, os.X_OK):
            return c
    return None


def capture_script():
    return _find("AMDQP_CAPTURE", "amdqp-capture",
                 [os.path.join(ROOT, "ftrace_scripts", "amdqp-capture")])


def trace_tool():
    return _find("AMDQP_TRACE", "amdqp-trace",
                 [os.path.join(ROOT, b, "tools", "amdqp-trace", "amdqp-trace")
                  for b in ("build", "build-user", "_build")])


def is_rocm_host():
    if os.path.exists("/dev/kfd"):
        return True
    try:
        import torch
        return bool(getattr(torch.version, "hip", None))
    except ImportError:
        return False


def preflight():
    """None when --trace can work here, else the reason."""
    if not is_rocm_host():
        return ("--trace needs a ROCm host (no /dev/kfd and torch is not a ROCm build): "
                "the capture records amdgpu/KFD queue events")
    if os.geteuid() != 0:
        return "--trace needs root (tracefs, kprobes and debugfs): run it with sudo"
    if not capture_script():
        return ("amdqp-capture not found (looked at $AMDQP_CAPTURE, PATH and "
                f"{os.path.join(ROOT, 'ftrace_scripts')})")
    if not trace_tool():
        return ("amdqp-trace not found (looked at $AMDQP_TRACE, PATH and the build/ "
                "folders of this tree): build it with cmake first")
    return None


class Capture:
    def __init__(self, parent, log):
        self.parent = parent
        self.log = log
        self.proc = None
        self.folder = None
        self.before = set()
        self.log_path = os.path.join(parent, "amdqp-capture.log")

    def start(self, pids):
        os.makedirs(self.parent, exist_ok=True)
        self.before = set(glob.glob(os.path.join(self.parent, "amdqp-capture-*")))
        cmd = [capture_script(), "-o", self.parent, "--no-pid-filter"]
        for p in pids:
            cmd += ["--pid", str(p)]
        self.log("trace: " + " ".join(cmd))
        with open(self.log_path, "w") as out:
            self.proc = subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT,
                                         stdin=subprocess.DEVNULL, start_new_session=True)
        time.sleep(2.0)  # tracefs set-up before the phase starts
        if self.proc.poll() is not None:
            raise RuntimeError(f"amdqp-capture exited at once (status {self.proc.returncode});"
                               f" see {self.log_path}")

    def stop(self):
        """Stops the capture; returns the capture folder or None."""
        if not self.proc:
            return None
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGINT)
        try:
            self.proc.wait(timeout=180)
        except subprocess.TimeoutExpired:
            self.proc.terminate()
            self.proc.wait(timeout=30)
        new = sorted(set(glob.glob(os.path.join(self.parent, "amdqp-capture-*"))) - self.before)
        self.folder = new[-1] if new else None
        return self.folder

    def report(self, out_path):
        if not self.folder:
            return None
        with open(out_path, "w") as out:
            rc = subprocess.run([trace_tool(), "report", "--no-progress", self.folder],
                                stdout=out, stderr=subprocess.STDOUT).returncode
        return {"capture": self.folder, "report": out_path, "report_exit": rc,
                "capture_log": self.log_path}
