"""`twinbench run --executor ray[=ADDRESS]`: the plan's shards on Ray actors, durable and resumable.

**Layout.** Shard I of N is the plan slice `--shard I/N` runs by hand, kept in
OUT/shards/I-of-N as a run folder of its own (run.json, responses.jsonl). When every shard is
finished they are merged into OUT (`twinbench.merging`): the run one process writes.

**Work.** Each shard has one Ray actor that builds the system once (one local model per
actor; an endpoint is shared by all) and answers the shard's pending tasks in chunks of
`chunk` tasks: one actor call per chunk, carrying that chunk's items only. The driver writes
each chunk's responses to its shard's responses.jsonl (flushed and fsynced) the moment the
call returns, so the driver never holds more than the chunks in flight, and nothing a worker
finished is lost with the worker.

**Failures.** A killed worker is restarted by Ray and its chunk sent again (`max_restarts`,
`max_task_retries`). A chunk that still fails, a killed driver or a Ctrl-C leave every written
chunk on disk: the same command resumes, sending only the tasks no shard file holds (and, as
a local run does, the `error` rows again). A run whose shards are merged is finished; running
it again sends nothing.

**Limits.** `--concurrency`, `--max-rps` and `--max-tokens-per-s` are the whole run's: each
actor gets an exact share (`runner.split_limits`), recorded in every run.json.

**Cluster.** `ADDRESS` (or `RAY_ADDRESS`, which `ray job submit` sets) names a running
cluster; the driver joins it as it is (a joining driver may not pass resources) and ships the
installed twinbench package to its workers (`runtime_env` py_modules: the workers need its
dependencies installed, not twinbench itself). Token auth is Ray's own: on a cluster started
with `RAY_AUTH_MODE=token`, the driver needs that variable and the token
(`RAY_AUTH_TOKEN`, or `ray get-auth-token`'s file). An API key (`--api-key-env NAME`) is read
by the driver and handed to each actor as an argument of its constructor, so workers need not
have it; it is never written to any file or to Ray's logs. Without an address a local cluster
of one CPU per shard is started for the run and stopped after it.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from twinbench.jsonl import InputError, dumps_line, record_dict
from twinbench.merging import merge
from twinbench.plan import RunPlan, split_limits
from twinbench.records import Item, Response
from twinbench.runner import close_session, failure_verdict, open_session, send
from twinbench.runrecord import RunRecord, load_run, write_run
from twinbench.slicing import write_in_order
from twinbench.streaming import Pace
from twinbench.systems.base import SystemCard, SystemOptions

Task = tuple[Item, int, int]

#: how often Ray restarts a killed shard actor, and sends a chunk again after a crash
RESTARTS = 4


class RunFailed(Exception):
    """A distributed run stopped with work left; what finished is on disk (resumable)."""


class ShardWorker:
    """One shard's actor: the system, built once, and the shard's share of the limits."""

    def __init__(
        self, spec: str, options: dict[str, Any], secrets: dict[str, str], plan: RunPlan
    ) -> None:
        from twinbench.systems import make_system

        os.environ.update(secrets)  # this worker's process only; never written anywhere
        self.system = make_system(spec, SystemOptions.model_validate(options))
        self.plan = plan
        # one pace for the actor's life: its share of the rates holds across chunks
        self.pace = Pace(plan.max_rps, plan.max_tokens_per_s)

    def pid(self) -> int:
        return os.getpid()

    def answer(self, tasks: list[Task]) -> bytes:
        """The responses to `tasks` as JSON lines (item ids restored)."""
        from twinbench.blinding import OpaqueIds

        ids = OpaqueIds(item.id for item, _, _ in tasks)
        lines: list[bytes] = []
        name = self.system.card.name

        def write(responses: list[Response] | Any) -> None:
            lines.extend(dumps_line(record_dict(ids.restore(r, name))) for r in responses)

        send(self.system, tasks, ids, self.plan, write, pace=self.pace)
        return b"".join(lines)


def _connect(ray: Any, address: str | None, shards: int) -> bool:
    """Join the named cluster or start a local one; whether this call started Ray."""
    if ray.is_initialized():
        return False
    # a cluster named by --executor ray=ADDRESS or by RAY_ADDRESS is joined as it is: Ray
    # refuses resources (num_cpus) from a joining driver
    joining = address or os.environ.get("RAY_ADDRESS")
    if joining:
        import twinbench

        package = str(Path(twinbench.__file__).parent)
        runtime_env = {"py_modules": [package], "excludes": ["__pycache__", "*.pyc"]}
        try:
            ray.init(address=joining, runtime_env=runtime_env, log_to_driver=False)
        except (ConnectionError, ray.exceptions.AuthenticationError) as exc:
            hint = ""
            if os.environ.get("RAY_AUTH_MODE") != "token":
                hint = (
                    "; a cluster with token auth (the default of `ray start` since Ray 2.59) "
                    "needs RAY_AUTH_MODE=token and the token (RAY_AUTH_TOKEN, or "
                    "~/.ray/auth_token) here"
                )
            raise InputError(f"cannot join the Ray cluster at {joining}: {exc}{hint}") from None
    else:
        # "local": a new cluster for this run, never one found on this machine
        ray.init(address="local", num_cpus=shards, include_dashboard=False, log_to_driver=False)
    return True


def _secrets(options: SystemOptions) -> dict[str, str]:
    """The API key variable the options name, read here on the driver."""
    name = options.api_key_env
    if name and os.environ.get(name):
        return {name: os.environ[name]}
    return {}


def _chunks(tasks: Sequence[Task], size: int) -> list[list[Task]]:
    return [list(tasks[start : start + size]) for start in range(0, len(tasks), size)]


def _finished(out: Path) -> RunRecord | None:
    """The record of a run folder whose shards are already merged (None: not yet)."""
    if not (out / "responses.jsonl").exists():
        return None
    record = load_run(out)
    if record is None or record.status != "finished" or not record.merged_from:
        raise InputError(
            f"{out}/responses.jsonl exists and is not a merged Ray run; use a new --out"
        )
    return record


def run_on_ray(
    spec: str,
    card: SystemCard,
    options: SystemOptions,
    plan: RunPlan,
    out: Path,
    *,
    shards: int,
    benchmark: Path,
    address: str | None = None,
    seed: int = 0,
    chunk: int | None = None,
    retry_errors: bool = True,
    max_error_rate: float | None = None,
    progress: Callable[[int, int], None] | None = None,
) -> RunRecord:
    """Run `plan` on `shards` Ray actors into `out` (see the module docstring)."""
    try:
        import ray
    except ImportError:
        raise InputError("--executor ray needs Ray: pip install 'twinbench[ray]'") from None
    if shards < 1:
        raise InputError(f"--shards {shards}: needs at least 1")
    done = _finished(out)
    if done is not None:
        return done
    window = plan.window or options.concurrency
    parts = [
        split_limits(replace(plan, shard=(index, shards)), window, index, shards)
        for index in range(shards)
    ]
    folders = [out / "shards" / f"{index}-of-{shards}" for index in range(shards)]
    sessions = [
        open_session(folder, card, part, seed, benchmark, retry_errors)
        for folder, part in zip(folders, parts, strict=True)
    ]
    size = chunk or max(64, 8 * window, 4 * plan.batch_size)
    total = sum(len(pending) for _, pending in sessions)
    started_here = _connect(ray, address, shards)
    started = time.perf_counter()
    sent = [0] * shards
    failures: list[str] = []
    try:
        worker: Any = ray.remote(num_cpus=1, max_restarts=RESTARTS, max_task_retries=RESTARTS)(
            ShardWorker
        )
        secrets = _secrets(options)
        calls: dict[Any, int] = {}
        for index, (folder, (record, pending)) in enumerate(zip(folders, sessions, strict=True)):
            folder.mkdir(parents=True, exist_ok=True)
            write_run(folder, record)
            if not pending:
                continue
            # the actor's plan carries the limits and sizes only; each call brings its items
            bare = replace(parts[index], items=[])
            actor = worker.remote(spec, options.model_dump(mode="json"), secrets, bare)
            for tasks in _chunks(pending, size):
                calls[actor.answer.remote(tasks)] = index
        handles = {i: (f / "responses.jsonl").open("ab") for i, f in enumerate(folders)}
        try:
            waiting = list(calls)
            while waiting:
                ready, waiting = ray.wait(waiting, num_returns=1)
                index = calls[ready[0]]
                try:
                    data: bytes = ray.get(ready[0])
                except ray.exceptions.RayError as exc:
                    failures.append(f"shard {index}/{shards}: {type(exc).__name__}")
                    continue
                handle = handles[index]
                handle.write(data)
                handle.flush()
                os.fsync(handle.fileno())
                sent[index] += data.count(b"\n")
                if progress:
                    progress(sum(sent), total)
        finally:
            for handle in handles.values():
                handle.close()
    except KeyboardInterrupt:
        _interrupted(folders, sessions, sent)
        raise
    finally:
        if started_here:
            ray.shutdown()
    seconds = time.perf_counter() - started
    if failures:
        _interrupted(folders, sessions, sent)
        raise RunFailed(
            f"{len(failures)} chunk(s) failed after {RESTARTS} retries ({failures[0]}); every "
            f"finished chunk is in {out / 'shards'}: run the same command again to resume"
        )
    for folder, part, (record, _), count in zip(folders, parts, sessions, sent, strict=True):
        write_in_order(folder / "responses.jsonl", part.keys())  # what `merge` reads
        close_session(folder, record, count, seconds, None)
    merged = merge(folders, out, benchmark)
    rate, failed = failure_verdict(merged.counts or {}, max_error_rate)
    merged = merged.model_copy(
        update={
            "failure_rate": round(rate, 6),
            "failed": failed,
            "resumed_from": sum(record.resumed_from for record, _ in sessions),
            "resent_errors": sum(record.resent_errors for record, _ in sessions),
            "sent_this_session": sum(sent),
            "seconds_this_session": round(seconds, 3),
        }
    )
    write_run(out, merged)
    return merged


def _interrupted(
    folders: list[Path], sessions: list[tuple[RunRecord, Sequence[Task]]], sent: list[int]
) -> None:
    for folder, (record, _), count in zip(folders, sessions, sent, strict=True):
        update = {"status": "interrupted", "sent_this_session": count}
        write_run(folder, record.model_copy(update=update))
