"""`twinbench eval` takes any system `run` takes (issue 24): HTTP options, several systems in one
command, and defaults from twinbench.toml, against a real server on 127.0.0.1."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from conftest import read_rows
from systems.servers import serve, systemone_handler
from twinbench.cli import app


def test_eval_runs_an_http_system_and_another_in_one_command(tmp_path: Path) -> None:
    out = tmp_path / "out"
    with serve(systemone_handler(jev=True)) as (url, log):
        args = ["eval", "-o", str(out), "-s", "jev", "-s", "always-answer", "--base-url", url]
        result = CliRunner().invoke(app, [*args, "--per-family", "2", "--concurrency", "2"])
    assert result.exit_code == 0, result.output
    runs = sorted(p.name for p in (out / "runs").iterdir())
    assert runs == ["abstain-by-form", "always-answer_first", "jev", "shortcut"]
    sent = read_rows(out / "runs" / "jev" / "responses.jsonl")
    assert len(sent) == 12 == len(log)  # 2 pairs x 3 families, each item once
    assert {r["status"] for r in sent} == {"ok"}
    for name in ("jev", "always-answer_first"):
        metrics = json.loads((out / "runs" / name / "metrics.json").read_text())
        assert metrics["counts"]["responses"] == 12
    assert "2/4 running jev (1 of 2)" in result.output
    assert "2/4 running always-answer:first (2 of 2)" in result.output
    assert {"jev", "always-answer_first"} <= set(
        json.loads((out / "metrics.json").read_text())["systems"]
    )


def test_eval_reads_its_defaults_from_twinbench_toml(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with serve(systemone_handler(jev=True)) as (url, log):
        (tmp_path / "twinbench.toml").write_text(
            f'[eval]\nsystem = "jev"\nbase_url = "{url}"\nper_family = 1\nout = "here"\n'
        )
        monkeypatch.chdir(tmp_path)
        result = CliRunner().invoke(app, ["eval"])
        # the command line wins over the file
        again = CliRunner().invoke(app, ["eval", "--per-family", "2", "-o", "there"])
    assert result.exit_code == 0, result.output
    assert result.output.startswith("defaults from twinbench.toml")
    assert len(read_rows(tmp_path / "here" / "runs" / "jev" / "responses.jsonl")) == 6
    assert again.exit_code == 0, again.output
    assert len(read_rows(tmp_path / "there" / "runs" / "jev" / "responses.jsonl")) == 12
    assert len(log) == 18


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ("[eval]\nsystme = 'jev'\n", "[eval] systme: Extra inputs are not permitted"),
        ("[eval]\nconcurrency = 0\n", "[eval] concurrency:"),
        ("[evaluate]\n", "unknown table 'evaluate' (only [eval] is read)"),
        ("[eval\n", "not valid TOML"),
    ],
)
def test_a_bad_config_is_one_line_naming_the_file(tmp_path: Path, text: str, problem: str) -> None:
    config = tmp_path / "cfg.toml"
    config.write_text(text)
    result = CliRunner().invoke(app, ["eval", "--config", str(config), "-o", str(tmp_path / "o")])
    assert result.exit_code == 2, result.output
    line = result.output.strip()
    assert line.startswith(f"error: {config}: ") and problem in line and "\n" not in line
    assert not (tmp_path / "o").exists()
