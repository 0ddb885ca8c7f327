"""Shards of one plan, merged into one run.

`twinbench run --shard I/N` runs the tasks at plan positions p with p % N == I (plan order:
the blind order of `blinding.py`, fixed by the items), so N shards split any plan into
near-equal, disjoint, deterministic slices. `merge` checks that the shard folders come from
one plan — the same system card, seed, trials, permutations, items sha256, N, every index
0..N-1 once, every shard finished, and each shard's responses exactly its slice — and writes
one run folder: responses.jsonl in plan order (what a single-process batched run writes;
a streamed run writes in completion order, so compare runs by key) and a run.json that lists
the shards it came from.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from pathlib import Path

import orjson

from twinbench.jsonl import InputError, atomic_write, write_json
from twinbench.runner import RunPlan, load_benchmark, read_done
from twinbench.runrecord import RunRecord, load_run


def parse_shard(text: str) -> tuple[int, int]:
    """`I/N` as (I, N): 0 <= I < N."""
    try:
        index, count = (int(part) for part in text.split("/"))
    except ValueError:
        raise InputError(f"--shard {text!r}: expected I/N, e.g. 0/4") from None
    if count < 1 or not 0 <= index < count:
        raise InputError(f"--shard {text}: needs 0 <= I < N")
    return index, count


def _record(folder: Path) -> RunRecord:
    record = load_run(folder)
    if record is None:
        raise InputError(f"{folder}: no run.json (not a run folder)")
    if record.shard is None:
        raise InputError(f"{folder}/run.json: not a shard (run with --shard I/N)")
    if record.status != "finished":
        raise InputError(
            f"{folder}/run.json: shard {record.shard} is {record.status}; finish it first"
        )
    return record


def merge(folders: Sequence[Path], out: Path, benchmark: Path | None = None) -> RunRecord:
    """Merge the shard run folders into `out` (see the module docstring)."""
    if not folders:
        raise InputError("merge: no shard folders given")
    records = [_record(f) for f in folders]
    first = records[0]
    for folder, record in zip(folders, records, strict=True):
        for what, mine, theirs in (
            ("system card", record.system, first.system),
            ("seed", record.seed, first.seed),
            ("trials", record.trials, first.trials),
            ("permutations", record.permutations, first.permutations),
            ("items sha256", record.items_sha256, first.items_sha256),
        ):
            if mine != theirs:
                raise InputError(
                    f"{folder}/run.json: another plan ({what} differs from {folders[0]})"
                )
    shards = [parse_shard(r.shard or "") for r in records]
    count = shards[0][1]
    seen = Counter(index for index, _ in shards)
    if (
        any(n != count for _, n in shards)
        or sorted(seen) != list(range(count))
        or max(seen.values()) > 1
    ):
        listed = ", ".join(r.shard or "?" for r in records)
        raise InputError(f"merge: shards {listed} are not each of 0..{count - 1} of {count} once")
    source = benchmark or (Path(first.benchmark) if first.benchmark else None)
    if source is None:
        raise InputError("merge: the shards record no benchmark; pass --benchmark")
    items = load_benchmark(source, first.items)
    plan = RunPlan(items, trials=first.trials, permutations=first.permutations)
    from twinbench.runner import items_digest

    if items_digest(items) != first.items_sha256:
        raise InputError(f"{source}: not the benchmark the shards ran (items sha256 differs)")
    by_folder: dict[int, dict[tuple[str, int, int], bytes]] = {}
    for folder, (index, _) in zip(folders, shards, strict=True):
        path = folder / "responses.jsonl"
        read_done(path, first.system.name)  # every line checked, a torn tail cut
        rows: dict[tuple[str, int, int], bytes] = {}
        for line in path.read_bytes().splitlines():
            if line.strip():
                obj = orjson.loads(line)
                rows[(obj["item_id"], obj["trial"], obj["permutation"])] = line
        expected = {
            (item.id, trial, perm)
            for item, trial, perm in RunPlan(
                items, first.trials, first.permutations, shard=(index, count)
            ).tasks()
        }
        if set(rows) != expected:
            extra, missing = len(set(rows) - expected), len(expected - set(rows))
            raise InputError(
                f"{path}: not shard {index}/{count}'s slice "
                f"({missing} missing, {extra} not its own)"
            )
        by_folder[index] = rows
    if (out / "responses.jsonl").exists():
        raise InputError(f"{out}/responses.jsonl exists; merge into a new folder")
    merged = {key: line for rows in by_folder.values() for key, line in rows.items()}
    ordered = [merged[(item.id, t, p)] for item, t, p in plan.all_tasks()]
    out.mkdir(parents=True, exist_ok=True)
    with atomic_write(out / "responses.jsonl", "wb") as handle:
        handle.write(b"".join(line + b"\n" for line in ordered))
    counts: Counter[str] = Counter(orjson.loads(line)["status"] for line in ordered)
    record = first.model_copy(
        update={
            "shard": None,
            "status": "finished",
            "resumed_from": 0,
            "sent_this_session": None,
            "seconds_this_session": round(sum(r.seconds_this_session or 0 for r in records), 3),
            "counts": dict(sorted(counts.items())),
            "responses": len(ordered),
            "merged_from": [str(f.resolve()) for f in folders],
            "benchmark": str(source.resolve()),
            # the shards' shares were of one whole run's limits: the merge records the whole
            "limits": None
            if first.limits is None
            else {"whole_run": first.limits.get("whole_run"), "processes": count},
        }
    )
    write_json(out / "run.json", record.model_dump(mode="json", by_alias=True))
    return record
