"""Futures for the HTTP adapters: calls started on a background event loop as Futures, and a
Future per request from a Future per group of requests (a batch endpoint answers a group in
one call)."""

from __future__ import annotations

import asyncio
import contextlib
import functools
from collections.abc import Coroutine, Sequence
from concurrent.futures import Future, InvalidStateError
from typing import Any, TypeVar

from twinbench.records import Response
from twinbench.systems.base import Request

T = TypeVar("T")


def start_on(
    loop: asyncio.AbstractEventLoop, jobs: Sequence[Coroutine[Any, Any, T]]
) -> list[Future[T]]:
    """Run each coroutine as a task on `loop` (running in another thread); a Future of each.

    One hop to the loop for the lot, and one Future per job settled by its task's done
    callback (run_coroutine_threadsafe hops once per job and chains two futures)."""
    futures: list[Future[T]] = [Future() for _ in jobs]

    def begin() -> None:
        for job, future in zip(jobs, futures, strict=True):
            if future.cancelled():
                job.close()
            else:
                loop.create_task(job).add_done_callback(functools.partial(_settle, future))

    loop.call_soon_threadsafe(begin)
    return futures


def _settle(future: Future[T], task: asyncio.Task[T]) -> None:
    """Hand a finished task's outcome on (unless its Future was cancelled meanwhile)."""
    with contextlib.suppress(InvalidStateError):  # cancelled by its holder just now
        if future.cancelled():
            return
        if task.cancelled():
            future.cancel()
        elif (error := task.exception()) is not None:
            future.set_exception(error)
        else:
            future.set_result(task.result())


def per_request(
    groups: Sequence[list[Request]], futures: Sequence[Future[list[Response]]]
) -> dict[tuple[str, int, int], Future[Response]]:
    """One Future per request (keyed by item, trial, permutation) from one per group."""
    out: dict[tuple[str, int, int], Future[Response]] = {}
    for group, future in zip(groups, futures, strict=True):
        mine = {(r.item_id, r.trial, r.permutation): Future[Response]() for r in group}
        out.update(mine)

        def done(f: Future[list[Response]], mine: dict[Any, Future[Response]] = mine) -> None:
            try:
                answered = {(r.item_id, r.trial, r.permutation): r for r in f.result()}
            except BaseException as exc:  # cancelled, or a bug: hand it on
                for waiting in mine.values():
                    waiting.set_exception(exc)
                return
            for key, waiting in mine.items():
                waiting.set_result(answered[key])

        future.add_done_callback(done)
    return out
