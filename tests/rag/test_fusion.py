"""Reciprocal rank fusion against the seed's fixture and exact 1/(offset + rank) sums."""

from __future__ import annotations

import itertools
from pathlib import Path

import pytest
from typer.testing import CliRunner

from twinbench.cli import app
from twinbench.rag.fusion import fuse_runs, reciprocal_rank_fusion
from twinbench.rag.trec import read_run

DENSE = ["overview", "normalization", "bcnf"]
LEXICAL = ["bcnf", "exam", "normalization"]


def test_the_seeds_fixture_puts_bcnf_first() -> None:
    fused = reciprocal_rank_fusion([DENSE, LEXICAL])
    # bcnf 1/63 + 1/61 = 0.032266; normalization 1/62 + 1/63 = 0.032002;
    # overview 1/61 = 0.016393; exam 1/62 = 0.016129
    assert fused == [
        ("bcnf", 1 / 63 + 1 / 61),
        ("normalization", 1 / 62 + 1 / 63),
        ("overview", 1 / 61),
        ("exam", 1 / 62),
    ]


def test_offset() -> None:
    # offset 0: bcnf 1/3 + 1/1, overview 1/1, normalization 1/2 + 1/3, exam 1/2
    assert [p for p, _ in reciprocal_rank_fusion([DENSE, LEXICAL], offset=0)] == [
        "bcnf",
        "overview",
        "normalization",
        "exam",
    ]
    with pytest.raises(ValueError, match="offset"):
        reciprocal_rank_fusion([DENSE], offset=-1)


def test_a_repeated_id_votes_once_and_ties_go_by_passage_id() -> None:
    # "a" is listed twice: it votes once at rank 1, and "b" moves up to rank 2
    assert reciprocal_rank_fusion([["a", "a", "b"]]) == [("a", 1 / 61), ("b", 1 / 62)]
    # mirrored ranks tie exactly; the tie goes to the smaller passage id
    assert reciprocal_rank_fusion([["y", "x"], ["x", "y"]]) == [
        ("x", 1 / 61 + 1 / 62),
        ("y", 1 / 61 + 1 / 62),
    ]


def test_the_order_of_the_lists_does_not_change_a_score() -> None:
    lists = [["a", "b", "c", "d"], ["d", "c", "b", "a"], ["b", "d", "a", "c"], ["c", "a", "d"]]
    results = {tuple(reciprocal_rank_fusion(list(p))) for p in itertools.permutations(lists)}
    assert len(results) == 1


def test_fuse_runs_takes_every_query_of_every_run() -> None:
    dense = {"q1": [("overview", 0.9), ("normalization", 0.8), ("bcnf", 0.7)]}
    lexical = {"q1": [("exam", 7.0), ("bcnf", 9.0), ("normalization", 1.0)], "q2": [("z", 1.0)]}
    fused = fuse_runs([dense, lexical])
    assert fused["q1"][0] == ("bcnf", 1 / 63 + 1 / 61)  # lexical is ranked by its scores
    assert fused["q2"] == [("z", 1 / 61)]


def _run_file(path: Path, ids: list[str]) -> Path:
    path.write_text("".join(f"q1 Q0 {p} {r} {10 - r} tag\n" for r, p in enumerate(ids, 1)))
    return path


def test_cli_fuse_writes_a_run_that_reads_back_exactly(tmp_path: Path) -> None:
    dense, lexical = _run_file(tmp_path / "d.txt", DENSE), _run_file(tmp_path / "l.txt", LEXICAL)
    out = tmp_path / "out" / "fused.txt"
    result = CliRunner().invoke(app, ["rag", "fuse", str(dense), str(lexical), "--out", str(out)])
    assert result.exit_code == 0, result.output
    assert read_run(out) == {"q1": reciprocal_rank_fusion([DENSE, LEXICAL])}
    assert out.read_text().splitlines()[0].split()[2:4] == ["bcnf", "1"]
    assert out.read_text().split()[-1] == "rrf"
    assert not [p for p in out.parent.iterdir() if p.name != "fused.txt"]  # no temp file left


def test_cli_fuse_refuses_bad_input(tmp_path: Path) -> None:
    dense = _run_file(tmp_path / "d.txt", DENSE)
    repeated = _run_file(tmp_path / "r.txt", ["a", "b", "a"])
    out = tmp_path / "fused.txt"
    runner = CliRunner()
    result = runner.invoke(app, ["rag", "fuse", str(dense), str(repeated), "--out", str(out)])
    assert result.exit_code == 2
    assert result.stderr.startswith(f"error: {repeated}:3: 'a' ranked twice")
    result = runner.invoke(app, ["rag", "fuse", str(dense), "--out", str(out)])
    assert result.exit_code == 2 and "two or more run files" in result.stderr
    assert not out.exists()


def test_a_refused_fuse_leaves_the_existing_fused_run_byte_for_byte(tmp_path: Path) -> None:
    a, b, bad = tmp_path / "a.txt", tmp_path / "b.txt", tmp_path / "bad.txt"
    a.write_text("q Q0 x 1 2 t\nq Q0 y 2 1 t\n")
    b.write_text("q Q0 y 1 2 t\nq Q0 x 2 1 t\n")
    bad.write_text("q Q0 y 1 nan t\n")
    out = tmp_path / "fused.txt"
    assert CliRunner().invoke(app, ["rag", "fuse", str(a), str(b), "-o", str(out)]).exit_code == 0
    before = out.read_bytes()
    refused = CliRunner().invoke(app, ["rag", "fuse", str(a), str(bad), "-o", str(out)])
    assert refused.exit_code == 2
    assert refused.stderr.strip() == f"error: {bad}:1: score 'nan' is not a finite number"
    assert out.read_bytes() == before
