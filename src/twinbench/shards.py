"""Shards that read and hold only their slice of a benchmark (`run --shard I/N`, Ray tasks).

With the benchmark's index (`item_index.py`) a shard parses none of the items outside its
slice: it streams every id from the index (the digest is in its header), sorts the plan's
task numbers (`slicing.plan_order`) and reads its own items' lines by offset. Without an
index (a folder built before it, an items.jsonl path, `--limit` short of every item) every
item is loaded, as a single-process run loads them, and the slice is cut from them. Either
way the slice's tasks, their order and run.json (`items`, `items_sha256`, `shard`) are what
a plan of every item gives.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

from twinbench.item_index import read_index
from twinbench.plan import RunPlan, items_digest
from twinbench.runner import check_manifest, read_items
from twinbench.slicing import LoadedItems, PlanItems, ShardSlice, cut, plan_order


def open_items(benchmark: Path, limit: int | None = None) -> PlanItems:
    """The items of `benchmark` (a folder or an items.jsonl; the first `limit`) as a shard
    needs them: through the folder's index, unless there is none or `limit` leaves items out."""
    path = benchmark
    if benchmark.is_dir():
        manifest = check_manifest(benchmark)
        path = benchmark / "items.jsonl"
        indexed = read_index(benchmark, manifest)
        if indexed is not None and (limit is None or limit >= indexed.count):
            return indexed
    items = read_items(path, limit)
    return LoadedItems(items, items_digest(items), path)


def shard_slice(
    benchmark: Path,
    shard: tuple[int, int],
    trials: int = 1,
    permutations: int = 1,
    limit: int | None = None,
) -> ShardSlice:
    """Shard `shard` = (I, N) of the plan of `benchmark`'s items (its first `limit`)."""
    return cut(open_items(benchmark, limit), shard, trials, permutations)


def shard_slices(
    benchmark: Path,
    shards: int,
    trials: int = 1,
    permutations: int = 1,
    limit: int | None = None,
) -> Iterator[ShardSlice]:
    """Shards 0/N .. N-1/N of the plan, one at a time (the items read and the plan sorted
    once): what a driver hands its tasks, one slice each."""
    items = open_items(benchmark, limit)
    order = plan_order(items, trials, permutations)
    for index in range(shards):
        yield cut(items, (index, shards), trials, permutations, order)


def load_shard(
    benchmark: Path,
    shard: tuple[int, int],
    trials: int = 1,
    permutations: int = 1,
    limit: int | None = None,
    *,
    batch_size: int = 16,
) -> RunPlan:
    """The plan of shard `shard` = (I, N) of `benchmark`, holding its slice only."""
    part = shard_slice(benchmark, shard, trials, permutations, limit)
    return RunPlan.of_slice(part, batch_size=batch_size)
