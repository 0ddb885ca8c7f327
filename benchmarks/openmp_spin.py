"""The embedded model's speed by torch thread count and OpenMP spin, on a quiet or busy machine.

Usage: python benchmarks/openmp_spin.py [--per-family 20] [--spins 300000,10000,3000,0]

Each setting runs in a fresh process (libgomp reads GOMP_SPINCOUNT once, when torch loads it):
the default smollm2 (mixed precision) on the first `--per-family` pairs per family of the
default build (seed 0, 120 items at 20), length-ordered, after a warm-up batch; items/s of the
timed call. "busy" runs the same while another process (`yes > /dev/null`) holds one core, as
any other work on the machine does. libgomp's own default spin is 300000; twinbench sets
twinbench.cpu.OPENMP_SPIN unless the environment has GOMP_SPINCOUNT or OMP_WAIT_POLICY.
"""

from __future__ import annotations

import argparse
import os
import platform
import subprocess
import sys

CHILD = """
import sys, tempfile, time
from pathlib import Path
import twinbench  # first: it sets the OpenMP spin before torch loads libgomp
import torch
from twinbench.builder import build
from twinbench.evaluation import eval_slice
from twinbench.runner import request_for
from twinbench.systems.local_model import load_smollm2
from twinbench.systems.smollm2 import SmolLM2System

per_family, threads = int(sys.argv[1]), int(sys.argv[2])
with tempfile.TemporaryDirectory() as tmp:
    items = eval_slice(build(Path(tmp), seed=0), per_family)
requests = [request_for(item, 0, 0, item.id) for item in items]
load_smollm2()
torch.set_num_threads(threads)
system = SmolLM2System()
system.respond(requests[:8])  # prefix caches, kernels
started = time.perf_counter()
system.respond(requests)
print(f"{len(requests) / (time.perf_counter() - started):.2f}")
"""


def rate(per_family: int, threads: int, spin: str, busy: bool) -> str:
    env = {k: v for k, v in os.environ.items() if k not in ("GOMP_SPINCOUNT", "OMP_WAIT_POLICY")}
    env["GOMP_SPINCOUNT"] = spin
    hog = subprocess.Popen(["yes"], stdout=subprocess.DEVNULL) if busy else None
    try:
        done = subprocess.run(
            [sys.executable, "-c", CHILD, str(per_family), str(threads)],
            env=env,
            capture_output=True,
            text=True,
            check=True,
        )
    finally:
        if hog is not None:
            hog.kill()
            hog.wait()
    return done.stdout.strip().splitlines()[-1]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--per-family", type=int, default=20)
    parser.add_argument("--spins", default="300000,10000,3000,0")
    args = parser.parse_args()
    cores = len(os.sched_getaffinity(0))
    print(f"machine: {platform.machine()}, {cores} cores; items/s of smollm2 (mixed)")
    print(f"{'threads':>7} {'GOMP_SPINCOUNT':>14} {'quiet':>7} {'busy':>7}")
    settings = [(cores, spin) for spin in args.spins.split(",")] + [(1, "300000")]
    for threads, spin in settings:
        quiet = rate(args.per_family, threads, spin, busy=False)
        busy = rate(args.per_family, threads, spin, busy=True)
        print(f"{threads:7} {spin:>14} {quiet:>7} {busy:>7}", flush=True)


if __name__ == "__main__":
    main()
