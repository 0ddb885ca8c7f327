"""The human audit (after seed 002): stratified sample, blind two-pass packages, scoring.

* `sample`: strata by any fields of the rows (dotted paths, e.g. `generator.name`); each
  stratum gets its proportional share of n but at least `floor` rows (small strata are
  over-drawn); every row records its stratum's share of the population.
* `package`: per annotator a pass-one file (the item and its twin as a model sees them) and a
  pass-two file (the construction shown), each in the annotator's own seeded order, rows named
  by blind ids only; verdict templates per annotator and pass; the KEY (blind id -> item)
  written apart.
* `score`: 2-of-3 majority per item and question, Fleiss' kappa per question (statsmodels),
  per-stratum error rates reweighted by stratum share into a population error rate with a
  stratified bootstrap interval, a threshold analysis on a numeric field, and `errata.json`
  (`extend_errata`). A KEY.json, verdict file or errata file that is not what `package` and
  `score` write is one InputError naming the file and the line (or the field).
"""

from __future__ import annotations

import hashlib
import json
import math
from collections import defaultdict
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from twinbench.errata import ERRATA_SCHEMA, Errata
from twinbench.jsonl import (
    InputError,
    describe_validation_error,
    iter_json_lines,
    read_text,
    write_json,
    write_jsonl,
)

RUBRIC: list[dict[str, str]] = [
    {
        "id": "item_unanswerable",
        "type": "yesno",
        "pass1": "Can the ITEM be answered from its text alone? Answer yes or no.",
        "pass2": "Is the ITEM unanswerable for its stated reason?",
    },
    {
        "id": "twin_answerable",
        "type": "yesno",
        "pass1": "Can the TWIN be answered from its text? Answer yes or no.",
        "pass2": "Is the TWIN answerable with the stated answer?",
    },
    {
        "id": "why",
        "type": "text",
        "pass1": "Why, in one short clause?",
        "pass2": "Why, in one short clause?",
    },
]


#: the rubric's yes/no questions that `score` reads from the pass-two verdicts
YES_NO = ("item_unanswerable", "twin_answerable")


def field(row: dict[str, Any], path: str) -> Any:
    """The value at a dotted path (`generator.name`), or None."""
    value: Any = row
    for part in path.split("."):
        value = value.get(part) if isinstance(value, dict) else None
    return value


def sample(
    rows: Sequence[dict[str, Any]],
    strata: Sequence[str],
    n: int,
    seed: int,
    floor: int | None = None,
) -> list[dict[str, Any]]:
    """A stratified sample of `n` rows (small strata over-drawn to at least `floor`)."""
    groups: dict[tuple[Any, ...], list[dict[str, Any]]] = defaultdict(list)
    for row in rows:
        groups[tuple(field(row, s) for s in strata)].append(row)
    total = len(rows)
    floor = floor if floor is not None else max(2, n // (2 * max(1, len(groups))))
    rng = np.random.default_rng(seed)
    out = []
    for key in sorted(groups, key=str):
        members = groups[key]
        take = min(len(members), max(floor, round(n * len(members) / total)))
        for index in sorted(rng.choice(len(members), take, replace=False).tolist()):
            out.append(
                {
                    "stratum": dict(zip(strata, key, strict=True)),
                    "stratum_share": len(members) / total,
                    "stratum_size": len(members),
                    "stratum_sampled": take,
                    "row": members[index],
                }
            )
    return out


def _blind_id(row_id: str, seed: int) -> str:
    return "b-" + hashlib.sha256(f"{seed}:{row_id}".encode()).hexdigest()[:10]


def _model_view(item: dict[str, Any] | None) -> dict[str, Any] | None:
    if item is None:
        return None
    return {"state": item["state"], "question": item["question"]}


def package(
    sampled: Sequence[dict[str, Any]],
    twins: dict[str, dict[str, Any]],
    annotators: Sequence[str],
    out: Path,
    seed: int,
    rubric: list[dict[str, str]] | None = None,
) -> None:
    """Write pass files, verdict templates and the KEY for each annotator into `out`."""
    rubric = rubric or RUBRIC
    key = {}
    pass1, pass2 = [], []
    for entry in sampled:
        row = entry["row"]
        blind = _blind_id(row["id"], seed)
        twin = twins.get(row.get("twin_id") or "")
        key[blind] = {
            "id": row["id"],
            "twin_id": row.get("twin_id"),
            "stratum": entry["stratum"],
            "stratum_share": entry["stratum_share"],
            "row": row,
        }
        pass1.append({"blind_id": blind, "item": _model_view(row), "twin": _model_view(twin)})
        pass2.append(
            {
                "blind_id": blind,
                "item": _model_view(row),
                "twin": _model_view(twin),
                "construction": {
                    "family": row.get("family"),
                    "stated_reason": field(row, "expected.reason"),
                    "twin_answer": field(twin or {}, "expected.answer"),
                    "edit": field(row, "provenance.edit"),
                },
            }
        )
    for number, rows in ((1, pass1), (2, pass2)):
        questions = [{"id": q["id"], "type": q["type"], "text": q[f"pass{number}"]} for q in rubric]
        for annotator in annotators:
            order = np.random.default_rng([seed, number, *annotator.encode()]).permutation(
                len(rows)
            )
            ordered = [rows[i] for i in order]
            write_json(
                out / f"{annotator}_pass{number}.json",
                {"annotator": annotator, "pass": number, "questions": questions, "items": ordered},
            )
            write_jsonl(
                out / "verdicts" / f"{annotator}_pass{number}.jsonl",
                [
                    {"blind_id": r["blind_id"], "answers": {q["id"]: None for q in rubric}}
                    for r in ordered
                ],
            )
    write_json(
        out / "KEY.json",
        {"seed": seed, "annotators": list(annotators), "rubric": rubric, "items": key},
    )


def fleiss_kappa_yesno(votes: np.ndarray) -> float | None:
    """Fleiss' kappa of an (items x raters) matrix of 0/1 votes (statsmodels).

    None when every vote is the same answer: chance agreement is then 1 and kappa is 0/0
    (undefined; the JSON says null rather than NaN, which is not JSON).
    """
    from statsmodels.stats.inter_rater import aggregate_raters, fleiss_kappa

    if len(np.unique(votes)) < 2:
        return None
    table, _ = aggregate_raters(votes)
    return float(fleiss_kappa(table, method="fleiss"))


def reweighted_error(
    wrong: np.ndarray, strata: np.ndarray, shares: dict[Any, float], resamples: int, seed: int
) -> dict[str, Any]:
    """sum_h share_h * (wrong in h / sampled in h), with a stratified bootstrap interval."""
    keys = sorted(set(strata.tolist()), key=str)
    per = {k: float(wrong[strata == k].mean()) for k in keys}
    estimate = sum(shares[k] * per[k] for k in keys)
    rng = np.random.default_rng(seed)
    draws = np.zeros(resamples)
    for k in keys:
        members = wrong[strata == k].astype(np.float64)
        picks = rng.integers(0, len(members), size=(resamples, len(members)))
        draws += shares[k] * members[picks].mean(axis=1)
    low, high = np.percentile(draws, [2.5, 97.5])
    return {
        "estimate": estimate,
        "low": float(low),
        "high": float(high),
        "per_stratum": per,
        "method": "stratified bootstrap, percentile",
        "resamples": resamples,
        "seed": seed,
    }


def threshold_analysis(values: np.ndarray, wrong: np.ndarray) -> dict[str, Any]:
    """Wrong rate per value, and the threshold t ("keep when value >= t") with fewest errors.

    Errors at t = kept items audited wrong + dropped items audited right.
    """
    table = [
        {
            "value": float(v),
            "n": int((values == v).sum()),
            "wrong_rate": float(wrong[values == v].mean()),
        }
        for v in np.unique(values)
    ]
    best, best_errors = None, math.inf
    for t in np.unique(values):
        kept = values >= t
        errors = int((kept & wrong).sum() + (~kept & ~wrong).sum())
        if errors < best_errors:
            best, best_errors = float(t), errors
    return {"by_value": table, "best_threshold": best, "errors_at_best": best_errors}


class KeyEntry(BaseModel):
    """What KEY.json says of one blind id: the item, its stratum and the stratum's share."""

    model_config = ConfigDict(extra="allow", frozen=True, allow_inf_nan=False)

    id: str = Field(min_length=1)
    stratum: dict[str, Any]
    stratum_share: float = Field(gt=0, le=1)
    row: dict[str, Any]


class Key(BaseModel):
    """KEY.json, as `package` writes it: annotators and blind id -> KeyEntry."""

    model_config = ConfigDict(extra="allow", frozen=True)

    annotators: list[str] = Field(min_length=1)
    items: dict[str, KeyEntry] = Field(min_length=1)


def _json_document(path: Path) -> Any:
    """One JSON document; text that is not UTF-8 or not JSON is an InputError naming its line."""
    text = read_text(path)
    if not text.strip():
        raise InputError(f"{path}: file is empty (expected one JSON document)")
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise InputError(f"{path}:{exc.lineno}: invalid JSON ({exc.msg})") from None


def load_key(path: Path) -> Key:
    """Read a package's KEY.json; problems name the file (and line, or the field)."""
    if not path.is_file():
        raise InputError(f"{path}: no such file (run twinbench audit package first)")
    try:
        return Key.model_validate(_json_document(path))
    except ValidationError as exc:
        raise InputError(f"{path}: {describe_validation_error(exc)}") from None


def _verdicts(
    folder: Path, annotator: str, number: int
) -> tuple[Path, dict[str, tuple[int, dict[str, Any]]]]:
    """The verdict file of one annotator and pass, and blind id -> (line, answers)."""
    path = folder / "verdicts" / f"{annotator}_pass{number}.jsonl"
    found: dict[str, tuple[int, dict[str, Any]]] = {}
    for line, row in iter_json_lines(path):
        blind = row.get("blind_id")
        if not isinstance(blind, str) or not blind:
            problem = "missing key 'blind_id'" if blind is None else "'blind_id' must be a string"
            raise InputError(f"{path}:{line}: {problem}")
        answers = row.get("answers")
        if not isinstance(answers, dict):
            raise InputError(f"{path}:{line}: 'answers' must be an object")
        found[blind] = (line, answers)
    return path, found


def _yes(value: Any, where: str) -> bool:
    if isinstance(value, str) and value.strip().lower() in ("yes", "no"):
        return value.strip().lower() == "yes"
    if isinstance(value, bool):
        return value
    raise InputError(f"{where}: expected yes or no, got {value!r}")


def _votes(folder: Path, key: Key, blinds: list[str]) -> dict[str, np.ndarray]:
    """(items x annotators) 0/1 matrices of the pass-two yes/no answers, per question."""
    votes = {q: np.zeros((len(blinds), len(key.annotators)), dtype=np.int64) for q in YES_NO}
    for a, annotator in enumerate(key.annotators):
        path, answers = _verdicts(folder, annotator, 2)
        for b, blind in enumerate(blinds):
            if blind not in answers:
                raise InputError(f"{path}: no verdict for {blind} (KEY.json lists it)")
            line, given = answers[blind]
            for q, matrix in votes.items():
                matrix[b, a] = _yes(given.get(q), f"{path}:{line}: {q}")
    return votes


def _threshold_values(key: Key, blinds: list[str], name: str, path: Path) -> np.ndarray:
    """The numeric field `name` of each item's row (0 where it is missing)."""
    values = []
    for blind in blinds:
        value = field(key.items[blind].row, name)
        try:
            number = float(value or 0) if not isinstance(value, bool | dict | list) else math.nan
        except ValueError:
            number = math.nan
        if not math.isfinite(number):
            raise InputError(f"{path}: items.{blind}.row.{name}: expected a number, got {value!r}")
        values.append(number)
    return np.array(values)


def score(
    folder: Path, threshold_field: str | None = None, resamples: int = 10_000, seed: int = 0
) -> dict[str, Any]:
    """Score a finished package folder; returns the scores and the errata entries."""
    key_path = folder / "KEY.json"
    key = load_key(key_path)
    blinds = sorted(key.items)
    votes = _votes(folder, key, blinds)
    majority = {q: m.sum(axis=1) * 2 > len(key.annotators) for q, m in votes.items()}
    wrong = ~majority["item_unanswerable"] | ~majority["twin_answerable"]
    strata = np.array([json.dumps(key.items[b].stratum, sort_keys=True) for b in blinds])
    shares = {s: key.items[b].stratum_share for b, s in zip(blinds, strata, strict=True)}
    result: dict[str, Any] = {
        "items": len(blinds),
        "annotators": key.annotators,
        "fleiss_kappa": {q: fleiss_kappa_yesno(m) for q, m in votes.items()},
        "audited_wrong": int(wrong.sum()),
        "error_rate": reweighted_error(wrong, strata, shares, resamples, seed),
    }
    if threshold_field:
        values = _threshold_values(key, blinds, threshold_field, key_path)
        result["threshold"] = {"field": threshold_field, **threshold_analysis(values, wrong)}
    result["errata"] = {
        "schema": ERRATA_SCHEMA,
        "version": 1,
        "entries": [
            {
                "item_id": key.items[b].id,
                "pair_id": field(key.items[b].row, "pair_id"),
                "reason": "audited wrong by majority",
            }
            for b, w in zip(blinds, wrong, strict=True)
            if w
        ],
    }
    return result


def extend_errata(path: Path, entries: list[dict[str, Any]]) -> dict[str, Any]:
    """The errata document to write at `path`: version 1 of `entries`, or, where an errata
    file is already there, its next version: its entries not listed again, then `entries`.

    An existing file that is not a valid errata file is an InputError naming it (and the line).
    """
    if not path.exists():
        return {"schema": ERRATA_SCHEMA, "version": 1, "entries": entries}
    if not path.is_file():
        raise InputError(f"{path}: not a file")
    previous = _json_document(path)
    try:
        version = Errata.model_validate(previous).version
    except ValidationError as exc:
        raise InputError(f"{path}: {describe_validation_error(exc)}") from None
    known = {e["item_id"] for e in entries}
    kept = [e for e in previous["entries"] if e.get("item_id") not in known]
    return {"schema": ERRATA_SCHEMA, "version": version + 1, "entries": kept + entries}
