"""Shards at 100k and 1M items: wall time and peak RSS of loading, running and merging.

Usage: python benchmarks/shard_memory.py [--sizes 100000,1000000] [--shards 10] [--seed 0]
                                          [--work DIR] [--no-fallback]
For each size, writes a synthetic benchmark into a temp folder under DIR (default /tmp,
deleted at the end): copies of the default build's items (`twinbench build`), pair by pair in
a seeded order per copy, under new ids (`c00042/` before each id), written by
`builder.write_benchmark` (items.jsonl, its index, manifest). Then times, each in a fresh
subprocess under /usr/bin/time (wall time and peak RSS):

- load all: `runner.load_benchmark` of every item (what every shard did before the index);
- load 0/N: `shards.load_shard(..., (0, N))`; then its slice pickled and unpickled (what a
  Ray task would receive: size, seconds);
- run 0/N: `twinbench run --shard 0/N -s always-answer`, end to end; then shards 1..N-1;
  and shard 0/N of the same items without the index (a folder built before it: the fallback,
  which loads every item);
- merge: `twinbench merge` of the N shards.

Targets (issue 25): a 1/10 shard of 1M items under 600 MB peak RSS and at most 1/5 of the
single-process load time; merge memory flat in the number of rows. The load average is printed
with each row: the machine is shared, so rerun a row whose load was high.
"""

from __future__ import annotations

import argparse
import functools
import os
import platform
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any, overload

import numpy as np
import orjson

from twinbench.builder import build, write_benchmark
from twinbench.records import Item
from twinbench.runner import load_benchmark

LOAD_ALL = """
import sys, time
from pathlib import Path
from twinbench.runner import load_benchmark
start = time.perf_counter()
items = load_benchmark(Path(sys.argv[1]))
print(f"{len(items)} items in {time.perf_counter() - start:.2f} s")
"""

LOAD_SHARD = """
import sys, time
from pathlib import Path
from twinbench.shards import load_shard
start = time.perf_counter()
plan = load_shard(Path(sys.argv[1]), (0, int(sys.argv[2])))
print(f"{plan.task_count()} tasks in {time.perf_counter() - start:.2f} s")
"""

PICKLE_SHARD = """
import pickle, sys, time
from pathlib import Path
from twinbench.shards import shard_slice
part = shard_slice(Path(sys.argv[1]), (0, int(sys.argv[2])))
start = time.perf_counter()
data = pickle.dumps(part)
middle = time.perf_counter()
pickle.loads(data)
print(f"{len(data) / 1e6:.0f} MB pickled in {middle - start:.2f} s, unpickled in "
      f"{time.perf_counter() - middle:.2f} s")
"""

IMPORTS = "import twinbench.cli, twinbench.shards, twinbench.merging"
TWINBENCH = [sys.executable, "-m", "twinbench"]


class Copies(Sequence[Item]):
    """`size` items: copy k of `base` is its pairs in a seeded order, ids prefixed `cK/`."""

    def __init__(self, base: Sequence[Item], size: int, seed: int) -> None:
        pairs: dict[str, list[int]] = {}
        for n, item in enumerate(base):
            pairs.setdefault(item.pair_id, []).append(n)
        self.base, self.units, self.size, self.seed = base, list(pairs.values()), size, seed

    def __len__(self) -> int:
        return self.size

    @functools.lru_cache(maxsize=4)  # noqa: B019 (one Copies per benchmark)
    def _order(self, copy: int) -> list[int]:
        units = np.random.default_rng([self.seed, copy]).permutation(len(self.units))
        return [n for unit in units.tolist() for n in self.units[unit]]

    @overload
    def __getitem__(self, index: int) -> Item: ...
    @overload
    def __getitem__(self, index: slice) -> list[Item]: ...
    def __getitem__(self, index: int | slice) -> Item | list[Item]:
        if isinstance(index, slice):
            return [self[i] for i in range(*index.indices(self.size))]
        if not 0 <= index < self.size:
            raise IndexError(index)
        copy, n = divmod(index, len(self.base))
        return _renamed(self.base[self._order(copy)[n]], f"c{copy:05d}/")

    def __iter__(self) -> Iterator[Item]:
        return (self[i] for i in range(self.size))


def _renamed(item: Item, prefix: str) -> Item:
    twin = None if item.twin_id is None else prefix + item.twin_id
    update = {"id": prefix + item.id, "pair_id": prefix + item.pair_id, "twin_id": twin}
    return item.model_copy(update=update)


def synthetic(folder: Path, size: int, seed: int) -> float:
    """Write the synthetic benchmark of `size` items into `folder`; returns the seconds."""
    start = time.perf_counter()
    with tempfile.TemporaryDirectory() as tmp:
        built = build(Path(tmp), seed=seed)
        base = load_benchmark(Path(tmp))
    fields = {
        k: v
        for k, v in built.manifest.items()
        if k not in ("schema", "twinbench_version", "counts", "files")
    }
    fields["synthetic"] = f"{size} copies of the default build's items, seed {seed}"
    write_benchmark(folder, Copies(base, size, seed), [], fields)
    return time.perf_counter() - start


def _run(bench: Path, shard: str, out: str) -> list[str]:
    return [*TWINBENCH, "run", "-b", str(bench), "-s", "always-answer", "--shard", shard, "-o", out]


def _without_index(bench: Path, out: Path) -> Path:
    """`bench` as a folder built before the index: its files linked, no index listed."""
    out.mkdir()
    for name in ("items.jsonl", "holdout"):
        (out / name).symlink_to(bench / name)
    manifest = orjson.loads((bench / "manifest.json").read_bytes())
    del manifest["files"]["items.index.jsonl"]
    (out / "manifest.json").write_bytes(orjson.dumps(manifest))
    return out


def measure(args: list[str]) -> tuple[float, float, str]:
    """(wall seconds, peak RSS in MB, last line of output) of one subprocess, measured by
    /usr/bin/time: a small parent, so the child's peak is not the fork of this process."""
    with tempfile.NamedTemporaryFile("r") as report:
        timed = ["/usr/bin/time", "-o", report.name, "-f", "%e %M", *args]
        done = subprocess.run(timed, capture_output=True, text=True, check=False)
        if done.returncode != 0:
            raise SystemExit(f"{' '.join(args)} failed:\n{done.stdout}{done.stderr}")
        wall, kilobytes = report.read().split()[-2:]
    lines = [line for line in done.stdout.splitlines() if line.strip()]
    last = lines[-1].split(" in /")[0] if lines else ""  # the run's folder left out
    return float(wall), int(kilobytes) / 1024, last


def row(size: int, what: str, args: list[str]) -> dict[str, Any]:
    before = os.getloadavg()[0]
    wall, rss, note = measure(args)
    load = f"{before:.1f}-{os.getloadavg()[0]:.1f}"
    print(f"| {size:,} | {what} | {wall:.2f} | {rss:.0f} | {note} | {load} |", flush=True)
    return {"size": size, "what": what, "wall": wall, "rss": rss}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="100000,1000000")
    parser.add_argument("--shards", type=int, default=10)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--work", type=Path, default=Path("/tmp"))
    parser.add_argument(
        "--no-fallback", action="store_true", help="skip the shard without the index"
    )
    args = parser.parse_args()
    python, shards = sys.executable, args.shards
    print(
        f"machine: {platform.machine()}, {os.cpu_count()} cores, "
        f"CPython {platform.python_version()}"
    )
    _, imports, _ = measure([python, "-c", IMPORTS])
    print(f"peak RSS of the interpreter and twinbench's imports: {imports:.0f} MB")
    print("| items | measurement | wall s | peak RSS MB | output | load avg |")
    print("|---:|---|---:|---:|---|---|")
    for size in (int(s) for s in args.sizes.split(",")):
        work = Path(tempfile.mkdtemp(prefix="twinbench-shards-", dir=args.work))
        try:
            bench = work / "bench"
            made = synthetic(bench, size, args.seed)
            megabytes = (bench / "items.jsonl").stat().st_size / 1e6
            index = (bench / "items.index.jsonl").stat().st_size / 1e6
            print(
                f"| {size:,} | write the benchmark | {made:.2f} | | items.jsonl "
                f"{megabytes:.0f} MB, index {index:.0f} MB | {os.getloadavg()[0]:.1f} |",
                flush=True,
            )
            row(size, "load all", [python, "-c", LOAD_ALL, str(bench)])
            row(size, f"load 0/{shards}", [python, "-c", LOAD_SHARD, str(bench), str(shards)])
            pickled = [python, "-c", PICKLE_SHARD, str(bench), str(shards)]
            row(size, f"load 0/{shards}, pickle and unpickle it", pickled)
            folders = [str(work / f"shard{k}") for k in range(shards)]
            row(size, f"run 0/{shards}", _run(bench, f"0/{shards}", folders[0]))
            rest = [measure(_run(bench, f"{k}/{shards}", folders[k])) for k in range(1, shards)]
            print(
                f"| {size:,} | run 1..{shards - 1}/{shards} (each, mean) | "
                f"{np.mean([r[0] for r in rest]):.2f} | {max(r[1] for r in rest):.0f} (max) | | "
                f"{os.getloadavg()[0]:.1f} |",
                flush=True,
            )
            if not args.no_fallback:
                old = _without_index(bench, work / "old")
                fallback = _run(old, f"0/{shards}", str(work / "old0"))
                row(size, f"run 0/{shards}, no index", fallback)
            merged = str(work / "merged")
            row(
                size,
                f"merge {shards} shards",
                [python, "-m", "twinbench", "merge", *folders, "-o", merged],
            )
            rows = sum(1 for _ in (work / "merged" / "responses.jsonl").open("rb"))
            record = orjson.loads((work / "merged" / "run.json").read_bytes())
            assert rows == size == record["responses"], (rows, size, record["responses"])
        finally:
            shutil.rmtree(work)


if __name__ == "__main__":
    main()
