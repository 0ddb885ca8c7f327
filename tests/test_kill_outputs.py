"""kill -9 during a command's commit leaves the old output set or the new one, never a mix.

`TWINBENCH_FAULT` makes the process SIGKILL itself at an exact point of the commit (files
staged; journal written; first file renamed), so the test stops it there every time instead
of racing a timer. After the kill, `outputs.recover` (which every command runs before it reads
or writes a folder) rolls a journalled commit forward and sweeps what the dead process left.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from twinbench.outputs import FAULT_ENV, JOURNAL, STAGE_PREFIX, recover
from twinbench.runner import check_manifest

POINTS = ("staged", "journal", "renamed")


def _twinbench(*args: str, fault: str | None = None) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k != FAULT_ENV}
    if fault:
        env[FAULT_ENV] = fault
    return subprocess.run(
        [sys.executable, "-m", "twinbench", *args], capture_output=True, text=True, env=env
    )


def _snapshot(folder: Path, names: tuple[str, ...]) -> dict[str, bytes]:
    return {name: (folder / name).read_bytes() for name in names if (folder / name).exists()}


def _leftovers(folder: Path) -> list[str]:
    return sorted(
        p.name
        for p in folder.iterdir()
        if p.name.startswith(STAGE_PREFIX) or p.name.endswith(".tmp") or p.name == JOURNAL
    )


def _killed(result: subprocess.CompletedProcess[str]) -> None:
    assert result.returncode == -signal.SIGKILL, result.stderr


BENCH_FILES = ("items.jsonl", "items.index.jsonl", "holdout/items.jsonl", "manifest.json")


@pytest.mark.parametrize("point", POINTS)
def test_build_killed_at_each_point(tmp_path: Path, point: str) -> None:
    folder = tmp_path / "bench"
    fresh = tmp_path / "fresh"
    assert _twinbench("build", "--out", str(folder), "--per-generator", "1").returncode == 0
    assert _twinbench("build", "--out", str(fresh), "--per-generator", "2").returncode == 0
    old, new = _snapshot(folder, BENCH_FILES), _snapshot(fresh, BENCH_FILES)
    assert old != new
    _killed(_twinbench("build", "--out", str(folder), "--per-generator", "2", fault=point))
    if point == "staged":  # killed before the journal: nothing of the new set is in place
        assert _snapshot(folder, BENCH_FILES) == old
    recover(folder)
    assert _snapshot(folder, BENCH_FILES) == (old if point == "staged" else new)
    assert _leftovers(folder) == [] and _leftovers(folder / "holdout") == []
    check_manifest(folder)  # every hash matches: a consistent set


def _report_folder(tmp_path: Path) -> Path:
    root = tmp_path / "eval"
    bench = root / "benchmark"
    assert _twinbench("build", "--out", str(bench), "--per-generator", "2").returncode == 0
    run = ["run", "-b", str(bench), "-o", str(root / "runs" / "a"), "-s", "always-abstain"]
    assert _twinbench(*run).returncode == 0
    return root


REPORT_FILES = ("metrics.json", "report.md", "report.html")


@pytest.mark.parametrize("point", POINTS)
def test_report_killed_at_each_point(tmp_path: Path, point: str) -> None:
    root = _report_folder(tmp_path)
    assert _twinbench("report", str(root)).returncode == 0
    old = _snapshot(root, REPORT_FILES)
    second = ["run", "-b", str(root / "benchmark"), "-o", str(root / "runs" / "b")]
    assert _twinbench(*second, "-s", "always-answer:first").returncode == 0
    _killed(_twinbench("report", str(root), fault=point))
    recover(root)
    after = _snapshot(root, REPORT_FILES)
    assert _leftovers(root) == []
    assert _twinbench("report", str(root)).returncode == 0
    new = _snapshot(root, REPORT_FILES)
    assert old != new and after == (old if point == "staged" else new)
    # the report's three files tell one story: the runs metrics.json names are those of the
    # report.md beside it
    systems = sorted(json.loads(after["metrics.json"])["systems"])
    assert systems == (["a"] if point == "staged" else ["a", "b"])
    assert ("| b |" in after["report.md"].decode()) == (point != "staged")


@pytest.mark.parametrize("point", POINTS)
def test_grade_out_killed_at_each_point(tmp_path: Path, point: str) -> None:
    root = _report_folder(tmp_path)
    items, responses = root / "benchmark" / "items.jsonl", root / "runs" / "a" / "responses.jsonl"
    out = tmp_path / "metrics"
    grade = ["grade", "-i", str(items), "-r", str(responses), "--out", str(out)]
    assert _twinbench(*grade, "--languages", "en").returncode == 0
    old = _snapshot(out, ("metrics.json", "metrics.md"))
    _killed(_twinbench(*grade, "--languages", "en,es", fault=point))
    recover(out)
    after = _snapshot(out, ("metrics.json", "metrics.md"))
    assert _twinbench(*grade, "--languages", "en,es").returncode == 0
    new = _snapshot(out, ("metrics.json", "metrics.md"))
    assert old != new and after == (old if point == "staged" else new)
    assert _leftovers(out) == []


def test_eval_killed_mid_commit_then_rerun_completes(tmp_path: Path) -> None:
    out = tmp_path / "eval"
    args = ("eval", "--out", str(out), "--system", "always-abstain", "--per-family", "2")
    _killed(_twinbench(*args, fault="journal"))  # the first commit: the benchmark's files
    done = _twinbench(*args)
    assert done.returncode == 0, done.stderr
    check_manifest(out / "benchmark")
    metrics = json.loads((out / "metrics.json").read_text())
    assert set(metrics["systems"]) == {
        "always-abstain_underspecified_state",
        "shortcut",
        "abstain-by-form",
    }
    assert _leftovers(out) == [] and _leftovers(out / "benchmark") == []


def test_temp_files_of_dead_processes_are_swept(tmp_path: Path) -> None:
    dead = subprocess.run(
        [sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True
    )
    pid = int(dead.stdout)
    (tmp_path / f".metrics.json.twb-{pid}-abc123.tmp").write_text("torn")
    (tmp_path / f"{STAGE_PREFIX}{pid}-beef").mkdir()
    alive = tmp_path / f".metrics.json.twb-{os.getpid()}-live.tmp"
    alive.write_text("being written")
    recover(tmp_path)
    assert sorted(p.name for p in tmp_path.iterdir()) == [alive.name]


def test_an_output_that_is_a_folder_is_refused_before_anything_moves(tmp_path: Path) -> None:
    root = _report_folder(tmp_path)
    (root / "report.html").mkdir()
    result = _twinbench("report", str(root))
    assert result.returncode == 2 and "Traceback" not in result.stderr
    assert f"{root / 'report.html'}: is a folder" in result.stderr
    assert not (root / "metrics.json").exists() and not (root / "report.md").exists()
    assert _leftovers(root) == []


def _files(folder: Path) -> dict[str, bytes]:
    return {
        str(p.relative_to(folder)): p.read_bytes()
        for p in sorted(folder.rglob("*"))
        if p.is_file() and "__pycache__" not in p.parts
    }


def _surfaces(tmp_path: Path) -> dict[str, tuple[list[str], list[str], Path]]:
    """Per newer surface: (a first command, a second that writes other bytes, its folder)."""
    from rag.test_beir_import import beir_folder
    from twinbench.rag.corpus import COURSE_NOTES as notes

    beir = beir_folder(tmp_path)
    benches = [tmp_path / "bench1", tmp_path / "bench2"]
    for n, bench in enumerate(benches, start=1):
        assert _twinbench("build", "--out", str(bench), "--per-generator", str(n)).returncode == 0
    ret = str(tmp_path / "ret" / "bm25.txt")
    return {
        "rag import beir": (
            ["rag", "import", "beir", str(beir), "--out", str(tmp_path / "imp")],
            ["rag", "import", "beir", str(beir), "--out", str(tmp_path / "imp"), "--version", "v2"],
            tmp_path / "imp",
        ),
        "rag retrieve": (
            ["rag", "retrieve", str(notes), "--out", ret],
            ["rag", "retrieve", str(notes), "--out", ret, "--k", "3"],
            tmp_path / "ret",
        ),
        "export lm-eval": (
            ["export", "lm-eval", str(benches[0]), "--out", str(tmp_path / "task"), "--name", "t"],
            ["export", "lm-eval", str(benches[1]), "--out", str(tmp_path / "task"), "--name", "t"],
            tmp_path / "task",
        ),
    }  # fmt: skip


@pytest.mark.parametrize("surface", ["rag import beir", "rag retrieve", "export lm-eval"])
def test_newer_surfaces_killed_mid_commit_keep_the_old_set(tmp_path: Path, surface: str) -> None:
    first, second, folder = _surfaces(tmp_path)[surface]
    assert _twinbench(*first).returncode == 0
    old = _files(folder)
    _killed(_twinbench(*second, fault="staged"))
    recover(folder)
    assert _files(folder) == old and _leftovers(folder) == []
    # killed after its journal, the commit rolls forward: the whole new set
    _killed(_twinbench(*second, fault="journal"))
    recover(folder)
    new = _files(folder)
    assert new != old and _leftovers(folder) == []
    assert _twinbench(*second).returncode == 0 and set(_files(folder)) == set(new)
