"""Streaming a run to a system that takes requests one at a time as futures (the HTTP
adapters' `submit`): a bounded window in flight with no batch barrier, optional request and
token rates, completions written as they arrive, and a drain on Ctrl-C. `runner.run` uses it.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import Future, wait
from queue import Empty, SimpleQueue

from twinbench.records import Response
from twinbench.systems.base import Request, System


def streams(system: System) -> bool:
    """Whether `system` can take requests one at a time as futures (HTTP adapters)."""
    return callable(getattr(system, "submit", None)) and bool(getattr(system, "streams", True))


class Pace:
    """Waits so that requests (and estimated prompt tokens, 4 characters a token) stay
    under the plan's rates; no limits, no waiting."""

    def __init__(self, rps: float | None, tps: float | None) -> None:
        self.rps, self.tps = rps, tps
        self.next_at = time.monotonic()

    def wait(self, request: Request) -> None:
        if self.rps is None and self.tps is None:
            return
        now = time.monotonic()
        if self.next_at > now:
            time.sleep(self.next_at - now)
        step = 0.0
        if self.rps:
            step = max(step, 1.0 / self.rps)
        if self.tps:
            tokens = (len(request.state) + len(request.question.instructions)) / 4
            step = max(step, tokens / self.tps)
        self.next_at = max(now, self.next_at) + step


def stream(
    system: System,
    requests: Iterator[Request],
    window: int,
    pace: Pace,
    write: Callable[[Sequence[Response]], None],
    notice: Callable[[str], None] | None = None,
) -> None:
    """Keep a window of requests in flight; write each response as it completes.

    No batch barrier: a slow reply holds one slot, not a batch. On Ctrl-C nothing new is
    sent, the requests in flight are awaited (each is bounded by the system's own deadline)
    and written (`notice` is told how many first), then the interrupt goes on; a second
    Ctrl-C stops the wait (what was in flight is sent again on resume).
    """
    submit = system.submit  # type: ignore[attr-defined]
    # completed futures arrive on a queue (a done callback), not by `wait` over the whole
    # window: waiting on C futures per completion costs O(C) each and stalls a wide window
    finished: SimpleQueue[Future[Response]] = SimpleQueue()
    unwritten: set[Future[Response]] = set()  # sent, not yet written

    def top_up() -> None:
        while len(unwritten) < window:
            request = next(requests, None)
            if request is None:
                return
            pace.wait(request)
            for future in submit([request]):
                unwritten.add(future)
                future.add_done_callback(finished.put)

    try:
        top_up()
        while unwritten:
            done = [finished.get()]
            while True:  # every completion ready now: a burst is one write and one fsync
                try:
                    done.append(finished.get_nowait())
                except Empty:
                    break
            unwritten.difference_update(done)
            top_up()  # refill the window first: the write's fsync then overlaps the requests
            write([f.result() for f in done])
    except KeyboardInterrupt:
        if unwritten:
            if notice:
                notice(
                    f"interrupted: waiting for the {len(unwritten)} requests in flight to be "
                    "answered and written (Ctrl-C again to stop now)"
                )
            wait(unwritten)
            write([f.result() for f in unwritten if not f.cancelled() and f.exception() is None])
        raise
    finally:
        close = getattr(system, "close", None)
        if callable(close):
            close()
