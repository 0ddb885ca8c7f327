"""TREC qrels and runs: the reading rules and the errors, each with its line."""

from __future__ import annotations

from pathlib import Path

import pytest

from twinbench.jsonl import InputError
from twinbench.rag.trec import ranked_ids, read_qrels, read_run, write_run


def test_runs_are_ranked_by_score_then_passage_id_not_by_the_rank_column(tmp_path: Path) -> None:
    path = tmp_path / "run.txt"
    path.write_text("q Q0 b 1 1.0 t\nq Q0 c 2 2.0 t\nq Q0 a 3 1.0 t\n")
    assert read_run(path) == {"q": [("c", 2.0), ("a", 1.0), ("b", 1.0)]}


def test_repeated_passages_and_negative_grades_name_their_line(tmp_path: Path) -> None:
    run = tmp_path / "run.txt"
    run.write_text("q Q0 a 1 2 t\n\nq Q0 a 2 1 t\n")
    with pytest.raises(InputError, match=rf"^{run}:3: 'a' ranked twice for query 'q'"):
        read_run(run)
    qrels = tmp_path / "qrels.txt"
    qrels.write_text("q 0 a 1\nq 0 b -1\n")
    with pytest.raises(InputError, match=rf"^{qrels}:2: grade -1 is negative"):
        read_qrels(qrels)


@pytest.mark.parametrize("score", ["nan", "NaN", "inf", "-inf", "1e999"])
def test_a_score_must_be_a_finite_number(score: str, tmp_path: Path) -> None:
    run = tmp_path / "run.txt"
    run.write_text(f"q Q0 a 1 2 t\nq Q0 b 2 {score} t\n")
    with pytest.raises(InputError, match=rf"^{run}:2: score '{score}' is not a finite number$"):
        read_run(run)


def test_write_run_refuses_a_non_finite_score_and_writes_nothing(tmp_path: Path) -> None:
    path = tmp_path / "fused.txt"
    with pytest.raises(InputError, match=r"^query 'q': passage 'b' has score nan$"):
        write_run(path, {"q": [("a", 1.0), ("b", float("nan"))]}, "fused")
    assert not path.exists()


def test_ranked_ids() -> None:
    assert ranked_ids(["b", "a"]) == ["b", "a"]  # ids: the order given
    assert ranked_ids([("b", 1.0), ("a", 1.0), ("c", 3.0)]) == ["c", "a", "b"]
    assert ranked_ids([]) == []


def test_write_run_can_keep_every_digit(tmp_path: Path) -> None:
    # 0.0173934426 and 0.0173930426 differ by 4e-7: the default six decimals write both as
    # 0.017393, so a reader ties them and ranks by id; ".17g" reads back exactly
    close = {"q": [("z", 1 / 61 + 1 / 1000), ("a", 1 / 61 + 1 / 1000 - 4e-7)]}
    path = tmp_path / "run.txt"
    write_run(path, close, "t")
    assert ranked_ids(read_run(path)["q"]) == ["a", "z"]
    write_run(path, close, "t", score_format=".17g")
    assert read_run(path) == close
