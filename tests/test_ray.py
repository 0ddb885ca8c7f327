"""`twinbench run --executor ray` on a real local Ray cluster equals a single-process run."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from typer.testing import CliRunner

from conftest import REQUIRE_TOOLS_ENV, read_rows
from twinbench.builder import build
from twinbench.cli import app


def _ray() -> None:
    try:
        import ray  # noqa: F401
    except ImportError:
        reason = "ray is not installed (pip install 'twinbench[ray]'; .ci/run installs it)"
        if os.environ.get(REQUIRE_TOOLS_ENV) == "1":
            pytest.fail(reason)
        pytest.skip(reason)


def _strip(rows: list[dict]) -> list[dict]:
    return [{k: v for k, v in r.items() if k != "latency_ms"} for r in rows]


def test_a_ray_run_on_a_local_cluster_equals_a_single_process_run(tmp_path: Path) -> None:
    _ray()
    bench = tmp_path / "bench"
    build(bench, per_generator=2)
    runner = CliRunner()
    common = ["-b", str(bench), "-s", "always-answer:random", "--seed", "5", "--trials", "2"]
    single = runner.invoke(app, ["run", *common, "--out", str(tmp_path / "single")])
    assert single.exit_code == 0, single.output
    # a local cluster of two workers, started for the run and stopped after it
    spread = runner.invoke(
        app,
        ["run", *common, "--executor", "ray", "--shards", "2", "--out", str(tmp_path / "ray")],
    )
    assert spread.exit_code == 0, spread.output
    assert _strip(read_rows(tmp_path / "ray" / "responses.jsonl")) == _strip(
        read_rows(tmp_path / "single" / "responses.jsonl")
    )
    shards = sorted(p.name for p in (tmp_path / "ray" / "shards").iterdir())
    assert shards == ["0-of-2", "1-of-2"]
    import json

    record = json.loads((tmp_path / "ray" / "run.json").read_text())
    assert record["status"] == "finished" and len(record["merged_from"]) == 2
