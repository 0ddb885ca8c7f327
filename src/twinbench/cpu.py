"""How many CPUs this process may use, and how torch's OpenMP threads wait for each other.

Measured on the project's 2-core machine (docs/benchmarks.md, "The main job from a fresh
install"; benchmarks/openmp_spin.py):

* torch's OpenMP runtime (GNU libgomp) spins a waiting thread for 300,000 iterations before it
  sleeps. When anything else holds one of two cores, the spinning thread takes the CPU from
  its partner: the embedded model ran 5x slower (8.85 -> 1.73 items/s) and `twinbench eval`
  took 688 s instead of 115 s. A spin of 10,000 keeps the quiet speed (9.44 items/s) and runs
  4.03 items/s with a core busy (eval: 212 s).
* `os.cpu_count()` counts the host's CPUs, not the ones a container's affinity mask or cgroup
  quota grants; more torch threads than usable cores only add threads that wait.

The thread count is never chosen from timings: torch's results depend (in the last digits) on
the number of threads, and a run's files must not depend on the machine's load.

`configure_openmp` runs when `twinbench` is imported, before torch is; a value the user set in
the environment is kept. libgomp reads the variable once, when torch loads it, so a program
that imports torch before twinbench keeps libgomp's default.
"""

from __future__ import annotations

import math
import os
from pathlib import Path

#: GOMP_SPINCOUNT twinbench sets unless the environment has one (libgomp's default: 300000)
OPENMP_SPIN = "10000"


def configure_openmp() -> None:
    """Set a short OpenMP spin (before torch loads libgomp) unless the user set one."""
    if "OMP_WAIT_POLICY" not in os.environ:
        os.environ.setdefault("GOMP_SPINCOUNT", OPENMP_SPIN)


def _cgroup_quota(root: Path = Path("/sys/fs/cgroup")) -> float | None:
    """CPUs granted by the cgroup quota (v2 cpu.max or v1 cfs quota/period), None if none."""
    try:
        quota, period = (root / "cpu.max").read_text().split()[:2]
        return None if quota == "max" else int(quota) / int(period)
    except (OSError, ValueError):
        pass
    try:
        quota_us = int((root / "cpu" / "cpu.cfs_quota_us").read_text())
        period_us = int((root / "cpu" / "cpu.cfs_period_us").read_text())
    except (OSError, ValueError):
        return None
    return quota_us / period_us if quota_us > 0 and period_us > 0 else None


def usable_cpus(root: Path = Path("/sys/fs/cgroup")) -> int:
    """The CPUs this process may run on: its affinity mask, capped by a cgroup quota."""
    try:
        count = len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        count = os.cpu_count() or 1
    quota = _cgroup_quota(root)
    if quota is not None:
        count = min(count, max(1, math.ceil(quota)))
    return max(1, count)
