"""The runner: resumable after kill -9, nothing re-sent, duplicated or lost; run.json."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from conftest import interruptible, read_rows
from systems.servers import serve, systemone_handler
from twinbench.builder import build
from twinbench.cli import app
from twinbench.records import Item
from twinbench.runner import read_done, request_for


@pytest.fixture(scope="module")
def bench(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("bench")
    # 14 pairs per generator, then equal family shares: 14 pairs per family, 42 pairs in all
    build(out, per_generator=14)
    return out


def _cli(*args: str) -> list[str]:
    return [sys.executable, "-m", "twinbench", *args]


def _wait_lines(path: Path, n: int, timeout: float = 60) -> None:
    deadline = time.time() + timeout
    while time.time() < deadline:
        if path.exists() and path.read_bytes().count(b"\n") >= n:
            return
        time.sleep(0.05)
    raise AssertionError(f"{path} never reached {n} lines")


def _jev_run(bench: Path, url: str, *extra: str) -> list[str]:
    """The command line running `jev` on `bench` against the test server at `url`."""
    return _cli(
        "run",
        "-b",
        str(bench),
        "-s",
        "jev",
        "--base-url",
        url,
        "--batch-size",
        "2",
        "--concurrency",
        "1",
        *extra,
    )


def _held(handle: Any, after: int, full: int = 1) -> tuple[Any, threading.Event, threading.Event]:
    """`handle`, but request number `after + 1` and later wait until `release` is set;
    `holding` is set once `full` of them are waiting. The run is then stopped at a known
    point, whatever the machine's speed (no race between the test's signal and the run
    finishing)."""
    release, holding = threading.Event(), threading.Event()
    lock, count, waiting = threading.Lock(), [0], [0]

    def wrapped(path: str, body: Any) -> tuple[int, Any]:
        with lock:
            count[0] += 1
            held = count[0] > after and not release.is_set()
            if held:
                waiting[0] += 1
                if waiting[0] == full:
                    holding.set()
        if held:
            release.wait(120)
        return handle(path, body)  # type: ignore[no-any-return]

    return wrapped, release, holding


def _strip(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return sorted(
        ({k: v for k, v in r.items() if k != "latency_ms"} for r in rows),
        key=lambda r: (r["item_id"], r["trial"], r["permutation"]),
    )


def test_kill_9_then_resume_equals_an_uninterrupted_run(bench: Path, tmp_path: Path) -> None:
    handle, release, holding = _held(systemone_handler(jev=True), after=24)
    with serve(handle) as (url, log):
        killed, clean = tmp_path / "killed", tmp_path / "clean"
        args = _jev_run(bench, url, "--permutations", "2", "--out", str(killed))
        process = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        assert holding.wait(120), "the run never reached request 25"
        _wait_lines(killed / "responses.jsonl", 24)  # batches of 2: all 24 answered are written
        os.kill(process.pid, signal.SIGKILL)
        process.wait()
        release.set()
        done_before, _ = read_done(killed / "responses.jsonl")
        seen_before = len(log)
        assert len(done_before) == 24
        finished = subprocess.run(args, capture_output=True, text=True)
        assert finished.returncode == 0, finished.stderr
        resent = [(body["state"], body["questions"]["q"]) for _, body in log[seen_before:]]
        subprocess.run(
            _jev_run(bench, url, "--permutations", "2", "--out", str(clean)),
            check=True,
            capture_output=True,
        )
    rows = read_rows(killed / "responses.jsonl")
    keys = [(r["item_id"], r["trial"], r["permutation"]) for r in rows]
    assert len(keys) == len(set(keys)) == 2 * 84  # 42 pairs x 2 permutations, no duplicates
    assert _strip(rows) == _strip(read_rows(clean / "responses.jsonl"))
    # what was sent again is what was not finished before the kill, nothing more (by what a
    # request shows: a permutation may show an item's options in their own order, and
    # items may share a state, so the check counts)
    items = {i["id"]: i for i in read_rows(bench / "items.jsonl")}

    def shown(key: tuple[str, int, int]) -> tuple[str, str]:
        item = Item.model_validate(items[key[0]])
        question = request_for(item, key[1], key[2], item.id).question.model_dump()
        options = question["options"] if question["type"] == "choice" else None
        return item.state, json.dumps(options)

    unfinished = Counter(shown(k) for k in set(keys) - done_before)
    assert (
        Counter(
            (state, json.dumps(question.get("criteria") if question["type"] == "choice" else None))
            for state, question in resent
        )
        == unfinished
    )
    meta = json.loads((killed / "run.json").read_text())
    assert meta["status"] == "finished" and meta["responses"] == 168
    assert meta["resumed_from"] == len(done_before)
    assert meta["system"]["name"] == "jev"


def test_torn_last_line_is_cut_and_resumed(bench: Path, tmp_path: Path, runner: CliRunner) -> None:
    out = tmp_path / "run"
    result = runner.invoke(
        app, ["run", "-b", str(bench), "-s", "always-abstain", "-o", str(out), "--limit", "10"]
    )
    assert result.exit_code == 0, result.output
    path = out / "responses.jsonl"
    data = path.read_bytes()
    last = data.rstrip(b"\n").rfind(b"\n") + 1
    path.write_bytes(data[: last + 15])  # half of the last line, as after a kill mid-write
    result = runner.invoke(
        app, ["run", "-b", str(bench), "-s", "always-abstain", "-o", str(out), "--limit", "10"]
    )
    assert result.exit_code == 0, result.output
    rows = read_rows(path)
    assert len(rows) == 10 and len({r["item_id"] for r in rows}) == 10


def test_ctrl_c_leaves_a_resumable_run(bench: Path, tmp_path: Path) -> None:
    handle, release, holding = _held(systemone_handler(jev=True), after=6)
    with serve(handle) as (url, _):
        out = tmp_path / "run"
        args = _jev_run(bench, url, "--out", str(out))
        process = subprocess.Popen(
            args,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
            preexec_fn=interruptible,
        )
        assert holding.wait(120), "the run never reached request 7"
        _wait_lines(out / "responses.jsonl", 6)
        process.send_signal(signal.SIGINT)  # while request 7 is in flight: the run is not done
        release.set()
        _, stderr = process.communicate(timeout=120)
        assert process.returncode == 130
        assert "run the same command again to resume" in stderr
        assert json.loads((out / "run.json").read_text())["status"] == "interrupted"
        assert subprocess.run(args, capture_output=True).returncode == 0
    assert len(read_rows(out / "responses.jsonl")) == 84


def test_kill_9_with_64_in_flight_loses_nothing_written_and_repeats_nothing(
    bench: Path, tmp_path: Path
) -> None:
    """A streaming run with 64 requests in flight, killed once 100 are answered and 64 more
    are held by the server: the 100 written rows survive byte for byte, and the resume sends
    exactly the 68 keys that were not written, each once."""
    handle, release, full = _held(systemone_handler(jev=True), after=100, full=64)

    with serve(handle) as (url, log):
        out = tmp_path / "wide"
        args = _jev_run(bench, url, "--permutations", "2", "--out", str(out))
        args[args.index("--concurrency") + 1] = "64"
        process = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            assert full.wait(120), "the run never had 64 requests in flight"
            _wait_lines(out / "responses.jsonl", 100)
        finally:
            os.kill(process.pid, signal.SIGKILL)
            process.wait()
        before = (out / "responses.jsonl").read_bytes()
        done_before, _ = read_done(out / "responses.jsonl")
        assert len(done_before) == 100  # every answered request was written; none in flight
        release.set()
        sent_before = len(log)
        finished = subprocess.run(args, capture_output=True, text=True)
        assert finished.returncode == 0, finished.stderr
        resent = log[sent_before:]
    after = (out / "responses.jsonl").read_bytes()
    assert after.startswith(before)  # nothing written before the kill changed
    rows = read_rows(out / "responses.jsonl")
    keys = [(r["item_id"], r["trial"], r["permutation"]) for r in rows]
    assert len(keys) == len(set(keys)) == 168
    assert len(resent) == 168 - 100  # only what was not written is sent again


def test_a_slow_reply_holds_one_slot_not_a_batch(bench: Path, tmp_path: Path) -> None:
    """The first request is answered only after 40 others have been (a condition, not a
    time): with a window of 4 and no batch barrier the other slots keep going. A runner
    that waited for whole batches would never reach 40 and the hold would run out."""
    lock, count = threading.Lock(), [0]
    enough, released_by = threading.Event(), []
    answer = systemone_handler(jev=True)
    # the first item's request is the held one (recognised by its state, which no other of
    # the 50 items has: requests of a window of 4 can reach the server in any order)
    items = read_rows(bench / "items.jsonl")[:50]
    first_item, held_state = items[0]["id"], items[0]["state"]
    assert [i["state"] for i in items].count(held_state) == 1

    def handle(path: str, body: Any) -> tuple[int, Any]:
        first = body.get("state") == held_state
        with lock:
            count[0] += 1
        if first:
            released_by.append("others" if enough.wait(60) else "timeout")
        else:
            reply = answer(path, body)
            with lock:
                if count[0] >= 41:
                    enough.set()
            return reply
        return answer(path, body)

    with serve(handle) as (url, _):
        args = _jev_run(bench, url, "--out", str(tmp_path / "run"), "--limit", "50")
        args[args.index("--concurrency") + 1] = "4"
        finished = subprocess.run(args, capture_output=True, text=True)
    assert finished.returncode == 0, finished.stderr
    assert released_by == ["others"]
    rows = read_rows(tmp_path / "run" / "responses.jsonl")
    assert len(rows) == 50
    # completion order: the held first request is written after the others passed it. When
    # request 41 was sent, at most 4 were in flight (the held one, 41 and two more), so at
    # least 37 others had been answered and are written before it; whether the last few
    # overtake its reply is a race, so the bound is 37, not 40
    assert [r["item_id"] for r in rows].index(first_item) >= 37


def test_a_local_system_with_a_sort_key_gets_batches_in_that_order(tmp_path: Path) -> None:
    """The runner orders a batch system's requests by its sort_key (the embedded model's token
    count), so each batch holds prompts of one length; the file holds every item once."""
    from collections.abc import Sequence

    from twinbench.records import Response
    from twinbench.runner import RunPlan, run
    from twinbench.systems.base import Request, SystemCard, response

    items = build(tmp_path / "bench", per_generator=3).public
    seen: list[list[int]] = []

    class Lengthy:
        card = SystemCard(name="lengthy", languages=("en",))

        def sort_key(self, request: Request) -> int:
            return len(request.state)

        def respond(self, requests: Sequence[Request]) -> list[Response]:
            seen.append([len(r.state) for r in requests])
            return [response(r, "lengthy", abstain=True) for r in requests]

    run(Lengthy(), RunPlan(items, batch_size=4), tmp_path / "run")
    flat = [n for batch in seen for n in batch]
    assert flat == sorted(len(i.state) for i in items)
    assert max(len(b) for b in seen) == 4
    rows = read_rows(tmp_path / "run/responses.jsonl")
    assert sorted(r["item_id"] for r in rows) == sorted(i.id for i in items)


def test_ctrl_c_drains_the_requests_in_flight(bench: Path, tmp_path: Path) -> None:
    """Ctrl-C with 8 requests held in flight: the run says it waits for them, sends nothing
    new, and writes all 8 once answered, so everything the server was asked is on disk; the
    resume sends only what was never asked."""
    handle, release, full = _held(systemone_handler(jev=True), after=6, full=8)

    with serve(handle) as (url, log):
        out = tmp_path / "run"
        args = _jev_run(bench, url, "--out", str(out))
        args[args.index("--concurrency") + 1] = "8"
        process = subprocess.Popen(
            args,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
            preexec_fn=interruptible,
        )
        assert full.wait(120), "the run never had 8 requests in flight"
        _wait_lines(out / "responses.jsonl", 6)
        process.send_signal(signal.SIGINT)
        assert process.stderr is not None
        line = process.stderr.readline()  # printed once the interrupt is handled
        while line and "waiting for" not in line:  # the progress bar's last state comes first
            line = process.stderr.readline()
        assert "waiting for the 8 requests in flight" in line
        release.set()
        rest = process.stderr.read()
        process.wait(timeout=120)
        assert process.returncode == 130, rest
        asked = len(log)
        assert asked == 14  # 6 answered, 8 in flight; nothing sent after the Ctrl-C
        assert len(read_rows(out / "responses.jsonl")) == 14  # and all 14 are written
        assert json.loads((out / "run.json").read_text())["status"] == "interrupted"
        assert subprocess.run(args, capture_output=True).returncode == 0
        assert len(log) - asked == 84 - 14
    assert len(read_rows(out / "responses.jsonl")) == 84
