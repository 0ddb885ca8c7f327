"""The runner: send a benchmark's items to a system, append responses, resume where it stopped.

`responses.jsonl` is append-only. A system that can take requests one at a time (the HTTP
adapters: `submit`) is **streamed** (`streaming.py`): a window of `--concurrency` requests
stays in flight, with no batch barrier, over one pooled connection client, and each response
is written, flushed and fsynced as it completes (file order is completion order; resume is by
key). Other systems (local models) get batches of `batch_size`, each written and fsynced
before the next is sent; a system with a `sort_key(request)` (the embedded model: token
count) gets them in that order. A killed run loses only what was in flight. On restart the
file is read back, a torn last line (from a kill mid-write) is cut off, and every (item,
trial, permutation) key already answered is skipped. `run.json` records the system card,
versions, seeds, timings and counts, and is rewritten atomically at the start and the end.
A shard (`--shard I/N`) is the exception to the file order: when it finishes, its file is
rewritten in plan order (`slicing.write_in_order`: a temporary file, then a rename), which is
how `merge` reads shards; a run of the whole plan keeps the order it wrote in.

Nothing a system receives names the label (`blinding.py`): a request's `item_id` is an opaque
per-run token that the runner maps back to the item id before writing, and the plan's order is
a pseudo-random one, fixed by the items.
"""

from __future__ import annotations

import os
import platform
import time
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import Any

import numpy as np
import orjson

from twinbench import __version__
from twinbench.blinding import OpaqueIds
from twinbench.grader import check_response
from twinbench.jsonl import InputError, dumps_line, load_models, record_dict, sha256_file
from twinbench.outputs import recover
from twinbench.plan import RunPlan as RunPlan  # re-exported: the runner's callers import it
from twinbench.plan import items_digest as items_digest
from twinbench.plan import split_limits as split_limits
from twinbench.records import ChoiceQuestion, Item, Response
from twinbench.runrecord import RunRecord, load_run, write_run
from twinbench.slicing import Key, task_ids, write_in_order
from twinbench.streaming import Pace, stream, streams
from twinbench.systems.base import Request, System, SystemCard

Progress = Callable[[int, int], None]


def load_benchmark(folder: Path, limit: int | None = None) -> list[Item]:
    """The public items of a benchmark folder (or an items.jsonl path), first `limit` of them.

    A folder is read through its manifest: every file the manifest lists must have the hash
    it records (a benchmark half-rewritten by a killed build, or edited by hand, is refused).
    """
    if folder.is_dir():
        check_manifest(folder)
        path = folder / "items.jsonl"
    else:
        path = folder
    return read_items(path, limit)


def read_items(path: Path, limit: int | None = None) -> list[Item]:
    """The items of an items.jsonl, first `limit` of them (no manifest check)."""
    items = [item for _, item in load_models(path, Item)]
    return items[:limit] if limit is not None else items


def check_manifest(folder: Path) -> dict[str, Any]:
    """The manifest of a benchmark folder, after checking the hash of every file it lists."""
    recover(folder)
    path = folder / "manifest.json"
    if not path.is_file():
        raise InputError(f"{path}: no manifest; a benchmark folder is written by `twinbench build`")
    try:
        manifest = orjson.loads(path.read_bytes())
        files = manifest["files"]
        listed = {str(name): str(digest) for name, digest in files.items()}
    except (orjson.JSONDecodeError, KeyError, TypeError, AttributeError):
        raise InputError(f"{path}: not a benchmark manifest (no files and hashes)") from None
    for name, digest in listed.items():
        target = folder / name
        if not target.is_file():
            raise InputError(f"{target}: listed in {path} but missing")
        if sha256_file(target) != digest:
            raise InputError(
                f"{target}: sha256 differs from {path}; the folder is not the benchmark "
                "its manifest describes (rebuild it)"
            )
    return dict(manifest)


def run_languages(folder: Path, override: tuple[str, ...] | None = None) -> tuple[str, ...]:
    """The declared-language rule of every command: `override` if given, else the languages
    the run's system card declares in `folder/run.json`, else ("en",)."""
    if override:
        return override
    record = load_run(folder)
    return record.languages if record is not None else ("en",)


def request_for(item: Item, trial: int, permutation: int, item_id: str) -> Request:
    """The request a system sees; permutation k > 0 reorders choice options with (seed, k).

    It carries the state and the question only: never the family, the expected answer or
    anything else a system could read the label from. `item_id` is what the request calls the
    item: the run's opaque token (`blinding.OpaqueIds`) for anything sent to a system; the
    item's own id only where twinbench grades the request itself and sends it nowhere.
    """
    question = item.question
    if permutation and isinstance(question, ChoiceQuestion):
        rng = np.random.default_rng([item.seed, permutation])
        options = [question.options[i] for i in rng.permutation(len(question.options))]
        # every other field (abstain_option, future ones) stays as the item has it
        question = question.model_copy(update={"options": options})
    return Request(
        item_id=item_id,
        state=item.state,
        question=question,
        trial=trial,
        permutation=permutation,
    )


def read_done(path: Path, system: str | None = None) -> tuple[set[Key], Counter[str]]:
    """Keys already answered in `path` and their status counts.

    A torn final line (a kill mid-write) is truncated away first; every other line must be a
    Response (of `system`, when given) with a key not seen before, or resuming stops with
    `FILE:LINE: problem`.
    """
    done: set[Key] = set()
    counts: Counter[str] = Counter()
    if not path.exists():
        return done, counts
    data = path.read_bytes()
    complete = data.rfind(b"\n") + 1
    if complete < len(data):
        with path.open("r+b") as handle:
            handle.truncate(complete)
    for lineno, line in enumerate(data[:complete].splitlines(), start=1):
        if not line.strip():
            continue
        try:
            obj = orjson.loads(line)
        except orjson.JSONDecodeError:
            raise InputError(f"{path}:{lineno}: not a response line; cannot resume") from None
        if not isinstance(obj, dict):
            raise InputError(f"{path}:{lineno}: not a response line; cannot resume")
        r = check_response(str(path), lineno, obj)
        if system is not None and r.system != system:
            raise InputError(f"{path}:{lineno}: a response of {r.system!r}; this run is {system!r}")
        key = (r.item_id, r.trial, r.permutation)
        if key in done:
            raise InputError(f"{path}:{lineno}: second response for {key}; cannot resume")
        done.add(key)
        counts[r.status] += 1
    return done, counts


def check_resume(out: Path, record: RunRecord, items: Sequence[Item] = ()) -> None:
    """Refuse to append to a run folder made by another system, plan or benchmark.

    A run of the first N items (`run --limit N`) may be extended to more of the same
    benchmark: its items are a prefix of `items` (not for a shard, whose slice would move)."""
    responses, path = out / "responses.jsonl", out / "run.json"
    if not responses.exists() or responses.stat().st_size == 0:
        return
    try:
        old = load_run(out)
    except InputError as exc:
        raise InputError(f"{exc}; cannot resume (use a new --out folder)") from None
    if old is None:
        raise InputError(f"{responses}: responses without a run.json; use a new --out folder")
    checks = (
        ("system card", old.system, record.system),
        ("--trials", old.trials, record.trials),
        ("--permutations", old.permutations, record.permutations),
        ("benchmark items", old.items_sha256, record.items_sha256),
        ("--shard", old.shard, record.shard),
    )
    for what, before, now in checks:
        if before == now or (what == "benchmark items" and _extends(old, items)):
            continue
        if isinstance(before, SystemCard) and isinstance(now, SystemCard):
            same_name = before.name == now.name
            shown = (before.name, now.name + (" (another card)" if same_name else ""))
        elif what == "benchmark items":
            shown = ("another set", "these items")
        else:
            shown = (str(before), str(now))
        raise InputError(
            f"{path}: resuming needs the same {what} (the folder has {shown[0]}, this run "
            f"{shown[1]}); use a new --out folder or the original options"
        )


def _extends(old: RunRecord, items: Sequence[Item]) -> bool:
    """Whether `items` extend the items `old` ran (the same first `old.items`, then more)."""
    count = old.items
    return (
        old.shard is None
        and count is not None
        and 0 < count < len(items)
        and items_digest(items[:count]) == old.items_sha256
    )


def _versions() -> dict[str, str]:
    found = {"twinbench": __version__, "python": platform.python_version()}
    for package in (
        "numpy",
        "torch",
        "transformers",
        "sentence-transformers",
        "aiohttp",
        "httpx",
    ):
        try:
            found[package] = version(package)
        except PackageNotFoundError:
            continue
    return found


def _batches(requests: Sequence[Request], size: int) -> Iterator[list[Request]]:
    for start in range(0, len(requests), size):
        yield list(requests[start : start + size])


#: the statuses a resume sends again by default: the server failed, not the system
RETRIED = frozenset({"error"})
#: the statuses --max-error-rate counts
FAILURES = ("error", "invalid")


def drop_failures(path: Path, statuses: frozenset[str] = RETRIED) -> int:
    """Remove the rows of `path` whose status is in `statuses` (rewritten to a temporary file,
    then renamed: a kill leaves the old file or the new one); returns how many went."""
    if not path.exists():
        return 0
    kept, dropped = [], 0
    for line in path.read_bytes().splitlines(keepends=True):
        if line.strip() and orjson.loads(line).get("status") in statuses:
            dropped += 1
        else:
            kept.append(line)
    if dropped:
        temporary = path.with_name(path.name + ".retry")
        with temporary.open("wb") as handle:
            handle.write(b"".join(kept))
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(temporary, path)
    return dropped


class CheckFailed(InputError):
    """The check request before a run failed: the endpoint is down, refuses or is unauthorised."""


def _check(system: System, request: Request) -> Response:
    """Send `request` alone; a reply with status `error` stops the run before it starts."""
    (reply,) = system.respond([request])
    if reply.status == "error":
        endpoint = getattr(getattr(system, "http", None), "endpoint", None)
        where = f" at {endpoint.shown()}" if endpoint is not None else ""
        raise CheckFailed(
            f"{system.card.name}: the check request{where} failed: {reply.error}; nothing "
            "was run (is the server up, the --base-url right, the key valid?)"
        )
    return reply


def failure_verdict(
    counts: Counter[str] | dict[str, int], bound: float | None
) -> tuple[float, str | None]:
    """(share of error and invalid rows, why it is over `bound` or None)."""
    total = sum(counts.values())
    failed = sum(counts.get(s, 0) for s in FAILURES)
    rate = failed / total if total else 0.0
    if bound is None or rate <= bound:
        return rate, None
    shown = ", ".join(f"{counts.get(s, 0)} {s}" for s in FAILURES)
    return rate, (
        f"{failed} of {total} rows failed ({shown}): {rate:.1%} is over --max-error-rate "
        f"{bound:g}; the figures of this run are not results"
    )


def open_session(
    out: Path,
    card: SystemCard,
    plan: RunPlan,
    seed: int,
    benchmark: Path | None,
    retry_errors: bool,
) -> tuple[RunRecord, Sequence[tuple[Item, int, int]]]:
    """A session's start in run folder `out`: its run.json record (not yet written) and the
    plan's tasks still to send. A folder of another system or plan is refused; a torn tail
    is cut; with `retry_errors`, the `error` rows are dropped (to be sent again)."""
    if out.exists():
        recover(out)
    responses_path = out / "responses.jsonl"
    record = RunRecord(
        system=card,
        versions=_versions(),
        seed=seed,
        trials=plan.trials,
        permutations=plan.permutations,
        items=plan.count,
        items_sha256=plan.digest,
        status="running",
        benchmark=None if benchmark is None else str(benchmark.resolve()),
        shard=None if plan.shard is None else f"{plan.shard[0]}/{plan.shard[1]}",
        limits=plan.limits,
    )
    check_resume(out, record, plan.items)
    previous = load_run(out) if responses_path.exists() else None
    read_done(responses_path, card.name)  # refuses a foreign or broken file first
    resent = drop_failures(responses_path) if retry_errors else 0
    done, _ = read_done(responses_path, card.name)
    pending = plan.pending(done)
    earlier = previous.resent_errors if previous is not None else 0
    record = record.model_copy(
        update={"resumed_from": len(done), "resent_errors": earlier + resent}
    )
    return record, pending


def send(
    system: System,
    tasks: Sequence[tuple[Item, int, int]],
    ids: OpaqueIds,
    plan: RunPlan,
    write: Callable[[Sequence[Response]], None],
    notice: Callable[[str], None] | None = None,
    pace: Pace | None = None,
) -> None:
    """Send `tasks` (requests named by `ids`' tokens) and hand each batch of responses to
    `write` as it is answered: a streaming system keeps a window in flight under the plan's
    rates (`pace`, made from the plan when not given); others get batches of
    `plan.batch_size`, in `sort_key` order where the system has one."""
    requests = (request_for(*task, ids.token(task[0].id)) for task in tasks)
    if streams(system):
        options = getattr(system, "options", None)
        window = plan.window or getattr(options, "concurrency", None) or plan.batch_size
        pace = pace or Pace(plan.max_rps, plan.max_tokens_per_s)
        stream(system, requests, window, pace, write, notice)
        return
    batch_requests = list(requests)
    sort_key = getattr(system, "sort_key", None)
    if callable(sort_key):  # local models: batches of one length, little padding
        batch_requests.sort(key=sort_key)
    for batch in _batches(batch_requests, plan.batch_size):
        write(system.respond(batch))


def run(
    system: System,
    plan: RunPlan,
    out: Path,
    *,
    seed: int = 0,
    progress: Progress | None = None,
    benchmark: Path | None = None,
    notice: Callable[[str], None] | None = None,
    retry_errors: bool = True,
    check: bool = True,
    max_error_rate: float | None = None,
) -> RunRecord:
    """Run `plan` against `system` into `out`; returns the final run record (run.json).

    `progress(sent, total)` follows the run; `notice` gets a line when a Ctrl-C waits for
    the requests in flight. A resume drops the `error` rows and sends them again
    (`retry_errors`). A streaming (HTTP) system first gets one request alone (`check`): a
    reply with status `error` raises CheckFailed before anything is written. With
    `max_error_rate`, run.json's `failed` says why when more of the rows are `error` or
    `invalid`. A finished shard's responses.jsonl is rewritten in plan order."""
    record, pending = open_session(out, system.card, plan, seed, benchmark, retry_errors)
    responses_path = out / "responses.jsonl"
    ids = OpaqueIds(task_ids(pending))  # this session's key, in memory only
    checked: list[Response] = []
    if check and pending and streams(system):
        checked.append(_check(system, request_for(*pending[0], ids.token(pending[0][0].id))))
    out.mkdir(parents=True, exist_ok=True)
    write_run(out, record)
    started = time.perf_counter()
    sent = 0
    total = len(pending)
    try:
        with responses_path.open("ab") as handle:

            def write(responses: Sequence[Response]) -> None:
                nonlocal sent
                restored = [ids.restore(r, system.card.name) for r in responses]
                handle.write(b"".join(dumps_line(record_dict(r)) for r in restored))
                handle.flush()
                os.fsync(handle.fileno())
                sent += len(responses)
                if progress:
                    progress(sent, total)

            if checked:
                write(checked)
            send(system, pending[len(checked) :], ids, plan, write, notice)
    except KeyboardInterrupt:
        seconds = round(time.perf_counter() - started, 3)
        update = {"status": "interrupted", "sent_this_session": sent}
        write_run(out, record.model_copy(update=update | {"seconds_this_session": seconds}))
        raise
    if plan.shard is not None:  # in plan order, which `merge` reads shards in
        write_in_order(responses_path, plan.keys())
    seconds = time.perf_counter() - started
    return close_session(out, record, sent, seconds, max_error_rate)


def close_session(
    out: Path, record: RunRecord, sent: int, seconds: float, max_error_rate: float | None
) -> RunRecord:
    """Write the finished run.json of `out`: counts per status read back from the file,
    this session's figures, and the --max-error-rate verdict."""
    _, counts = read_done(out / "responses.jsonl", record.system.name)
    rate, failed = failure_verdict(counts, max_error_rate)
    record = record.model_copy(
        update={
            "failure_rate": round(rate, 6),
            "failed": failed,
            "status": "finished",
            "sent_this_session": sent,
            "seconds_this_session": round(seconds, 3),
            "counts": dict(sorted(counts.items())),
            "responses": sum(counts.values()),
        }
    )
    write_run(out, record)
    return record
