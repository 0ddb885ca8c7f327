"""`report RUN_OR_DIR… [-b BENCH] [-o OUT]` and extending a `--limit` run (issue 24)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from conftest import read_rows
from twinbench.builder import build
from twinbench.cli import app


@pytest.fixture(scope="module")
def bench(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("bench") / "bench"
    build(out, per_generator=3)  # 18 items
    return out


def _invoke(*args: str) -> str:
    result = CliRunner().invoke(app, list(args))
    assert result.exit_code == 0, result.output
    return result.output


def test_report_takes_run_folders_anywhere_and_finds_their_benchmark(
    bench: Path, tmp_path: Path
) -> None:
    a, b = tmp_path / "elsewhere" / "a", tmp_path / "b"
    _invoke("run", "-b", str(bench), "-s", "always-answer", "-o", str(a))
    _invoke("run", "-b", str(bench), "-s", "always-abstain", "-o", str(b))
    out = tmp_path / "report"
    _invoke("report", str(a), str(b), "-o", str(out))  # the benchmark from run.json
    metrics = json.loads((out / "metrics.json").read_text())
    assert sorted(metrics["systems"]) == ["a", "b"]
    assert metrics["systems"]["a"]["counts"]["responses"] == 18
    assert metrics["systems"]["b"]["overall"]["abstention_recall"] == 1.0
    assert (out / "report.html").is_file() and (out / "report.md").is_file()
    # the same with --benchmark given: the same bytes
    _invoke("report", str(a), str(b), "-b", str(bench), "-o", str(tmp_path / "again"))
    for name in ("metrics.json", "report.md", "report.html"):
        assert (tmp_path / "again" / name).read_bytes() == (out / name).read_bytes(), name


def test_report_refuses_runs_of_two_benchmarks_without_one_named(
    bench: Path, tmp_path: Path
) -> None:
    other = tmp_path / "other"
    build(other, per_generator=3, seed=5)
    _invoke("run", "-b", str(bench), "-s", "always-answer", "-o", str(tmp_path / "a"))
    _invoke("run", "-b", str(other), "-s", "always-answer", "-o", str(tmp_path / "b"))
    result = CliRunner().invoke(
        app, ["report", str(tmp_path / "a"), str(tmp_path / "b"), "-o", str(tmp_path / "r")]
    )
    assert result.exit_code == 2
    assert result.output.strip() == "error: the runs name 2 benchmarks; pass --benchmark DIR"
    assert not (tmp_path / "r").exists()


def test_a_limit_run_is_extended_to_the_full_benchmark(bench: Path, tmp_path: Path) -> None:
    run = tmp_path / "run"
    _invoke("run", "-b", str(bench), "-s", "always-answer", "-o", str(run), "--limit", "4")
    first = (run / "responses.jsonl").read_bytes()
    assert len(first.splitlines()) == 4
    _invoke("run", "-b", str(bench), "-s", "always-answer", "-o", str(run))
    rows = read_rows(run / "responses.jsonl")
    assert len(rows) == 18 and len({r["item_id"] for r in rows}) == 18
    assert (run / "responses.jsonl").read_bytes().startswith(first)  # the 4 kept as written
    record = json.loads((run / "run.json").read_text())
    assert (record["items"], record["resumed_from"]) == (18, 4)
    # a shorter plan than the one run is still refused: it is not an extension
    result = CliRunner().invoke(
        app, ["run", "-b", str(bench), "-s", "always-answer", "-o", str(run), "--limit", "2"]
    )
    assert result.exit_code == 2 and "resuming needs the same benchmark items" in result.output
