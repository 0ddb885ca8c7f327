"""Time the default `twinbench build` (target <= 60 s on the 2-core development machine).

Usage: python benchmarks/build_time.py [--repeats N]
Runs the default build (seed 0, every generator, every source) into a temp folder N times and
prints the wall time of each run, with pair counts. No model is loaded by the default build
(rematch uses TF-IDF), so there is no one-time load to exclude.
"""

from __future__ import annotations

import argparse
import platform
import tempfile
import time
from pathlib import Path

from twinbench.builder import build


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    times = []
    for _ in range(args.repeats):
        with tempfile.TemporaryDirectory() as tmp:
            start = time.perf_counter()
            result = build(Path(tmp))
            times.append(time.perf_counter() - start)
    pairs = sum(g["pairs"] for g in result.manifest["generators"])
    print(f"machine: {platform.machine()}, CPython {platform.python_version()}")
    print(
        f"default build: {pairs} pairs ({2 * pairs} items) from "
        f"{len(result.manifest['generators'])} generators"
    )
    print(
        "wall seconds per run: "
        + ", ".join(f"{t:.2f}" for t in times)
        + f"; best {min(times):.2f}; target <= 60 s: {'met' if max(times) <= 60 else 'MISSED'}"
    )


if __name__ == "__main__":
    main()
