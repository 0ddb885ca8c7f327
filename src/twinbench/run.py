"""The runner: send a benchmark's items to a system, append responses, resume where it stopped.

`responses.jsonl` is append-only: each batch is written, flushed and fsynced before the next
is sent, so a killed run loses at most the batch in flight. On restart the file is read back,
a torn last line (from a kill mid-write) is cut off, and every (item, trial, permutation) key
already answered is skipped. `run.json` records the system card, versions, seeds, timings and
counts, and is rewritten atomically at the start and the end.
"""

from __future__ import annotations

import os
import platform
import time
import zlib
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import Any

import numpy as np
import orjson

from twinbench import __version__
from twinbench.jsonl import InputError, dumps_line, load_models, record_dict, write_json
from twinbench.records import ChoiceQuestion, Item
from twinbench.systems.base import Request, System

RUN_SCHEMA = "twinbench.run/1"
Key = tuple[str, int, int]
Progress = Callable[[int, int], None]


@dataclass(frozen=True)
class RunPlan:
    """What to send: the items, trials and option permutations, in a fixed order."""

    items: list[Item]
    trials: int = 1
    permutations: int = 1
    batch_size: int = 16

    def tasks(self) -> Iterator[tuple[Item, int, int]]:
        """Every (item, trial, permutation) in sending order."""
        for trial in range(self.trials):
            for permutation in range(self.permutations):
                for item in self.items:
                    yield item, trial, permutation


def load_benchmark(folder: Path, limit: int | None = None) -> list[Item]:
    """The public items of a benchmark folder (or an items.jsonl path), first `limit` of them."""
    path = folder / "items.jsonl" if folder.is_dir() else folder
    items = [item for _, item in load_models(path, Item)]
    return items[:limit] if limit is not None else items


def request_for(item: Item, trial: int, permutation: int) -> Request:
    """The request a system sees; permutation k > 0 reorders choice options with (seed, k)."""
    question = item.question
    if permutation and isinstance(question, ChoiceQuestion):
        rng = np.random.default_rng([item.seed, permutation])
        options = [question.options[i] for i in rng.permutation(len(question.options))]
        question = ChoiceQuestion(instructions=question.instructions, options=options)
    return Request(
        item_id=item.id,
        state=item.state,
        question=question,
        trial=trial,
        permutation=permutation,
        family=item.family,
    )


def read_done(path: Path) -> set[Key]:
    """Keys already answered in `path`; a torn final line is truncated away first."""
    if not path.exists():
        return set()
    data = path.read_bytes()
    complete = data.rfind(b"\n") + 1
    if complete < len(data):
        with path.open("r+b") as handle:
            handle.truncate(complete)
    done: set[Key] = set()
    for lineno, line in enumerate(data[:complete].splitlines(), start=1):
        if not line.strip():
            continue
        try:
            row = orjson.loads(line)
            done.add((row["item_id"], int(row.get("trial", 0)), int(row.get("permutation", 0))))
        except (orjson.JSONDecodeError, KeyError, TypeError, ValueError):
            raise InputError(f"{path}:{lineno}: not a response line; cannot resume") from None
    return done


def _versions() -> dict[str, str]:
    found = {"twinbench": __version__, "python": platform.python_version()}
    for package in ("numpy", "torch", "transformers", "sentence-transformers", "httpx"):
        try:
            found[package] = version(package)
        except PackageNotFoundError:
            continue
    return found


def _batches(pending: Sequence[tuple[Item, int, int]], size: int) -> Iterator[list[Request]]:
    for start in range(0, len(pending), size):
        yield [request_for(*key) for key in pending[start : start + size]]


def run(
    system: System,
    plan: RunPlan,
    out: Path,
    *,
    seed: int = 0,
    progress: Progress | None = None,
    benchmark: Path | None = None,
) -> dict[str, Any]:
    """Run `plan` against `system` into `out`; returns the final run.json content."""
    out.mkdir(parents=True, exist_ok=True)
    responses_path = out / "responses.jsonl"
    done = read_done(responses_path)
    pending = [k for k in plan.tasks() if (k[0].id, k[1], k[2]) not in done]
    meta: dict[str, Any] = {
        "schema": RUN_SCHEMA,
        "system": system.card.model_dump(mode="json"),
        "versions": _versions(),
        "seed": seed,
        "trials": plan.trials,
        "permutations": plan.permutations,
        "items": len(plan.items),
        "items_sha": f"{zlib.crc32(''.join(i.id for i in plan.items).encode()):08x}",
        "status": "running",
        "resumed_from": len(done),
        "benchmark": None if benchmark is None else str(benchmark.resolve()),
    }
    write_json(out / "run.json", meta)
    started = time.perf_counter()
    sent = 0
    total = len(pending)
    try:
        with responses_path.open("ab") as handle:
            for batch in _batches(pending, plan.batch_size):
                responses = system.respond(batch)
                handle.write(b"".join(dumps_line(record_dict(r)) for r in responses))
                handle.flush()
                os.fsync(handle.fileno())
                sent += len(batch)
                if progress:
                    progress(sent, total)
    except KeyboardInterrupt:
        meta |= {
            "status": "interrupted",
            "sent_this_session": sent,
            "seconds_this_session": round(time.perf_counter() - started, 3),
        }
        write_json(out / "run.json", meta)
        raise
    counts: Counter[str] = Counter()
    with responses_path.open("rb") as handle:
        for line in handle:
            if line.strip():
                counts[orjson.loads(line)["status"]] += 1
    meta |= {
        "status": "finished",
        "sent_this_session": sent,
        "seconds_this_session": round(time.perf_counter() - started, 3),
        "counts": dict(sorted(counts.items())),
        "responses": sum(counts.values()),
    }
    write_json(out / "run.json", meta)
    return meta
