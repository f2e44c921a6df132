"""The machine a bench ran on, printed beside its figures: results may depend on the CPU."""

from __future__ import annotations

from pathlib import Path


def cpu() -> str:
    """The model name and the int8-relevant instruction sets, from /proc/cpuinfo (Linux)."""
    info = Path("/proc/cpuinfo").read_text() if Path("/proc/cpuinfo").exists() else ""
    fields = dict(line.split(":", 1) for line in info.splitlines() if ":" in line)
    flags = set(fields.get("flags\t\t", "").split())
    model = fields.get("model name\t", "unknown CPU").strip()
    wanted = ("avx2", "avx_vnni", "avx512f", "avx512_vnni", "amx_int8")
    return f"CPU: {model}; {' '.join(flag if flag in flags else f'no-{flag}' for flag in wanted)}"
