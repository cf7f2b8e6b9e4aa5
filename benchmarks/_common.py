"""Shared helpers of the benchmark scripts: timing, machine description, tables.

Not a benchmark itself. The scripts in this folder import it as ``_common``
(Python puts the script's own folder on ``sys.path``).
"""

from __future__ import annotations

import gc
import json
import math
import os
import platform
import resource
import sys
import time
from collections.abc import Callable, Sequence
from importlib import metadata
from pathlib import Path
from typing import Any, NamedTuple


class Timing(NamedTuple):
    """Result of :func:`timed_cpu`: wall-clock and CPU seconds of every run."""

    seconds: float  # minimum wall-clock seconds over the runs
    times: list[float]  # wall-clock seconds of every run
    cpu_seconds: float  # minimum CPU seconds (this process + reaped child processes)
    cpu_times: list[float]
    result: Any  # what the last run returned


def _cpu_now() -> float:
    own = resource.getrusage(resource.RUSAGE_SELF)
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


def timed_cpu(fn: Callable[[], Any], repeats: int) -> Timing:
    """Run ``fn`` ``repeats`` times and keep the wall-clock and CPU time of each run.

    The minimum is reported because the machine may be shared: other load can
    only make a run slower, never faster. CPU time (user + system, of this
    process and of child processes that have ended and been reaped, such as the
    workers of a ``multiprocessing.Pool``) depends much less on other load than
    wall-clock time does.
    """
    times: list[float] = []
    cpu_times: list[float] = []
    result: Any = None
    for _ in range(max(1, repeats)):
        gc.collect()
        cpu0 = _cpu_now()
        start = time.perf_counter()
        result = fn()
        times.append(time.perf_counter() - start)
        cpu_times.append(_cpu_now() - cpu0)
    return Timing(min(times), times, min(cpu_times), cpu_times, result)


def timed(fn: Callable[[], Any], repeats: int) -> tuple[float, list[float], Any]:
    """Run ``fn`` ``repeats`` times; return (min seconds, all seconds, last result).

    Wall-clock only; see :func:`timed_cpu` for CPU time as well.
    """
    timing = timed_cpu(fn, repeats)
    return timing.seconds, timing.times, timing.result


def se_z(se_a: float, b_a: int, se_b: float, b_b: int) -> float:
    """z of the difference of two bootstrap SEs from independent replicates.

    The SD estimated from B replicates has a relative standard error of about
    1/sqrt(2B) (exact for normal replicates), so
    Var(se_a - se_b) ≈ se_a²/(2 B_a) + se_b²/(2 B_b).
    """
    scale = math.sqrt(se_a**2 / (2 * b_a) + se_b**2 / (2 * b_b))
    return (se_a - se_b) / scale if scale > 0 else float("nan")


def _version(dist: str) -> str:
    try:
        return metadata.version(dist)
    except metadata.PackageNotFoundError:
        return "not installed"


def _cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def load_average() -> str:
    try:
        return " ".join(f"{x:.2f}" for x in os.getloadavg())
    except OSError:
        return "n/a"


def _git_revision() -> str:
    """Commit of the glotbench checkout (with "+dirty" if the tree has changes)."""
    import subprocess

    root = Path(__file__).resolve().parent.parent
    try:
        head = subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"], cwd=root, capture_output=True, text=True
        ).stdout.strip()
        dirty = subprocess.run(
            ["git", "status", "--porcelain", "--untracked-files=no", "src"],
            cwd=root,
            capture_output=True,
            text=True,
        ).stdout.strip()
    except OSError:
        return "unknown"
    return f"{head}+dirty" if head and dirty else head or "unknown"


def _engine_digest() -> str:
    """Short SHA-256 of the resampling engine's source files, to tell versions apart."""
    import hashlib

    import glotbench.resample as resample

    digest = hashlib.sha256()
    for path in sorted(Path(resample.__file__).parent.glob("*.py")):
        digest.update(path.read_bytes())
    return digest.hexdigest()[:12]


def machine_info(packages: Sequence[str]) -> dict[str, Any]:
    """Machine, Python and package versions, and the current load average."""
    import glotbench

    info: dict[str, Any] = {
        "python": sys.version.split()[0],
        "platform": platform.platform(),
        "cpu": _cpu_model(),
        "cpus": os.cpu_count(),
        "load_average_1_5_15": load_average(),
        "glotbench": getattr(glotbench, "__version__", "?"),
        "glotbench_commit": _git_revision(),
        "resample_engine_sha256": _engine_digest(),
    }
    for dist in packages:
        info[dist] = _version(dist)
    return info


def print_header(title: str, info: dict[str, Any]) -> None:
    print(f"== {title}")
    for key, value in info.items():
        print(f"   {key}: {value}")
    print()


def fmt(value: Any, digits: int = 6) -> str:
    if isinstance(value, float):
        if math.isnan(value):
            return "n/a"
        if value != 0 and (abs(value) >= 1e5 or abs(value) < 1e-3):
            return f"{value:.{digits - 2}g}"
        return f"{value:.{digits}g}"
    return str(value)


def print_table(rows: Sequence[dict[str, Any]], columns: Sequence[str]) -> None:
    """Plain-text table (also valid Markdown)."""
    cells = [[fmt(row.get(col, "")) for col in columns] for row in rows]
    widths = [max(len(col), *(len(r[i]) for r in cells)) for i, col in enumerate(columns)]
    print("| " + " | ".join(c.ljust(w) for c, w in zip(columns, widths, strict=True)) + " |")
    print("| " + " | ".join("-" * w for w in widths) + " |")
    for r in cells:
        print("| " + " | ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)) + " |")
    print()


def write_json(path: str | None, payload: dict[str, Any]) -> None:
    if path:
        Path(path).parent.mkdir(parents=True, exist_ok=True)
        Path(path).write_text(json.dumps(payload, indent=2, default=float) + "\n")
        print(f"results written to {path}")
