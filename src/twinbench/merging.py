"""Shards of one plan, merged into one run.

`twinbench run --shard I/N` runs the tasks at plan positions p with p % N == I (plan order:
the blind order of `blinding.py`, fixed by the items), so N shards split any plan into
near-equal, disjoint, deterministic slices. `merge` checks that the shard folders come from
one plan — the same system card, seed, trials, permutations, items sha256, N, every index
0..N-1 once, every shard finished, and each shard's responses exactly its slice — and writes
one run folder: responses.jsonl in plan order (what a single-process batched run writes;
a streamed run writes in completion order, so compare runs by key) and a run.json that lists
the shards it came from.

It streams: a finished shard's file is in plan order (the runner rewrites it so), so row p of
the merged file is the next row of shard p % N, checked to be the plan's task p by its
`order_key`. It holds the plan's keys (16 bytes a task, from the benchmark's index where it
has one) and one row of each shard, never the rows of a shard; only a refusal reads the
offending shard again, to say what is wrong with it.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import orjson

from twinbench.blinding import order_key
from twinbench.grader import check_response
from twinbench.jsonl import InputError, atomic_write, write_json
from twinbench.outputs import output_set
from twinbench.records import plainly_valid_response
from twinbench.runrecord import RunRecord, load_run
from twinbench.shards import open_items
from twinbench.slicing import task_keys


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
    if (out / "responses.jsonl").exists():
        raise InputError(f"{out}/responses.jsonl exists; merge into a new folder")
    expected, digest = _expected(source, first)
    paths = [folder / "responses.jsonl" for _, folder in sorted(zip(shards, folders, strict=True))]
    # one output set (responses.jsonl and run.json): a refusal or a kill at any point leaves
    # no merged run, never rows without their run.json; a folder made here is removed again
    with output_set(out) as stage:
        with atomic_write(stage("responses.jsonl"), "wb") as handle:
            counts = _interleave(paths, expected, digest, first.system.name, handle.write)
        record = first.model_copy(
            update={
                "shard": None,
                "status": "finished",
                "resumed_from": 0,
                "sent_this_session": None,
                "seconds_this_session": round(
                    sum(r.seconds_this_session or 0 for r in records), 3
                ),
                "counts": dict(sorted(counts.items())),
                "responses": sum(counts.values()),
                "merged_from": [str(f.resolve()) for f in folders],
                "benchmark": str(source.resolve()),
                # the shards' shares were of one whole run's limits: the merge records the whole
                "limits": None
                if first.limits is None
                else {"whole_run": first.limits.get("whole_run"), "processes": count},
            }
        )
        write_json(stage("run.json"), record.model_dump(mode="json", by_alias=True))
    return record


def _expected(source: Path, first: RunRecord) -> tuple[bytearray, str]:
    """The plan's task keys in plan order (16 bytes each) and the items' digest."""
    items = open_items(source, first.items)
    if items.digest != first.items_sha256:
        raise InputError(f"{source}: not the benchmark the shards ran (items sha256 differs)")
    keys = task_keys(items, first.trials, first.permutations)
    np.frombuffer(keys, dtype="S16").sort()  # in place: the plan order, 16 bytes a task
    return keys, items.digest


#: one row of a shard: line number, line, (item id, trial, permutation), status
Row = tuple[int, bytes, tuple[str, int, int], str]


def _rows(path: Path, system: str) -> Iterator[Row]:
    """The rows of a shard's responses.jsonl, each checked by the response rule (its fast
    path, else the model) and for its system."""
    if not path.exists():
        return
    with path.open("rb") as handle:
        for lineno, line in enumerate(handle, start=1):
            if not line.strip():
                continue
            if not line.endswith(b"\n"):
                raise InputError(f"{path}:{lineno}: a torn last line; run the shard again")
            try:
                obj = orjson.loads(line)
            except orjson.JSONDecodeError:
                raise InputError(f"{path}:{lineno}: not a response line") from None
            if not isinstance(obj, dict):
                raise InputError(f"{path}:{lineno}: not a response line")
            if not plainly_valid_response(obj):
                obj = check_response(str(path), lineno, obj).model_dump()
            if obj["system"] != system:
                raise InputError(
                    f"{path}:{lineno}: a response of {obj['system']!r}, not {system!r}"
                )
            key = (obj["item_id"], obj.get("trial", 0), obj.get("permutation", 0))
            yield lineno, line, key, obj["status"]


def _interleave(
    paths: Sequence[Path],
    expected: bytearray,
    digest: str,
    system: str,
    write: Callable[[bytes], Any],
) -> Counter[str]:
    """Write the rows of shards 0..N-1 (`paths`) in plan order: position p is the next row of
    shard p % N, and must be the task whose key `expected` holds at p; returns the statuses."""
    count = len(paths)
    rows = [_rows(path, system) for path in paths]
    counts: Counter[str] = Counter()
    for position in range(len(expected) // 16):
        shard = position % count
        row = next(rows[shard], None)
        if (
            row is None
            or order_key(digest, *row[2]) != expected[16 * position : 16 * (position + 1)]
        ):
            raise InputError(_problem(paths[shard], (shard, count), expected, digest, system))
        write(row[1])
        counts[row[3]] += 1
    for shard, rest in enumerate(rows):
        if next(rest, None) is not None:
            raise InputError(_problem(paths[shard], (shard, count), expected, digest, system))
    return counts


def _problem(
    path: Path, shard: tuple[int, int], expected: bytearray, digest: str, system: str
) -> str:
    """Why `path` is not shard I/N's slice in plan order (read again: the refusal's path)."""
    index, count = shard
    wanted = {
        bytes(expected[16 * p : 16 * p + 16]) for p in range(index, len(expected) // 16, count)
    }
    keys = [order_key(digest, *key) for _, _, key, _ in _rows(path, system)]
    got = set(keys)
    missing, extra, repeated = len(wanted - got), len(got - wanted), len(keys) - len(got)
    if missing or extra or repeated:
        twice = f", {repeated} repeated" if repeated else ""
        what = f"{missing} missing, {extra} not its own{twice}"
        return f"{path}: not shard {index}/{count}'s slice ({what})"
    return (
        f"{path}: shard {index}/{count}'s rows, but not in plan order (written before shards "
        "were, or reordered); run the shard's command again to rewrite it in order"
    )
