"""Failures are loud and retryable (issue 24): the check request, resending `error` rows on
resume, and --max-error-rate's exit code, against real servers on 127.0.0.1."""

from __future__ import annotations

import json
import socket
import threading
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from conftest import read_rows
from systems.servers import serve, systemone_handler
from twinbench.builder import build
from twinbench.cli import app


@pytest.fixture(scope="module")
def bench(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("bench") / "b"
    build(out, per_generator=3)  # 18 items
    return out


def _run(bench: Path, url: str, out: Path, *extra: str) -> Any:
    args = ["run", "-b", str(bench), "-s", "jev", "--base-url", url, "-o", str(out)]
    return CliRunner().invoke(app, [*args, "--concurrency", "1", "--timeout", "2", *extra])


def _free_port() -> int:
    with socket.socket() as probe:  # bound then closed: nothing listens on it afterwards
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def test_nothing_listening_stops_at_the_check_and_writes_nothing(
    bench: Path, tmp_path: Path
) -> None:
    out = tmp_path / "run"
    result = _run(bench, f"http://127.0.0.1:{_free_port()}", out)
    assert result.exit_code == 2, result.output
    lines = result.output.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: jev: the check request at http://")
    assert "failed" in lines[0] and "nothing was run" in lines[0]
    assert not out.exists()


def test_an_unauthorised_endpoint_stops_at_the_check(bench: Path, tmp_path: Path) -> None:
    with serve(lambda path, body: (401, {"error": "invalid api key"})) as (url, log):
        result = _run(bench, url, tmp_path / "run")
    assert result.exit_code == 2, result.output
    assert "401" in result.output and "the check request" in result.output
    assert len(log) == 1  # one request, not one per item (a 401 is not retried)
    assert not (tmp_path / "run").exists()


def test_error_rows_are_sent_again_on_resume_unless_kept(bench: Path, tmp_path: Path) -> None:
    items = read_rows(bench / "items.jsonl")
    broken = {items[i]["state"] for i in (3, 7, 11)}  # the server fails these states
    failing = sum(i["state"] in broken for i in items)  # an item and its twin may share one
    assert 3 <= failing <= 6
    healed = threading.Event()
    inner = systemone_handler(jev=True)

    def handle(path: str, body: Any) -> tuple[int, Any]:
        if body["state"] in broken and not healed.is_set():
            return 500, {"error": "overloaded"}
        return inner(path, body)  # type: ignore[no-any-return]

    out, kept = tmp_path / "run", tmp_path / "kept"
    with serve(handle) as (url, log):
        for folder in (out, kept):
            first = _run(bench, url, folder, "--max-error-rate", "1")
            assert first.exit_code == 0, first.output
            statuses = [r["status"] for r in read_rows(folder / "responses.jsonl")]
            assert statuses.count("error") == failing and len(statuses) == 18
        healed.set()
        sent = len(log)
        again = _run(bench, url, kept, "--keep-errors", "--max-error-rate", "1")
        assert again.exit_code == 0 and len(log) == sent  # kept: nothing sent
        resumed = _run(bench, url, out)
        assert resumed.exit_code == 0, resumed.output
        resent = {body["state"] for _, body in log[sent:]}
    assert resent == broken and len(log) - sent == failing  # each failed item, once
    rows = read_rows(out / "responses.jsonl")
    assert len(rows) == 18 and {r["status"] for r in rows} == {"ok"}
    assert len({(r["item_id"], r["trial"], r["permutation"]) for r in rows}) == 18
    record = json.loads((out / "run.json").read_text())
    assert record["resent_errors"] == failing and record["failure_rate"] == 0.0
    assert record["failed"] is None


def test_a_server_replying_nonsense_fails_the_run_with_exit_3(bench: Path, tmp_path: Path) -> None:
    with serve(lambda path, body: (200, {"nonsense": True})) as (url, _):
        result = _run(bench, url, tmp_path / "run")
    assert result.exit_code == 3, result.output
    assert "18 of 18 rows failed (0 error, 18 invalid)" in result.output
    record = json.loads((tmp_path / "run" / "run.json").read_text())
    assert record["status"] == "finished" and record["failure_rate"] == 1.0
    assert record["failed"].startswith("18 of 18 rows failed")
    assert "over --max-error-rate 0.05" in record["failed"]


def test_a_failure_rate_under_the_bound_passes(bench: Path, tmp_path: Path) -> None:
    items = read_rows(bench / "items.jsonl")
    inner = systemone_handler(jev=True)

    def handle(path: str, body: Any) -> tuple[int, Any]:
        if body["state"] == items[5]["state"]:
            return 200, {"nonsense": True}  # 1 of 18 invalid: 5.6 %
        return inner(path, body)  # type: ignore[no-any-return]

    with serve(handle) as (url, _):
        strict = _run(bench, url, tmp_path / "strict")
        loose = _run(bench, url, tmp_path / "loose", "--max-error-rate", "0.06")
    assert strict.exit_code == 3 and "1 of 18 rows failed (0 error, 1 invalid)" in strict.output
    assert loose.exit_code == 0, loose.output
    record = json.loads((tmp_path / "loose" / "run.json").read_text())
    assert record["failure_rate"] == round(1 / 18, 6) and record["failed"] is None


def test_compare_refuses_a_run_with_nothing_valid(bench: Path, tmp_path: Path) -> None:
    with serve(lambda path, body: (200, {"nonsense": True})) as (url, _):
        assert _run(bench, url, tmp_path / "broken").exit_code == 3
    good = CliRunner().invoke(
        app, ["run", "-b", str(bench), "-s", "always-answer", "-o", str(tmp_path / "good")]
    )
    assert good.exit_code == 0, good.output
    result = CliRunner().invoke(
        app,
        ["compare", str(tmp_path / "good"), str(tmp_path / "broken"), "--out", str(tmp_path / "c")],
    )
    assert result.exit_code == 2, result.output
    assert (
        result.output.strip() == "error: nothing to compare: no valid response from jev: 18 invalid"
    )
    assert not (tmp_path / "c").exists()


def test_compare_warns_about_a_run_over_the_failure_share(bench: Path, tmp_path: Path) -> None:
    items = read_rows(bench / "items.jsonl")
    inner = systemone_handler(jev=True)
    bad = {items[0]["state"], items[9]["state"]}

    def handle(path: str, body: Any) -> tuple[int, Any]:
        if body["state"] in bad:
            return 200, {"nonsense": True}
        return inner(path, body)  # type: ignore[no-any-return]

    with serve(handle) as (url, _):
        assert _run(bench, url, tmp_path / "shaky", "--max-error-rate", "1").exit_code == 0
    invalid = sum(i["state"] in bad for i in items)
    good = CliRunner().invoke(
        app, ["run", "-b", str(bench), "-s", "always-answer", "-o", str(tmp_path / "good")]
    )
    assert good.exit_code == 0
    out = tmp_path / "c"
    result = CliRunner().invoke(
        app, ["compare", str(tmp_path / "shaky"), str(tmp_path / "good"), "-o", str(out)]
    )
    assert result.exit_code == 0, result.output
    data = json.loads((out / "compare.json").read_text())
    (line,) = data["warnings"]
    assert line.startswith(f"jev: {invalid} of 18 rows failed (") and f"{invalid} invalid" in line
    assert line.endswith("its differences are not results")
    assert f"**Warning: {line}**" in (out / "compare.md").read_text()
    assert 'class="banner"' in (out / "compare.html").read_text()
    # the good run alone draws no warning
    again = CliRunner().invoke(
        app, ["compare", str(tmp_path / "good"), str(tmp_path / "good"), "-o", str(tmp_path / "d")]
    )
    assert again.exit_code == 0
    assert json.loads((tmp_path / "d" / "compare.json").read_text())["warnings"] == []
