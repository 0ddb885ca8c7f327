import re
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from conftest import EXAMPLES
from twinbench.cli import app
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


# --- bad cost tables: `twinbench grade --costs` exits 2 naming the file and the field --------

FAMILY_NAMES = ("underspecified_state", "contradictory_options", "out_of_language")


def _toml(correct: str) -> str:
    return "".join(
        f"[{name}]\ncorrect = {correct if n == 1 else '1.0'}\nwrong = -1.0\nabstain = 0.0\n"
        for n, name in enumerate(FAMILY_NAMES)
    )


def _json(correct: str) -> str:
    rows = [
        f'"{name}": {{"correct": {correct if n == 1 else "1"}, "wrong": -1, "abstain": 0}}'
        for n, name in enumerate(FAMILY_NAMES)
    ]
    return "{\n" + ",\n".join(rows) + "\n}\n"


FIELD = r"contradictory_options\.correct: "
BAD_TABLES = [
    ("costs.toml", _toml("nan"), FIELD + "Input should be a finite number$"),
    ("costs.toml", _toml("inf"), FIELD + "Input should be a finite number$"),
    ("costs.toml", _toml("-inf"), FIELD + "Input should be a finite number$"),
    ("costs.toml", _toml("1e999"), FIELD + "Input should be a finite number$"),
    ("costs.toml", _toml("true"), FIELD + "Input should be a valid number$"),
    ("costs.toml", _toml('"1.0"'), FIELD + "Input should be a valid number$"),
    (
        "costs.toml",
        _toml("1.0 x"),
        r"costs\.toml:6: cannot parse cost table \(Expected newline.*statement\)$",
    ),
    ("costs.json", _json("NaN"), FIELD + "Input should be a finite number$"),
    ("costs.json", _json("Infinity"), FIELD + "Input should be a finite number$"),
    ("costs.json", _json("1e999"), FIELD + "Input should be a finite number$"),
    ("costs.json", _json("null"), FIELD + "Input should be a valid number$"),
    ("costs.json", _json("1,"), r"costs\.json:3: cannot parse cost table \("),
    ("costs.json", "[1, 2]", r"costs\.json: Input should be a valid dictionary"),
]


@pytest.mark.parametrize(("name", "text", "message"), BAD_TABLES)
def test_bad_cost_tables_name_the_file_and_field(
    name: str, text: str, message: str, tmp_path: Path
) -> None:
    path = tmp_path / name
    path.write_text(text, "utf-8")
    with pytest.raises(InputError) as raised:
        load_cost_table(path)
    assert re.search(rf"{re.escape(str(path))}(:\d+)?: ", str(raised.value))
    assert re.search(message, str(raised.value)), raised.value


def test_cost_table_that_is_not_utf8_names_the_line(tmp_path: Path) -> None:
    path = tmp_path / "costs.toml"
    path.write_bytes(_toml("1.0").replace("wrong", "# caf\xe9\nwrong", 2).encode("latin-1"))
    with pytest.raises(InputError, match=r"costs\.toml:3: not UTF-8 text \(byte 0xe9\)$"):
        load_cost_table(path)


@pytest.mark.parametrize(
    ("name", "text", "message"),
    [BAD_TABLES[0], BAD_TABLES[3], BAD_TABLES[7], BAD_TABLES[9], ("costs.toml", b"\xff", ":1: ")],
)
def test_grade_refuses_a_bad_cost_table(
    name: str, text: str | bytes, message: str, tmp_path: Path, runner: CliRunner
) -> None:
    path = tmp_path / name
    path.write_bytes(text if isinstance(text, bytes) else text.encode())
    out = tmp_path / "out"
    args = ["grade", "-i", str(EXAMPLES / "items.jsonl"), "-r", str(EXAMPLES / "responses.jsonl")]
    result = runner.invoke(app, [*args, "--costs", str(path), "--out", str(out)])
    assert result.exit_code == 2, result.output
    assert "Traceback" not in result.output and not out.exists()
    (line,) = result.stderr.strip().splitlines()
    assert line.startswith(f"error: {path}:") and re.search(message, line), line


def test_pair_score_by_hand() -> None:
    from twinbench.grader import Outcome as O
    from twinbench.metrics.pairs import pair_score

    # four pairs (item, twin), one run key:
    #   ideal: right code +1, right answer +1       -> 1
    #   abstained on both (right code)  +1, -1      -> 0
    #   other code on the item, twin right 0, +1    -> 0.5
    #   answered both, twin wrong       -1, -1      -> -1
    # a fifth pair has no graded twin and is not counted: mean (1 + 0 + 0.5 - 1) / 4
    pair = np.array([0, 0, 1, 1, 2, 2, 3, 3, 4])
    answerable = np.array([F, T, F, T, F, T, F, T, F])
    outcome = np.array(
        [
            *(O.CORRECT_ABSTAIN, O.CORRECT_ANSWER, O.CORRECT_ABSTAIN, O.FALSE_ABSTAIN),
            *(O.WRONG_REASON, O.CORRECT_ANSWER, O.FALSE_COMMIT, O.WRONG_ANSWER, O.CORRECT_ABSTAIN),
        ]
    )
    run_key = np.zeros(len(pair), dtype=np.int64)
    assert pair_score(pair, run_key, answerable, outcome) == pytest.approx(0.125)
    # abstaining on every member with the right code scores exactly 0
    blanket = np.array([O.CORRECT_ABSTAIN, O.FALSE_ABSTAIN] * 4 + [O.CORRECT_ABSTAIN])
    assert pair_score(pair, run_key, answerable, blanket) == 0.0
    assert pair_score(pair[:1], run_key[:1], answerable[:1], outcome[:1]) is None
