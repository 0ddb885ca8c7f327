"""`twinbench run --executor ray` on real Ray clusters: a local one the run starts, and a head
started here (`ray start --head`) that runs join as a team's cluster; workers and drivers are
killed for real, and the limits are measured at a real server on 127.0.0.1."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from conftest import REQUIRE_TOOLS_ENV, read_rows
from systems.servers import Hit, free_port, send, serve_raw, systemone_handler
from twinbench.builder import build
from twinbench.cli import app
from twinbench.runner import load_benchmark

KEY_ENV = "TWINBENCH_RAY_TEST_KEY"
KEY = "sk-ray-test-3f9a1c77d2"


def _ray() -> None:
    try:
        import ray  # noqa: F401
    except ImportError:
        reason = "ray is not installed (pip install 'twinbench[ray]'; .ci/run installs it)"
        if os.environ.get(REQUIRE_TOOLS_ENV) == "1":
            pytest.fail(reason)
        pytest.skip(reason)


def _strip(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [{k: v for k, v in r.items() if k != "latency_ms"} for r in rows]


def _keyed(rows: list[dict[str, Any]]) -> dict[tuple[str, int, int], dict[str, Any]]:
    return {(r["item_id"], r["trial"], r["permutation"]): r for r in _strip(rows)}


def _wait(condition: Any, seconds: float, what: str) -> None:
    """Poll `condition()` until it is true; fail naming `what` after `seconds`."""
    deadline = time.monotonic() + seconds
    while not condition():
        if time.monotonic() > deadline:
            pytest.fail(f"waited {seconds:g} s for {what}")
        time.sleep(0.05)


@pytest.fixture(scope="module")
def bench(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("ray") / "bench"
    build(folder, per_generator=2)
    return folder


@pytest.fixture(scope="module")
def head() -> Iterator[tuple[str, Path]]:
    """A Ray head as a team starts one (`ray start --head --block`, token auth as Ray 2.60
    sets it up), without the test's API key in its environment; yields (address, its temp
    folder, which holds the session logs)."""
    _ray()
    temp = Path(tempfile.mkdtemp(prefix="tbray-", dir="/tmp"))  # Ray's socket paths are short
    port = free_port()
    env = {k: v for k, v in os.environ.items() if k not in (KEY_ENV, "RAY_ADDRESS")}
    env["RAY_AUTH_MODE"] = "token"  # what Ray's docs ask of every node and driver
    ray_cli = Path(sys.executable).with_name("ray")
    process = subprocess.Popen(
        [
            str(ray_cli),
            "start",
            "--head",
            "--block",
            f"--port={port}",
            "--num-cpus=2",
            "--include-dashboard=false",
            "--disable-usage-stats",
            f"--temp-dir={temp}",
        ],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    address = f"127.0.0.1:{port}"

    def up() -> bool:
        if process.poll() is not None:
            pytest.fail(f"ray start --head exited with {process.returncode}")
        status = subprocess.run(
            [str(ray_cli), "status", f"--address={address}"],
            capture_output=True,
            env=env,
            check=False,
        )
        return status.returncode == 0

    try:
        _wait(up, 180, "the Ray head to come up")
        yield address, temp
    finally:
        os.killpg(process.pid, signal.SIGTERM)
        try:
            process.wait(60)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()


def _laya_server(delay_s: float) -> Any:
    """A Laya server that answers only requests carrying the test key."""
    answer = systemone_handler(jev=False, delay_s=delay_s)

    def handle(handler: BaseHTTPRequestHandler, hit: Hit) -> None:
        if hit.headers.get("Authorization") != f"Bearer {KEY}":
            send(handler, 401, b'{"error": "no key"}')
            return
        status, reply = answer(hit.path, hit.body)
        send(handler, status, json.dumps(reply).encode())

    return serve_raw(handle)


def _laya_args(bench: Path, url: str, out: Path, *extra: str) -> list[str]:
    return [
        "run",
        "-b",
        str(bench),
        "-s",
        "laya",
        "--base-url",
        url,
        "--api-key-env",
        KEY_ENV,
        "--trials",
        "2",
        "-o",
        str(out),
        *extra,
    ]


def test_a_ray_run_on_a_local_cluster_equals_a_single_process_run(
    bench: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _ray()
    monkeypatch.delenv("RAY_ADDRESS", raising=False)
    runner = CliRunner()
    common = ["-b", str(bench), "-s", "always-answer:random", "--seed", "5", "--trials", "2"]
    single = runner.invoke(app, ["run", *common, "--out", str(tmp_path / "single")])
    assert single.exit_code == 0, single.output
    # a local cluster of two workers, started for the run and stopped after it; chunks of 5
    spread = runner.invoke(
        app,
        [
            "run",
            *common,
            "--executor",
            "ray",
            "--shards",
            "2",
            "--chunk",
            "5",
            "--out",
            str(tmp_path / "ray"),
        ],
    )
    assert spread.exit_code == 0, spread.output
    assert _strip(read_rows(tmp_path / "ray" / "responses.jsonl")) == _strip(
        read_rows(tmp_path / "single" / "responses.jsonl")
    )
    shards = sorted(p.name for p in (tmp_path / "ray" / "shards").iterdir())
    assert shards == ["0-of-2", "1-of-2"]
    record = json.loads((tmp_path / "ray" / "run.json").read_text())
    assert record["status"] == "finished" and len(record["merged_from"]) == 2
    assert record["limits"]["processes"] == 2
    # a finished run sends nothing again
    again = runner.invoke(
        app, ["run", *common, "--executor", "ray", "--out", str(tmp_path / "ray")]
    )
    assert again.exit_code == 0, again.output


def test_a_team_cluster_is_joined_and_the_key_reaches_workers_written_nowhere(
    bench: Path,
    head: tuple[str, Path],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    address, ray_temp = head
    monkeypatch.setenv(KEY_ENV, KEY)
    with _laya_server(0.0) as (url, hits):
        local = CliRunner().invoke(app, _laya_args(bench, url, tmp_path / "local"))
        assert local.exit_code == 0, local.output
        # drivers in their own processes: Ray reads its auth mode once per process
        refused = _driver(
            _laya_args(bench, url, tmp_path / "refused", "--executor", "ray"), address, auth=False
        )
        output = refused.communicate(timeout=300)[0].decode()
        assert refused.returncode == 2, output
        # one line that says what to set, and nothing written
        (line,) = [ln for ln in output.splitlines() if ln.startswith("error:")]
        assert "cannot join the Ray cluster" in line and "RAY_AUTH_MODE=token" in line
        assert not (tmp_path / "refused" / "responses.jsonl").exists()
        joined = _driver(
            _laya_args(bench, url, tmp_path / "ray", "--executor", "ray", "--chunk", "6"), address
        )
        output = joined.communicate(timeout=300)[0].decode()
        assert joined.returncode == 0, output
    rows = read_rows(tmp_path / "ray" / "responses.jsonl")
    assert {r["status"] for r in rows} == {"ok"}  # every worker sent the key
    assert _keyed(rows) == _keyed(read_rows(tmp_path / "local" / "responses.jsonl"))
    assert all(h.headers["Authorization"] == f"Bearer {KEY}" for h in hits)
    # the key is in no file the run wrote and in none of the cluster's session files
    leaked = [
        path
        for root in (tmp_path, ray_temp)
        for path in root.rglob("*")
        if path.is_file() and not path.is_symlink() and KEY.encode() in _read(path)
    ]
    assert leaked == []


def _read(path: Path) -> bytes:
    try:
        return path.read_bytes()
    except OSError:  # a socket or a file Ray removed meanwhile
        return b""


def _actor_pids() -> list[int]:
    import psutil

    found = []
    for process in psutil.process_iter(["cmdline"]):
        cmdline = " ".join(process.info["cmdline"] or [])
        if "ShardWorker" in cmdline:
            found.append(process.pid)
    return found


def _lines(folder: Path) -> int:
    return sum(
        (path.read_bytes().count(b"\n") if path.exists() else 0)
        for path in folder.glob("shards/*/responses.jsonl")
    )


def _driver(args: list[str], address: str, auth: bool = True) -> subprocess.Popen[bytes]:
    """A driver process joining `address` as `ray job submit` would (RAY_ADDRESS), with the
    API key in its environment and (with `auth`) Ray's token auth mode."""
    env = os.environ | {"RAY_ADDRESS": address, "RAY_AUTH_MODE": "token", KEY_ENV: KEY}
    if not auth:
        del env["RAY_AUTH_MODE"]
    return subprocess.Popen(
        [sys.executable, "-m", "twinbench", *args],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
    )


def test_a_killed_worker_is_retried_and_a_killed_driver_resumes_from_disk(
    bench: Path, head: tuple[str, Path], tmp_path: Path
) -> None:
    address, _ = head
    out = tmp_path / "ray"
    total = 2 * len(load_benchmark(bench))  # --trials 2
    args = _laya_args(bench, "", out, "--executor", "ray", "--chunk", "4", "--concurrency", "2")
    with _laya_server(0.1) as (url, hits):
        args[args.index("--base-url") + 1] = url
        # a worker killed after the first chunks reached disk: Ray restarts it, resends
        driver = _driver(args, address)
        _wait(lambda: _lines(out) >= 4 and _actor_pids(), 180, "a first chunk on disk")
        os.kill(_actor_pids()[0], signal.SIGKILL)
        output = driver.communicate(timeout=300)[0].decode()
        assert driver.returncode == 0, output
        rows = read_rows(out / "responses.jsonl")
        assert len(rows) == len(_keyed(rows)) == total and {r["status"] for r in rows} == {"ok"}

        # the driver killed mid-run: its actors go with it, every written chunk stays
        second = tmp_path / "second"
        args[args.index("-o") + 1] = str(second)
        driver = _driver(args, address)
        _wait(lambda: _lines(second) >= 8, 180, "two chunks on disk")
        driver.send_signal(signal.SIGKILL)
        driver.wait()
        _wait(lambda: not _actor_pids(), 120, "the dead driver's actors to stop")
        on_disk = _lines(second)
        assert 8 <= on_disk < total and not (second / "responses.jsonl").exists()
        before = len(hits)
        resumed = _driver(args, address)
        output = resumed.communicate(timeout=300)[0].decode()
        assert resumed.returncode == 0, output
    record = json.loads((second / "run.json").read_text())
    assert record["resumed_from"] == on_disk
    assert len(hits) - before == total - on_disk  # only what no shard file held
    assert _keyed(read_rows(second / "responses.jsonl")) == _keyed(rows)


def _rate(hits: list[Hit], processes: int) -> float:
    """An upper bound on the rate the sender kept, from the arrivals at the server.

    Each process may send its first request at once, and that request may arrive late (its
    client starts up meanwhile: here well under a second, which at 2 requests a second per
    process is at most 2 more requests each); so `processes` x 3 requests are not counted."""
    times = sorted(h.at for h in hits)
    return (len(times) - 3 * processes) / (times[-1] - times[0])


def test_max_rps_is_the_whole_runs_under_ray_and_under_manual_shards(
    bench: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _ray()
    monkeypatch.delenv("RAY_ADDRESS", raising=False)
    monkeypatch.setenv(KEY_ENV, KEY)
    limit = ["--max-rps", "4", "--concurrency", "8"]  # with --trials 2: 12 s of requests
    with _laya_server(0.0) as (url, hits):
        ray_run = CliRunner().invoke(
            app,
            _laya_args(bench, url, tmp_path / "ray", "--executor", "ray", "--shards", "2", *limit),
        )
        assert ray_run.exit_code == 0, ray_run.output
        ray_hits = list(hits)
        hits.clear()
        env = os.environ | {KEY_ENV: KEY}
        shards = [
            subprocess.Popen(
                [
                    sys.executable,
                    "-m",
                    "twinbench",
                    *_laya_args(bench, url, tmp_path / f"s{i}", "--shard", f"{i}/2", *limit),
                    "--no-check",
                ],
                env=env,
                stdout=subprocess.PIPE,
                stderr=subprocess.STDOUT,
            )
            for i in range(2)
        ]
        for process in shards:
            output = process.communicate(timeout=300)[0].decode()
            assert process.returncode == 0, output
        manual_hits = list(hits)
    count = 2 * len(load_benchmark(bench))
    assert len(ray_hits) == count and len(manual_hits) == count
    # without the split each process would send 4 a second (this bound would read ~13)
    assert _rate(ray_hits, 2) <= 4
    assert _rate(manual_hits, 2) <= 4
    record = json.loads((tmp_path / "s1" / "run.json").read_text())
    assert record["limits"] == {
        "whole_run": {"concurrency": 8, "max_rps": 4.0, "max_tokens_per_s": None},
        "processes": 2,
        "this_process": {"concurrency": 4, "max_rps": 2.0, "max_tokens_per_s": None},
    }
    shard = json.loads((tmp_path / "ray" / "shards" / "0-of-2" / "run.json").read_text())
    assert shard["limits"] == record["limits"]
