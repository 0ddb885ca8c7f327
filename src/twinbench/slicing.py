"""A shard's slice of a plan, found without parsing the items outside it.

A plan sends every (item, trial, permutation) sorted by `blinding.order_key`, which hashes the
digest of all the items with the task; shard I/N is the tasks at positions p with p % N == I.
So a shard needs every item id and the digest to find its tasks, but only its own items:

- `PlanItems`: a benchmark's items as a shard needs them: how many, their digest, their ids
  as a stream, and the ids and JSON lines of any of them. `item_index.IndexedItems` reads
  them from the benchmark's index without parsing an item; `LoadedItems` holds the loaded
  items, where there is no index (`shards.open_items` picks).
- `plan_order`: the task numbers sorted by their keys with numpy, 16 bytes a task; the order
  `RunPlan.all_tasks` sorts its tasks into.
- `ShardSlice`: one shard: its items' lines and its tasks in plan order; picklable and small
  (a Ray task's argument). `SliceTasks` parses an item only when its task is read, so a
  shard never holds its items parsed all at once.

`write_in_order` rewrites a finished shard's responses in plan order, which lets `merge`
interleave N shard files row by row.
"""

from __future__ import annotations

from collections.abc import Container, Iterable, Iterator, Sequence
from dataclasses import dataclass
from itertools import islice
from pathlib import Path
from typing import Any, Protocol, overload

import numpy as np
import numpy.typing as npt
import orjson
from pydantic import ValidationError

from twinbench.blinding import order_keys
from twinbench.fitted import fitted_fields
from twinbench.jsonl import (
    InputError,
    atomic_write,
    describe_validation_error,
    dumps_line,
    record_dict,
)
from twinbench.records import Item

Key = tuple[str, int, int]
Task = tuple[Item, int, int]
Numbers = npt.NDArray[np.int64]


class PlanItems(Protocol):
    """Every item of a plan as a shard needs them (see the module docstring)."""

    #: how many items, their `runner.items_digest`, where they come from (FILE:LINE errors)
    count: int
    digest: str
    source: Path

    def ids(self) -> Iterator[str]:
        """Every item id, in file order."""
        ...

    def pick(self, numbers: Numbers) -> tuple[list[str], list[bytes]]:
        """The ids and JSON lines (as build writes them) of items `numbers` (0-based, ascending)."""
        ...

    def options(self) -> dict[str, Any]:
        """`fitted.fitted_fields` of every item."""
        ...


class LoadedItems:
    """`PlanItems` of items loaded whole (a benchmark without an index, a file, `--limit`)."""

    def __init__(self, items: Sequence[Item], digest: str, source: Path) -> None:
        self.items, self.count, self.digest, self.source = items, len(items), digest, source
        self.fitted: dict[str, Any] | None = None

    def ids(self) -> Iterator[str]:
        """Every item id, in file order."""
        return (item.id for item in self.items)

    def pick(self, numbers: Numbers) -> tuple[list[str], list[bytes]]:
        """The ids and JSON lines of items `numbers` (0-based, ascending)."""
        chosen = [self.items[n] for n in numbers.tolist()]
        return [item.id for item in chosen], [dumps_line(record_dict(item)) for item in chosen]

    def options(self) -> dict[str, Any]:
        """`fitted.fitted_fields` of every item (computed once: each shard's slice asks)."""
        if self.fitted is None:
            self.fitted = fitted_fields(self.items)
        return self.fitted


def task_keys(items: PlanItems, trials: int, permutations: int) -> bytearray:
    """The `order_key` of every task, 16 bytes each, the ids read once. Task
    `(trial * permutations + permutation) * count + i` is item i's (trial, permutation), the
    order `RunPlan` lists its tasks in before it sorts them."""
    keys = bytearray(16 * items.count * trials * permutations)
    ids, first = items.ids(), 0
    while chunk := list(islice(ids, 1 << 16)):
        for trial in range(trials):
            for permutation in range(permutations):
                at = 16 * ((trial * permutations + permutation) * items.count + first)
                keys[at : at + 16 * len(chunk)] = order_keys(
                    items.digest, chunk, trial, permutation
                )
        first += len(chunk)
    return keys


def plan_order(items: PlanItems, trials: int, permutations: int) -> Numbers:
    """The task numbers (see `task_keys`) in plan order."""
    keys = np.frombuffer(task_keys(items, trials, permutations), dtype="S16")
    # fixed-width bytes sort as Python sorts bytes; stable, as sorted() is for equal keys
    return np.argsort(keys, kind="stable").astype(np.int64)


@dataclass(frozen=True, eq=False)
class ShardSlice:
    """Shard I/N of a plan and nothing else: its items' lines and its tasks in plan order."""

    shard: tuple[int, int]
    trials: int
    permutations: int
    #: items in the whole plan (run.json's `items`) and their digest (`items_sha256`)
    count: int
    digest: str
    #: the slice's items, each once, in file order: ids, JSON lines, line numbers in `source`
    ids: tuple[str, ...]
    lines: tuple[bytes, ...]
    numbers: Numbers
    #: one row (slot into ids and lines, trial, permutation) per task, in plan order
    tasks: Numbers
    #: `fitted.fitted_fields` of the whole plan's items
    options: dict[str, Any]
    source: str

    def item(self, slot: int) -> Item:
        """The slice's item `slot`, parsed from its line."""
        try:
            return Item.model_validate(orjson.loads(self.lines[slot]))
        except orjson.JSONDecodeError as exc:
            problem = f"invalid JSON ({exc})"
        except ValidationError as exc:
            problem = describe_validation_error(exc)
        raise InputError(f"{self.source}:{self.numbers[slot]}: {problem}")

    def keys(self) -> Iterator[Key]:
        """The (item id, trial, permutation) of each task, in plan order."""
        for slot, trial, permutation in self.tasks.tolist():
            yield self.ids[slot], trial, permutation

    def all(self) -> SliceTasks:
        """Every task of the slice, in plan order."""
        return SliceTasks(self, range(len(self.tasks)))

    def pending(self, done: Container[Key]) -> SliceTasks:
        """The tasks whose keys are not in `done`, in plan order."""
        return SliceTasks(self, [row for row, key in enumerate(self.keys()) if key not in done])


class SliceTasks(Sequence[Task]):
    """Tasks of a `ShardSlice` (rows of its `tasks`); an item is parsed when its task is read."""

    def __init__(self, part: ShardSlice, rows: Sequence[int]) -> None:
        self.part, self.rows = part, rows

    def __len__(self) -> int:
        return len(self.rows)

    @overload
    def __getitem__(self, index: int) -> Task: ...
    @overload
    def __getitem__(self, index: slice) -> SliceTasks: ...
    def __getitem__(self, index: int | slice) -> Task | SliceTasks:
        if isinstance(index, slice):
            return SliceTasks(self.part, self.rows[index])
        slot, trial, permutation = self.part.tasks[self.rows[index]].tolist()
        return self.part.item(slot), trial, permutation

    def __iter__(self) -> Iterator[Task]:
        for row in self.rows:
            slot, trial, permutation = self.part.tasks[row].tolist()
            yield self.part.item(slot), trial, permutation

    def item_ids(self) -> Iterator[str]:
        """The item id of each task, without parsing the items."""
        for row in self.rows:
            yield self.part.ids[int(self.part.tasks[row, 0])]


def task_ids(tasks: Sequence[Task]) -> Iterable[str]:
    """The item id of each of `tasks` (a slice's without parsing its items)."""
    if isinstance(tasks, SliceTasks):
        return tasks.item_ids()
    return (item.id for item, _, _ in tasks)


def cut(
    items: PlanItems,
    shard: tuple[int, int],
    trials: int = 1,
    permutations: int = 1,
    order: Numbers | None = None,
) -> ShardSlice:
    """Shard `shard` = (I, N) of the plan of `items` (`order`: their `plan_order`, if known)."""
    index, count = shard
    if count < 1 or not 0 <= index < count:
        raise ValueError(f"shard {index}/{count}: needs 0 <= I < N")
    if order is None:
        order = plan_order(items, trials, permutations)
    mine = order[index::count]
    size = max(items.count, 1)
    numbers, slots = np.unique(mine % size, return_inverse=True)
    variant = mine // size
    tasks = np.stack([slots.reshape(-1), variant // permutations, variant % permutations], axis=1)
    ids, lines = items.pick(numbers)
    return ShardSlice(
        shard=shard,
        trials=trials,
        permutations=permutations,
        count=items.count,
        digest=items.digest,
        ids=tuple(ids),
        lines=tuple(lines),
        numbers=numbers + 1,
        tasks=tasks.astype(np.int64),
        options=items.options(),
        source=str(items.source),
    )


def write_in_order(path: Path, keys: Iterable[Key]) -> bool:
    """Rewrite the responses file `path` with its rows in the order of `keys` (a temporary
    file, then a rename); False, and the file as it was, unless its rows are those keys."""
    position = {key: p for p, key in enumerate(keys)}
    rows: list[bytes | None] = [None] * len(position)
    ordered, previous = True, -1
    if not path.exists():
        return not position
    with path.open("rb") as handle:
        for line in handle:
            if not line.strip():
                continue
            obj = orjson.loads(line)
            p = position.get((obj["item_id"], obj["trial"], obj["permutation"]), -1)
            if p < 0 or rows[p] is not None:
                return False
            rows[p] = line if line.endswith(b"\n") else line + b"\n"
            ordered, previous = ordered and p == previous + 1, p
    if any(row is None for row in rows):
        return False
    if not ordered:
        with atomic_write(path, "wb") as handle:
            handle.writelines(row for row in rows if row is not None)
    return True
