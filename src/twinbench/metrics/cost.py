"""The cost-weighted score and its published, per-family cost table."""

from __future__ import annotations

import json
import re
import tomllib
from importlib import resources
from pathlib import Path

import numpy as np
from pydantic import BaseModel, ConfigDict, ValidationError

from twinbench.jsonl import InputError, describe_validation_error, read_text
from twinbench.metrics._util import BoolArray
from twinbench.records import FAMILIES

IntArray = np.ndarray[tuple[int], np.dtype[np.int64]]
_TOML_AT = re.compile(r"\(at line (?P<line>\d+), column \d+\)")


class FamilyCosts(BaseModel):
    """Values of the three kinds of outcome for one family (finite numbers, never NaN, inf or
    an overflowing 1e999; true, false and strings are not numbers)."""

    model_config = ConfigDict(extra="forbid", frozen=True, strict=True, allow_inf_nan=False)

    correct: float
    wrong: float
    abstain: float


class CostTable(BaseModel):
    """One FamilyCosts per reason code."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    underspecified_state: FamilyCosts
    contradictory_options: FamilyCosts
    out_of_language: FamilyCosts


def load_cost_table(path: Path | None = None) -> CostTable:
    """Read a cost table from TOML or JSON; None gives the published default table.

    Problems are one InputError naming the file and the line (text that is not UTF-8, TOML or
    JSON) or the field (`underspecified_state.wrong: Input should be a finite number`).
    """
    if path is None:
        text = resources.files("twinbench").joinpath("data/costs.toml").read_text("utf-8")
        return CostTable.model_validate(tomllib.loads(text))
    if not path.is_file():
        raise InputError(f"{path}: no such file")
    raw = read_text(path)
    try:
        data = json.loads(raw) if path.suffix == ".json" else tomllib.loads(raw)
    except json.JSONDecodeError as exc:
        raise InputError(f"{path}:{exc.lineno}: cannot parse cost table ({exc.msg})") from None
    except tomllib.TOMLDecodeError as exc:
        found = _TOML_AT.search(str(exc))
        where = f"{path}:{found['line']}" if found else str(path)
        problem = _TOML_AT.sub("", str(exc)).strip()
        raise InputError(f"{where}: cannot parse cost table ({problem})") from None
    try:
        return CostTable.model_validate(data)
    except ValidationError as exc:
        raise InputError(f"{path}: {describe_validation_error(exc)}") from None


def cost_weighted_score(
    family: IntArray, correct: BoolArray, abstained_wrongly: BoolArray, table: CostTable
) -> float | None:
    """score = (1/n) * sum over rows of table[family][kind], kind in {correct, wrong, abstain}.

    A row is `correct` if graded correct, `abstain` if it abstained without being correct
    (false abstention or wrong reason code), and `wrong` otherwise (a wrong answer).
    """
    if family.size == 0:
        return None
    costs = [getattr(table, name) for name in FAMILIES]
    correct_v = np.array([c.correct for c in costs])[family]
    wrong_v = np.array([c.wrong for c in costs])[family]
    abstain_v = np.array([c.abstain for c in costs])[family]
    values = np.where(correct, correct_v, np.where(abstained_wrongly, abstain_v, wrong_v))
    return float(values.mean())
