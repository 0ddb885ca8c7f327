"""What a run sends: the plan (`RunPlan`) of items, trials and option orders, in the blind order.

A plan holds its items, or, for a shard loaded by `shards.load_shard`, only its slice
(`slicing.ShardSlice`). Either way it knows the whole plan's item count and digest
(`items_digest`), which run.json records.
"""

from __future__ import annotations

import hashlib
from collections.abc import Container, Iterator, Sequence
from dataclasses import dataclass, field, replace
from functools import cached_property
from typing import Any

from twinbench.blinding import order_key
from twinbench.jsonl import dumps_line, record_dict
from twinbench.records import Item
from twinbench.slicing import Key, ShardSlice, Task


@dataclass(frozen=True)
class RunPlan:
    """What to send: the items, trials and option permutations, in a fixed blind order.

    A shard's plan from `shards.load_shard` holds its slice (`part`) and no `items`: the whole
    plan's item count and digest, and the lines of its own items, parsed as they are sent.
    """

    items: list[Item] = field(default_factory=list)
    trials: int = 1
    permutations: int = 1
    batch_size: int = 16
    #: streaming systems: at most this many requests in flight (default: the system's
    #: --concurrency); requests per second and estimated prompt tokens per second, at most
    window: int | None = None
    max_rps: float | None = None
    max_tokens_per_s: float | None = None
    #: (I, N): only the tasks at plan positions p with p % N == I
    shard: tuple[int, int] | None = None
    #: the shard's slice, read without the items outside it (`slicing.ShardSlice`)
    part: ShardSlice | None = None
    #: what run.json records of the limits when this process has a share of a whole run's
    #: (`split_limits`); None: the limits above are the whole run's
    limits: dict[str, Any] | None = None

    def __post_init__(self) -> None:
        part = self.part
        if part is not None and (part.shard, part.trials, part.permutations) != (
            self.shard,
            self.trials,
            self.permutations,
        ):
            raise ValueError("RunPlan: shard, trials and permutations must be its part's")

    @classmethod
    def of_slice(
        cls,
        part: ShardSlice,
        *,
        batch_size: int = 16,
        window: int | None = None,
        max_rps: float | None = None,
        max_tokens_per_s: float | None = None,
    ) -> RunPlan:
        """The plan that runs the shard slice `part`."""
        return cls(
            trials=part.trials,
            permutations=part.permutations,
            batch_size=batch_size,
            window=window,
            max_rps=max_rps,
            max_tokens_per_s=max_tokens_per_s,
            shard=part.shard,
            part=part,
        )

    @property
    def count(self) -> int:
        """Items in the whole plan, a shard's too (run.json's `items`)."""
        return self.part.count if self.part is not None else len(self.items)

    @cached_property
    def digest(self) -> str:
        """`items_digest` of the whole plan's items, a shard's too (run.json's `items_sha256`)."""
        return self.part.digest if self.part is not None else items_digest(self.items)

    @cached_property
    def _order(self) -> list[Task]:
        if self.part is not None:
            raise ValueError("a plan from load_shard knows its own tasks only")
        digest = self.digest
        tasks = [
            (item, trial, permutation)
            for trial in range(self.trials)
            for permutation in range(self.permutations)
            for item in self.items
        ]
        return sorted(tasks, key=lambda task: order_key(digest, task[0].id, task[1], task[2]))

    def all_tasks(self) -> Iterator[Task]:
        """Every (item, trial, permutation) of the whole plan, in plan order: sorted by
        `blinding.order_key`, so a task's position says nothing of its label."""
        yield from self._order

    def tasks(self) -> Iterator[Task]:
        """This run's tasks in sending order (its shard's slice of the plan, if sharded)."""
        if self.part is not None:
            yield from self.part.all()
            return
        if self.shard is None:
            yield from self.all_tasks()
            return
        index, count = self.shard
        for position, task in enumerate(self.all_tasks()):
            if position % count == index:
                yield task

    def keys(self) -> Iterator[Key]:
        """The (item id, trial, permutation) of each of this run's tasks, in sending order."""
        if self.part is not None:
            yield from self.part.keys()
            return
        for item, trial, permutation in self.tasks():
            yield item.id, trial, permutation

    def task_count(self) -> int:
        """How many tasks this run sends."""
        if self.part is not None:
            return len(self.part.tasks)
        total = self.count * self.trials * self.permutations
        return total if self.shard is None else len(range(self.shard[0], total, self.shard[1]))

    def pending(self, done: Container[Key]) -> Sequence[Task]:
        """This run's tasks whose keys are not in `done`, in sending order (a shard's from
        `load_shard` parses each item when its task is read)."""
        if self.part is not None:
            return self.part.pending(done)
        return [k for k in self.tasks() if (k[0].id, k[1], k[2]) not in done]


def split_limits(plan: RunPlan, window: int, index: int, parts: int) -> RunPlan:
    """`plan` for process `index` of `parts` that run one plan under its whole-run limits:
    an exact share of the window (`window` in all; at least 1 each) and of each rate.

    Each process gets max_rps / parts and max_tokens_per_s / parts, so the processes
    together never pass the limits however the work is spread; run.json records the whole
    run's limits and this process's share."""
    base, extra = divmod(window, parts)
    mine = max(1, base + (1 if index < extra else 0))
    rps = None if plan.max_rps is None else plan.max_rps / parts
    tps = None if plan.max_tokens_per_s is None else plan.max_tokens_per_s / parts
    whole = {
        "concurrency": window,
        "max_rps": plan.max_rps,
        "max_tokens_per_s": plan.max_tokens_per_s,
    }
    share = {"concurrency": mine, "max_rps": rps, "max_tokens_per_s": tps}
    limits = {"whole_run": whole, "processes": parts, "this_process": share}
    return replace(plan, window=mine, max_rps=rps, max_tokens_per_s=tps, limits=limits)


def items_digest(items: Sequence[Item]) -> str:
    """sha256 over the items as JSON lines: what a run was asked, to check on resume."""
    digest = hashlib.sha256()
    for item in items:
        digest.update(dumps_line(record_dict(item)))
    return digest.hexdigest()
