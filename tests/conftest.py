"""Shared fixtures: the shipped example benchmark, and a CLI runner."""

from __future__ import annotations

import json
from importlib import resources
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

EXAMPLES = Path(str(resources.files("twinbench") / "examples"))


def read_rows(path: Path) -> list[dict[str, Any]]:
    """Read a JSONL file into dicts."""
    return [json.loads(line) for line in path.read_text("utf-8").splitlines() if line.strip()]


def write_rows(path: Path, rows: list[dict[str, Any]]) -> Path:
    """Write dicts as JSONL and return the path."""
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), "utf-8")
    return path


@pytest.fixture
def example_items() -> list[dict[str, Any]]:
    """The shipped example items as dicts (a fresh copy per test)."""
    return read_rows(EXAMPLES / "items.jsonl")


@pytest.fixture
def runner() -> CliRunner:
    """A Typer CLI runner."""
    return CliRunner()
