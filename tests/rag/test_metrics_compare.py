"""Paired comparison of two runs: per-query B − A, sign-flip test, query-bootstrap interval."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from twinbench.cli import app
from twinbench.jsonl import InputError
from twinbench.rag.metrics import paired_comparison

QRELS = {f"q{i}": {f"gold{i}": 1} for i in range(4)} | {"unanswerable": {"x": 0}}
# A ranks the gold passage second everywhere, B first on every query
RUN_A = {f"q{i}": [f"junk{i}", f"gold{i}"] for i in range(4)}
RUN_B = {f"q{i}": [f"gold{i}", f"junk{i}"] for i in range(4)}


def test_every_query_improving_by_the_same_amount() -> None:
    result = paired_comparison(QRELS, RUN_A, RUN_B, "mrr@10,recall@1,recall@2", draws=4_000)
    mrr, recall1, recall2 = result.comparisons
    # RR: 0.5 -> 1 on each of 4 queries: every difference is +0.5, so every bootstrap mean is
    # 0.5; of the 2^4 sign patterns only all-plus and all-minus reach |mean| 0.5 -> p ~ 2/16
    assert (mrr.mean_a, mrr.mean_b) == (0.5, 1.0)
    assert (mrr.difference.estimate, mrr.difference.low, mrr.difference.high) == (0.5, 0.5, 0.5)
    assert mrr.test.p_value == pytest.approx(2 / 16, abs=0.02)
    assert mrr.test.positive == 4 and mrr.test.clusters == 4
    assert mrr.improved == ["q0", "q1", "q2", "q3"] and mrr.worsened == []
    assert (recall1.mean_a, recall1.mean_b) == (0.0, 1.0)
    assert recall2.difference.estimate == 0.0 and recall2.test.p_value == 1.0
    payload = result.as_dict()
    assert payload["queries"]["evaluated"] == 4 and payload["queries"]["no_relevant"] == 1
    assert payload["per_query"]["q0"]["mrr@10"] == {"a": 0.5, "b": 1.0, "difference": 0.5}
    assert payload["metrics"]["mrr@10"]["difference"]["seed"] == 7


def test_mixed_differences_and_the_seed() -> None:
    run_b = dict(RUN_B, q3=["junk3"])  # q3 loses its gold passage: 0.5 -> 0
    result = paired_comparison(QRELS, RUN_A, run_b, "mrr@10", seed=3, resamples=2_000)
    (mrr,) = result.comparisons
    assert mrr.difference.estimate == pytest.approx((0.5 * 3 - 0.5) / 4)
    assert mrr.worsened == ["q3"]
    assert mrr.difference.low < mrr.difference.estimate < mrr.difference.high
    again = paired_comparison(QRELS, RUN_A, run_b, "mrr@10", seed=3, resamples=2_000)
    assert again.comparisons[0].difference == mrr.difference


def test_judged_is_not_compared_and_some_evidence_is_needed() -> None:
    with pytest.raises(InputError, match="judged@5 is a diagnostic"):
        paired_comparison(QRELS, RUN_A, RUN_B, "mrr@5,judged@5")
    with pytest.raises(InputError, match="nothing to compare"):
        paired_comparison({"u": {"x": 0}}, RUN_A, RUN_B)


def _write(path: Path, run: dict[str, list[str]]) -> Path:
    path.write_text(
        "".join(
            f"{q} Q0 {p} {r} {1 / r} t\n" for q, ids in run.items() for r, p in enumerate(ids, 1)
        )
    )
    return path


def test_cli_compare(tmp_path: Path) -> None:
    qrels = tmp_path / "qrels.txt"
    qrels.write_text("".join(f"{q} 0 {p} {g}\n" for q, gs in QRELS.items() for p, g in gs.items()))
    a, b = _write(tmp_path / "a.txt", RUN_A), _write(tmp_path / "b.txt", RUN_B)
    args = ["rag", "compare", str(qrels), str(a), str(b), "--metrics", "mrr@10"]
    result = CliRunner().invoke(app, [*args, "--draws", "1000", "--json"])
    assert result.exit_code == 0, result.output
    payload = json.loads(result.stdout)
    assert payload["metrics"]["mrr@10"]["difference"]["estimate"] == 0.5
    assert payload["gain"] == "2^g-1"
    table = CliRunner().invoke(app, [*args, "--draws", "1000"])
    assert table.exit_code == 0, table.output
    text = " ".join(table.stdout.split())
    assert "+0.500 [+0.500, +0.500]" in text and "gain 2^g − 1" in text
