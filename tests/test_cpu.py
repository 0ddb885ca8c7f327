"""Usable CPUs (affinity, cgroup quotas) and the OpenMP spin twinbench sets before torch loads."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from twinbench.cpu import OPENMP_SPIN, usable_cpus


def _cgroup(root: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)
    return root


def test_usable_cpus_is_the_affinity_mask_without_a_quota(tmp_path: Path) -> None:
    assert usable_cpus(tmp_path) == len(os.sched_getaffinity(0))
    assert usable_cpus(_cgroup(tmp_path, {"cpu.max": "max 100000\n"})) == len(
        os.sched_getaffinity(0)
    )


@pytest.mark.parametrize(
    ("files", "quota"),
    [
        ({"cpu.max": "100000 100000\n"}, 1),  # v2: one CPU
        ({"cpu.max": "50000 100000\n"}, 1),  # half a CPU still runs one thread
        ({"cpu/cpu.cfs_quota_us": "100000\n", "cpu/cpu.cfs_period_us": "100000\n"}, 1),  # v1
    ],
)
def test_a_cgroup_quota_caps_the_threads(tmp_path: Path, files: dict[str, str], quota: int) -> None:
    assert usable_cpus(_cgroup(tmp_path, files)) == min(quota, len(os.sched_getaffinity(0)))


def test_a_v1_quota_of_minus_one_is_no_quota(tmp_path: Path) -> None:
    files = {"cpu/cpu.cfs_quota_us": "-1\n", "cpu/cpu.cfs_period_us": "100000\n"}
    assert usable_cpus(_cgroup(tmp_path, files)) == len(os.sched_getaffinity(0))


def _spin_after_import(env: dict[str, str]) -> str:
    code = "import os, twinbench; print(os.environ.get('GOMP_SPINCOUNT', '-'))"
    clean = {k: v for k, v in os.environ.items() if k not in ("GOMP_SPINCOUNT", "OMP_WAIT_POLICY")}
    done = subprocess.run(
        [sys.executable, "-c", code], env=clean | env, capture_output=True, text=True, check=True
    )
    return done.stdout.strip()


def test_importing_twinbench_sets_a_short_spin_unless_the_user_chose_one() -> None:
    assert _spin_after_import({}) == OPENMP_SPIN
    assert _spin_after_import({"GOMP_SPINCOUNT": "123"}) == "123"
    assert _spin_after_import({"OMP_WAIT_POLICY": "ACTIVE"}) == "-"
