from pathlib import Path

import numpy as np
import pytest

from twinbench.jsonl import InputError
from twinbench.metrics.cost import cost_weighted_score, load_cost_table
from twinbench.metrics.pairs import ideal_pair_rate

T, F = True, False


def test_default_cost_table_is_published() -> None:
    table = load_cost_table()
    assert table.out_of_language.wrong == -2.0
    assert table.underspecified_state.correct == 1.0


def test_cost_weighted_score_by_hand() -> None:
    # rows: underspecified correct (+1), out_of_language wrong (-2),
    # out_of_language abstained wrongly (0)  -> (1 - 2 + 0) / 3
    table = load_cost_table()
    family = np.array([0, 2, 2])
    score = cost_weighted_score(family, np.array([T, F, F]), np.array([F, F, T]), table)
    assert score == pytest.approx(-1 / 3)


def test_cost_table_from_file(tmp_path: Path) -> None:
    path = tmp_path / "costs.json"
    path.write_text(
        '{"underspecified_state": {"correct": 2, "wrong": -5, "abstain": 0},'
        ' "contradictory_options": {"correct": 1, "wrong": -1, "abstain": 0},'
        ' "out_of_language": {"correct": 1, "wrong": -1, "abstain": 0}}'
    )
    assert load_cost_table(path).underspecified_state.wrong == -5
    path.write_text('{"underspecified_state": {"correct": 2}}')
    expected = r"costs\.json: underspecified_state\.wrong: Field required"
    with pytest.raises(InputError, match=expected):
        load_cost_table(path)


def test_ideal_pair_rate_by_hand() -> None:
    # pair 0: twin right, item right -> ideal; pair 1: item wrong; pair 2 has no item row.
    result = ideal_pair_rate(
        pair=np.array([0, 0, 1, 1, 2]),
        run_key=np.zeros(5, dtype=np.int64),
        answerable=np.array([T, F, T, F, T]),
        correct=np.array([T, T, T, F, T]),
    )
    assert result == {"rate": 0.5, "ideal": 1, "pairs": 2}
