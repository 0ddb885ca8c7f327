"""`twinbench run --executor ray[=ADDRESS]`: the plan's shards as Ray tasks, merged here.

The driver reads the benchmark and puts its items in Ray's object store once. Each task builds
the system from its spec and options on its worker (one local model per worker; an endpoint
is shared by all of them) and runs one shard (`--shard I/N`, the same deterministic slices
as by hand) into a temporary folder on that worker. It returns the shard's run.json and
responses.jsonl as bytes, so no shared file system is needed. The driver writes each shard
under OUT/shards/I-of-N and merges them into OUT (`twinbench.merging`): the run a single
process writes, in plan order. A shard that fails fails the run; the shards that finished
stay on disk (a rerun repeats every shard; a shard folder is a complete run of its own and
can be merged by hand).

Ray is optional (`pip install 'twinbench[ray]'`); `ADDRESS` is a running cluster
(`ray start --head`, `ray://host:10001`), and without it a local cluster is started for the
run with one CPU per shard.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path
from typing import Any

from twinbench.jsonl import InputError, atomic_write
from twinbench.merging import merge
from twinbench.runner import RunPlan, run
from twinbench.runrecord import RunRecord
from twinbench.systems.base import SystemOptions


def _shard(
    spec: str,
    options: dict[str, Any],
    items: list[Any],
    trials: int,
    permutations: int,
    index: int,
    count: int,
    seed: int,
) -> tuple[bytes, bytes]:
    """One shard on a worker: (run.json, responses.jsonl) as bytes."""
    from twinbench.systems import make_system

    system = make_system(spec, SystemOptions.model_validate(options))
    plan = RunPlan(items, trials=trials, permutations=permutations, shard=(index, count))
    with tempfile.TemporaryDirectory(prefix="twinbench-shard-") as folder:
        out = Path(folder) / "run"
        run(system, plan, out, seed=seed)
        return (out / "run.json").read_bytes(), (out / "responses.jsonl").read_bytes()


def run_on_ray(
    spec: str,
    options: SystemOptions,
    plan: RunPlan,
    out: Path,
    *,
    shards: int,
    benchmark: Path,
    address: str | None = None,
    seed: int = 0,
) -> RunRecord:
    """Run `plan` as `shards` Ray tasks and merge them into `out`."""
    try:
        import ray
    except ImportError:
        raise InputError("--executor ray needs Ray: pip install 'twinbench[ray]'") from None
    if shards < 1:
        raise InputError(f"--shards {shards}: needs at least 1")
    if (out / "responses.jsonl").exists():
        raise InputError(f"{out}/responses.jsonl exists; a Ray run writes a new folder")
    started_here = not ray.is_initialized()
    if started_here:
        # a cluster named by --executor ray=ADDRESS or by RAY_ADDRESS (`ray job submit` sets
        # it) is joined as it is: Ray refuses resources (num_cpus) from a joining driver
        joining = address or os.environ.get("RAY_ADDRESS")
        if joining:
            ray.init(address=joining, log_to_driver=False)
        else:
            # "local": a new cluster for this run, never one found on this machine
            ray.init(
                address="local", num_cpus=shards, include_dashboard=False, log_to_driver=False
            )
    try:
        items = ray.put(plan.items)
        task = ray.remote(num_cpus=1)(_shard)
        pending = [
            task.remote(
                spec,
                options.model_dump(mode="json"),
                items,
                plan.trials,
                plan.permutations,
                index,
                shards,
                seed,
            )
            for index in range(shards)
        ]
        results = ray.get(pending)
    finally:
        if started_here:
            ray.shutdown()
    folders = []
    for index, (record, responses) in enumerate(results):
        folder = out / "shards" / f"{index}-of-{shards}"
        for name, data in (("responses.jsonl", responses), ("run.json", record)):
            with atomic_write(folder / name, "wb") as handle:
                handle.write(data)
        folders.append(folder)
    return merge(folders, out, benchmark)
