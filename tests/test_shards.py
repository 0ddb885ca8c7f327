"""Shards of one plan merge into the run a single process writes; bad merges are refused."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from conftest import read_rows
from twinbench.builder import build
from twinbench.cli import app
from twinbench.runner import RunPlan, load_benchmark


@pytest.fixture(scope="module")
def bench(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("bench")
    build(out, per_generator=2)
    return out


def _run(runner: CliRunner, bench: Path, out: Path, *extra: str) -> None:
    args = [
        "run",
        "-b",
        str(bench),
        "-s",
        "always-answer:random",
        "--seed",
        "3",
        "--trials",
        "2",
        "--permutations",
        "2",
        "--out",
        str(out),
        *extra,
    ]
    result = runner.invoke(app, args)
    assert result.exit_code == 0, result.output


def _strip(rows: list[dict]) -> list[dict]:
    return [{k: v for k, v in r.items() if k != "latency_ms"} for r in rows]


def test_shards_partition_the_plan(bench: Path) -> None:
    items = load_benchmark(bench)
    plan = RunPlan(items, trials=2, permutations=3)
    everything = [(i.id, t, p) for i, t, p in plan.all_tasks()]
    slices = [
        [(i.id, t, p) for i, t, p in RunPlan(items, 2, 3, shard=(k, 4)).tasks()] for k in range(4)
    ]
    assert sorted(k for s in slices for k in s) == sorted(everything)  # disjoint, complete
    assert [len(s) for s in slices] == [len(everything[k::4]) for k in range(4)]
    assert slices[1] == everything[1::4]


def test_merged_shards_equal_a_single_process_run(bench: Path, tmp_path: Path) -> None:
    runner = CliRunner()
    _run(runner, bench, tmp_path / "single")
    for k in range(3):
        _run(runner, bench, tmp_path / f"s{k}", "--shard", f"{k}/3")
    shards = [str(tmp_path / f"s{k}") for k in (2, 0, 1)]  # any order
    result = runner.invoke(app, ["merge", *shards, "--out", str(tmp_path / "merged")])
    assert result.exit_code == 0, result.output
    single = read_rows(tmp_path / "single" / "responses.jsonl")
    merged = read_rows(tmp_path / "merged" / "responses.jsonl")
    assert _strip(merged) == _strip(single)  # the same rows in the same (plan) order
    graded = runner.invoke(
        app,
        [
            "grade",
            "--items",
            str(bench / "items.jsonl"),
            "--responses",
            str(tmp_path / "merged" / "responses.jsonl"),
            "--json",
        ],
    )
    alone = runner.invoke(
        app,
        [
            "grade",
            "--items",
            str(bench / "items.jsonl"),
            "--responses",
            str(tmp_path / "single" / "responses.jsonl"),
            "--json",
        ],
    )
    assert graded.exit_code == alone.exit_code == 0
    assert graded.output.replace("merged", "X") == alone.output.replace("single", "X")


def test_bad_merges_are_refused(bench: Path, tmp_path: Path) -> None:
    runner = CliRunner()
    for k in range(2):
        _run(runner, bench, tmp_path / f"s{k}", "--shard", f"{k}/2")
    missing = runner.invoke(app, ["merge", str(tmp_path / "s0"), "--out", str(tmp_path / "m1")])
    assert missing.exit_code == 2
    assert "shards 0/2 are not each of 0..1 of 2 once" in missing.output
    twice = runner.invoke(
        app, ["merge", str(tmp_path / "s0"), str(tmp_path / "s0"), "--out", str(tmp_path / "m2")]
    )
    assert twice.exit_code == 2
    other = tmp_path / "other"
    args = [
        "run",
        "-b",
        str(bench),
        "-s",
        "always-answer:random",
        "--seed",
        "4",
        "--trials",
        "2",
        "--permutations",
        "2",
        "--out",
        str(other),
        "--shard",
        "1/2",
    ]
    assert runner.invoke(app, args).exit_code == 0
    mixed = runner.invoke(
        app, ["merge", str(tmp_path / "s0"), str(other), "--out", str(tmp_path / "m3")]
    )
    assert mixed.exit_code == 2
    assert "another plan (seed differs" in mixed.output
    resumed = runner.invoke(
        app,
        [
            "run",
            "-b",
            str(bench),
            "-s",
            "always-answer:random",
            "--seed",
            "3",
            "--trials",
            "2",
            "--permutations",
            "2",
            "--out",
            str(tmp_path / "s0"),
            "--shard",
            "1/2",
        ],
    )
    assert resumed.exit_code == 2
    assert "resuming needs the same --shard" in resumed.output
    assert not (tmp_path / "m1").exists() and not (tmp_path / "m3").exists()


def test_whole_run_limits_are_shared_out_exactly(bench: Path) -> None:
    from twinbench.runner import split_limits

    plan = RunPlan(load_benchmark(bench), max_rps=9.0, max_tokens_per_s=300.0)
    shares = [split_limits(plan, 5, index, 3) for index in range(3)]
    # 5 slots over 3 processes: 2 + 2 + 1; each rate in thirds
    assert [s.window for s in shares] == [2, 2, 1]
    assert [(s.max_rps, s.max_tokens_per_s) for s in shares] == [(3.0, 100.0)] * 3
    assert shares[2].limits == {
        "whole_run": {"concurrency": 5, "max_rps": 9.0, "max_tokens_per_s": 300.0},
        "processes": 3,
        "this_process": {"concurrency": 1, "max_rps": 3.0, "max_tokens_per_s": 100.0},
    }
    # fewer slots than processes: each still sends, one at a time
    assert [split_limits(plan, 2, i, 3).window for i in range(3)] == [1, 1, 1]
    unlimited = split_limits(RunPlan([]), 4, 0, 2)
    assert (unlimited.max_rps, unlimited.max_tokens_per_s, unlimited.window) == (None, None, 2)


def test_a_manual_shard_records_its_share_of_the_limits(bench: Path, tmp_path: Path) -> None:
    import json

    runner = CliRunner()
    _run(runner, bench, tmp_path / "s", "--shard", "1/2", "--max-rps", "500", "--concurrency", "3")
    record = json.loads((tmp_path / "s" / "run.json").read_text())
    assert record["limits"] == {
        "whole_run": {"concurrency": 3, "max_rps": 500.0, "max_tokens_per_s": None},
        "processes": 2,
        "this_process": {"concurrency": 1, "max_rps": 250.0, "max_tokens_per_s": None},
    }


def _lines(path: Path) -> list[bytes]:
    return path.read_bytes().splitlines(keepends=True)


def test_merge_refuses_rows_that_are_not_the_shards_slice(bench: Path, tmp_path: Path) -> None:
    runner = CliRunner()
    for k in range(2):
        _run(runner, bench, tmp_path / f"s{k}", "--shard", f"{k}/2")
    first, second = (tmp_path / f"s{k}" / "responses.jsonl" for k in range(2))
    a, b = _lines(first), _lines(second)
    first.write_bytes(b"".join([b[0], *a[1:]]))  # shard 0's first row swapped for shard 1's
    second.write_bytes(b"".join([a[0], *b[1:]]))
    merge = ["merge", str(tmp_path / "s0"), str(tmp_path / "s1"), "--out", str(tmp_path / "m")]
    swapped = runner.invoke(app, merge)
    assert swapped.exit_code == 2
    assert f"{first}: not shard 0/2's slice (1 missing, 1 not its own)" in swapped.output
    first.write_bytes(b"".join(a[:-1]))  # shard 0 short of its last row
    second.write_bytes(b"".join(b))
    short = runner.invoke(app, merge)
    assert short.exit_code == 2
    assert f"{first}: not shard 0/2's slice (1 missing, 0 not its own)" in short.output
    assert not (tmp_path / "m").exists()


def test_a_shard_out_of_plan_order_is_refused_until_it_is_run_again(
    bench: Path, tmp_path: Path
) -> None:
    runner = CliRunner()
    _run(runner, bench, tmp_path / "single")
    for k in range(2):
        _run(runner, bench, tmp_path / f"s{k}", "--shard", f"{k}/2")
    path = tmp_path / "s1" / "responses.jsonl"
    in_order = path.read_bytes()
    path.write_bytes(b"".join(reversed(_lines(path))))  # as a streamed shard once wrote it
    merge = ["merge", str(tmp_path / "s0"), str(tmp_path / "s1"), "--out", str(tmp_path / "m")]
    refused = runner.invoke(app, merge)
    assert refused.exit_code == 2
    assert f"{path}: shard 1/2's rows, but not in plan order" in refused.output
    assert "run the shard's command again" in refused.output
    _run(runner, bench, tmp_path / "s1", "--shard", "1/2")  # nothing to send: rewritten in order
    assert path.read_bytes() == in_order
    assert runner.invoke(app, merge).exit_code == 0
    merged = read_rows(tmp_path / "m" / "responses.jsonl")
    assert _strip(merged) == _strip(read_rows(tmp_path / "single" / "responses.jsonl"))


def test_shards_of_a_benchmark_without_an_index_merge_into_the_single_run(
    bench: Path, tmp_path: Path
) -> None:
    """A folder built before the items index: every shard loads every item, as before."""
    old = tmp_path / "old"
    shutil.copytree(bench, old)
    (old / "items.index.jsonl").unlink()
    manifest = json.loads((old / "manifest.json").read_text())
    del manifest["files"]["items.index.jsonl"]
    (old / "manifest.json").write_text(json.dumps(manifest))
    runner = CliRunner()
    _run(runner, bench, tmp_path / "single")
    for k in range(3):
        _run(runner, old, tmp_path / f"s{k}", "--shard", f"{k}/3")
    merge = ["merge", *(str(tmp_path / f"s{k}") for k in range(3)), "--out", str(tmp_path / "m")]
    assert runner.invoke(app, merge).exit_code == 0
    merged = read_rows(tmp_path / "m" / "responses.jsonl")
    assert _strip(merged) == _strip(read_rows(tmp_path / "single" / "responses.jsonl"))
