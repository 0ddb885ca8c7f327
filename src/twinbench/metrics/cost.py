"""The cost-weighted score and its published, per-family cost table."""

from __future__ import annotations

import json
import tomllib
from importlib import resources
from pathlib import Path

import numpy as np
from pydantic import BaseModel, ConfigDict, ValidationError

from twinbench.jsonl import InputError, describe_validation_error
from twinbench.metrics._util import BoolArray
from twinbench.records import FAMILIES

IntArray = np.ndarray[tuple[int], np.dtype[np.int64]]


class FamilyCosts(BaseModel):
    """Values of the three kinds of outcome for one family."""

    model_config = ConfigDict(extra="forbid", frozen=True)

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
    """Read a cost table from TOML or JSON; None gives the published default table."""
    try:
        if path is None:
            text = resources.files("twinbench").joinpath("data/costs.toml").read_text("utf-8")
            return CostTable.model_validate(tomllib.loads(text))
        if not path.is_file():
            raise InputError(f"{path}: no such file")
        raw = path.read_text("utf-8")
        data = json.loads(raw) if path.suffix == ".json" else tomllib.loads(raw)
        return CostTable.model_validate(data)
    except (tomllib.TOMLDecodeError, json.JSONDecodeError) as exc:
        raise InputError(f"{path}: cannot parse cost table ({exc})") from None
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
