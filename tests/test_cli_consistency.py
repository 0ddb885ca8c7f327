"""One name per concept across commands (issue 24): -o/-b, --json, --version, -h, wide tables."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import typer
from typer.testing import CliRunner

from twinbench import __version__
from twinbench.builder import build
from twinbench.cli import app


def _commands(command: Any = None, prefix: str = "") -> list[tuple[str, Any]]:
    command = command or typer.main.get_command(app)
    if hasattr(command, "commands"):
        return [
            found
            for name, sub in sorted(command.commands.items())
            for found in _commands(sub, f"{prefix} {name}")
        ]
    return [(prefix.strip(), command)]


def test_every_out_and_benchmark_option_has_its_short_form() -> None:
    checked = 0
    for name, command in _commands():
        for param in command.params:
            short = {"out": "-o", "benchmark": "-b"}.get(param.name or "")
            if short and getattr(param, "opts", None) and param.opts[0].startswith("--"):
                assert short in param.opts, (name, param.opts)
                checked += 1
    assert checked >= 20  # build, run, eval, report, compare, grade, rag ..., audit ...


def test_commands_that_print_results_take_json() -> None:
    printing = {"build", "run", "eval", "report", "compare", "grade", "validate", "systems"}
    printing |= {"rag eval", "rag ablate", "rag score", "rag metrics", "audit similarity"}
    for name, command in _commands():
        if name in printing:
            assert "--json" in {o for p in command.params for o in getattr(p, "opts", [])}, name


def test_version_and_short_help() -> None:
    runner = CliRunner()
    assert runner.invoke(app, ["--version"]).output == f"twinbench {__version__}\n"
    for args in (["-h"], ["run", "-h"], ["rag", "fuse", "-h"]):
        result = runner.invoke(app, args)
        assert result.exit_code == 0 and "Usage:" in result.output, args


def test_json_output_is_parseable_and_alone_on_stdout(tmp_path: Path) -> None:
    runner = CliRunner()
    bench = tmp_path / "bench"
    built = runner.invoke(app, ["build", "-o", str(bench), "--per-generator", "2", "--json"])
    manifest = json.loads(built.stdout)
    assert manifest == json.loads((bench / "manifest.json").read_text())
    ran = runner.invoke(
        app, ["run", "-b", str(bench), "-s", "always-abstain", "-o", str(tmp_path / "r"), "--json"]
    )
    record = json.loads(ran.stdout)
    assert (
        record["status"] == "finished"
        and record["responses"]
        == manifest["counts"]["public"]["family"]["underspecified_state"]["answerable"] * 6
    )
    valid = json.loads(
        runner.invoke(app, ["validate", str(bench / "items.jsonl"), "--json"]).stdout
    )
    assert valid == {"files": [str(bench / "items.jsonl")], "ok": True, "problems": []}
    listed = json.loads(runner.invoke(app, ["systems", "--json"]).stdout)
    assert any(spec.startswith("smollm2") for spec in listed)
    assert any(spec.startswith("openai") for spec in listed)


def test_tables_are_not_cut_at_80_columns_when_piped(tmp_path: Path) -> None:
    """Piped (not a terminal), the consoles are 200 columns wide, or $COLUMNS; a table as
    wide as eval's metrics table then prints whole ("underspecified_state", not "underspe…")."""
    probe = "from twinbench.cli.common import console, errors; print(console.width, errors.width)"
    env = {k: v for k, v in os.environ.items() if k != "COLUMNS"}
    piped = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, env=env)
    assert piped.stdout.split() == ["200", "200"]
    narrow = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, env={**env, "COLUMNS": "120"}
    )
    assert narrow.stdout.split() == ["120", "120"]
    from twinbench import api

    build(tmp_path / "bench", per_generator=2)
    runs = [tmp_path / "abstain", tmp_path / "answer"]
    api.run("always-abstain", tmp_path / "bench", runs[0])
    api.run("always-answer", tmp_path / "bench", runs[1])

    def compare(columns: dict[str, str]) -> str:
        cmd = [sys.executable, "-m", "twinbench", "compare", *map(str, runs), "-o"]
        cmd.append(str(tmp_path / f"c{len(columns)}"))
        done = subprocess.run(cmd, capture_output=True, text=True, env={**env, **columns})
        assert done.returncode == 0, done.stderr
        return done.stdout

    assert "…" in compare({"COLUMNS": "80"})  # what the issue saw: "underspe…"
    shown = compare({})
    assert "underspecified_state" in shown and "contradictory_options" in shown
    assert "…" not in shown
