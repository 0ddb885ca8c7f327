"""Shared fixtures: the shipped example benchmark, a CLI runner, and the shared data folder."""

from __future__ import annotations

import json
import os
from importlib import resources
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

# the tests never reach a model or dataset hub (nothing here is downloaded); set before any
# test imports huggingface_hub, and inherited by the tools the tests start (lm-eval, inspect)
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

EXAMPLES = Path(str(resources.files("twinbench") / "examples"))
#: environment variable naming the shared data folder (default: ../shared/data of the repo)
SHARED_DATA_ENV = "TWINBENCH_SHARED_DATA"
#: set to 1 to fail, not skip, tests whose shared data is missing (CI with the data mounted)
REQUIRE_SHARED_DATA_ENV = "TWINBENCH_REQUIRE_SHARED_DATA"


def shared_data_root() -> Path:
    """The shared data folder: $TWINBENCH_SHARED_DATA, else ../shared/data beside the repo."""
    override = os.environ.get(SHARED_DATA_ENV)
    if override:
        return Path(override)
    return Path(__file__).resolve().parents[1].parent / "shared" / "data"


def shared_data(name: str) -> Path:
    """The folder `name` of the shared data; skips the test when it is absent (fails instead
    when TWINBENCH_REQUIRE_SHARED_DATA=1). Data from other repositories is never committed
    here, so tests that need it read it from there."""
    folder = shared_data_root() / name
    if folder.is_dir():
        return folder
    reason = (
        f"shared data {name!r} is not at {folder} (third-party data, not committed; "
        f"set {SHARED_DATA_ENV} to the folder that holds it)"
    )
    if os.environ.get(REQUIRE_SHARED_DATA_ENV) == "1":
        pytest.fail(reason)
    pytest.skip(reason)


#: set to 1 to fail, not skip, tests whose system tool (Chromium, ChromeDriver) is missing
REQUIRE_TOOLS_ENV = "TWINBENCH_REQUIRE_TOOLS"


def system_tool(name: str) -> str:
    """The path of system tool `name` (e.g. chromium); skips the test when it is not installed
    (fails instead when TWINBENCH_REQUIRE_TOOLS=1, as .ci/run sets after installing it)."""
    import shutil

    path = shutil.which(name)
    if path:
        return path
    reason = f"{name} is not installed (Debian: chromium, chromium-driver; .ci/run installs them)"
    if os.environ.get(REQUIRE_TOOLS_ENV) == "1":
        pytest.fail(reason)
    pytest.skip(reason)


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


def interruptible() -> None:
    """`preexec_fn` for a child the test will Ctrl-C: SIGINT back to its default, so Python
    raises KeyboardInterrupt on it. A process started from a script run in the background
    (`bash script &`, nohup, some CI runners) inherits SIGINT ignored, and Python then never
    installs its handler: without this a Ctrl-C test fails wherever pytest itself was started
    in the background."""
    import signal

    signal.signal(signal.SIGINT, signal.SIG_DFL)
