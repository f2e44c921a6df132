"""The machine a bench ran on, printed beside its figures: results may depend on the CPU."""

from __future__ import annotations

import contextlib
import os
import subprocess
from pathlib import Path


def cpu() -> str:
    """The model name and the int8-relevant instruction sets, from /proc/cpuinfo (Linux)."""
    info = Path("/proc/cpuinfo").read_text() if Path("/proc/cpuinfo").exists() else ""
    fields = dict(line.split(":", 1) for line in info.splitlines() if ":" in line)
    flags = set(fields.get("flags\t\t", "").split())
    model = fields.get("model name\t", "unknown CPU").strip()
    wanted = ("avx2", "avx_vnni", "avx512f", "avx512_vnni", "amx_int8")
    return f"CPU: {model}; {' '.join(flag if flag in flags else f'no-{flag}' for flag in wanted)}"


def lscpu_model() -> str:
    """The CPU's model name as `lscpu` prints it."""
    try:
        lines = subprocess.run(["lscpu"], capture_output=True, text=True, check=True).stdout.splitlines()
    except (OSError, subprocess.CalledProcessError):
        return "unknown CPU (no lscpu)"
    return next((line.split(":", 1)[1].strip() for line in lines if line.startswith("Model name")), "unknown CPU")


def load_average() -> str:
    one, five, fifteen = os.getloadavg()
    return f"load average {one:.1f} / {five:.1f} / {fifteen:.1f} on {os.cpu_count()} cores"


def process_tree_cpu(pid: int) -> float:
    """CPU seconds, user and system, of a process and its descendants, including those that already
    exited (their parent reaped them: a server's short-lived backends, a worker's children)."""
    import psutil

    root = psutil.Process(pid)
    total = 0.0
    for process in [root, *root.children(recursive=True)]:
        with contextlib.suppress(psutil.NoSuchProcess):
            times = process.cpu_times()
            total += times.user + times.system + times.children_user + times.children_system
    return total
