"""Futures for the HTTP adapters: a Future per request from a Future per group of requests
(a batch endpoint answers a group in one call)."""

from __future__ import annotations

from collections.abc import Sequence
from concurrent.futures import Future
from typing import Any

from twinbench.records import Response
from twinbench.systems.base import Request


def first_of(future: Future[list[Response]]) -> Future[Response]:
    """A Future of a one-request group's only Response."""
    out: Future[Response] = Future()

    def done(f: Future[list[Response]]) -> None:
        try:
            out.set_result(f.result()[0])
        except BaseException as exc:  # cancelled, or a bug: hand it on
            out.set_exception(exc)

    future.add_done_callback(done)
    return out


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
