"""Human labels for RAG answers read back: checked against their blind items, then applied.

* `read_labels`: an annotator's labels, every row checked against its item (one
  `FILE:LINE: problem` InputError); a row left all null is not yet labelled and skipped.
* `apply_labels`: the labelled answers, claims labelled and `labelled_by` set, for the metrics.
* `read_judgements`: a judgements file, one judgement per answer key.

The blind package the labels answer is `twinbench.rag.annotation`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from twinbench.jsonl import InputError, describe_validation_error, iter_json_lines, load_models
from twinbench.rag.annotation import AnswerKey, BlindPackage, Item
from twinbench.rag.answers import Answer, ClaimLabel, Judgement, Severity, SupportLabel, revised
from twinbench.rag.validate import is_span


@dataclass(frozen=True)
class ItemLabels:
    """One labelling of one answer: a label per claim, relevance, an abstention's verdict."""

    claims: tuple[ClaimLabel, ...]
    relevance: int | None
    abstention_appropriate: bool | None = None
    annotator: str | None = None


_ROW_FIELDS = {"blind_id", "annotator", "relevance", "abstention_appropriate", "claims"}
_CLAIM_FIELDS = {"claim", "support_label", "evidence_ids", "evidence_quote", "severity"}


def _claim_label(entry: dict[str, Any], item: Item) -> ClaimLabel:
    where = f"claims.{entry['claim']}"
    extra = sorted(set(entry) - _CLAIM_FIELDS)
    if extra:
        raise ValueError(f"{where}: unknown field {extra[0]!r}")
    label, severity = entry.get("support_label"), entry.get("severity")
    if label is None:
        raise ValueError(
            f"{where}: no support_label (label every claim of a row, or leave the row all null)"
        )
    if label not in [s.value for s in SupportLabel]:
        raise ValueError(
            f"{where}: support_label {label!r} is not supported, contradicted or insufficient"
        )
    if severity is not None and severity not in [s.value for s in Severity]:
        raise ValueError(f"{where}: severity {severity!r} is not minor, major or critical")
    if label != SupportLabel.SUPPORTED and severity is None:
        raise ValueError(f"{where}: a {label} claim needs a severity (minor, major, critical)")
    ids = entry.get("evidence_ids") or []
    shown = {p.passage_id: p for p in item.passages}
    if not isinstance(ids, list) or not all(isinstance(i, str) for i in ids):
        raise ValueError(f"{where}: evidence_ids must be a list of passage ids")
    for pid in ids:
        if pid not in shown:
            raise ValueError(
                f"{where}: evidence id {pid!r} is not among the item's passages "
                f"({', '.join(shown) or 'none'})"
            )
    quote = entry.get("evidence_quote") or None
    if quote is not None and (
        not isinstance(quote, str) or not any(is_span(quote, p.text) for p in item.passages)
    ):
        raise ValueError(f"{where}: evidence_quote {quote!r} is not a span of the item's passages")
    return ClaimLabel(
        claim=entry["claim"],
        support_label=label,
        evidence_ids=ids,
        evidence_quote=quote,
        severity=severity,
    )


def _blank(row: dict[str, Any]) -> bool:
    claims = row.get("claims") or []
    return (
        row.get("relevance") is None
        and row.get("abstention_appropriate") is None
        and all(
            isinstance(c, dict) and not any(c.get(f) for f in _CLAIM_FIELDS - {"claim"})
            for c in claims
        )
    )


def check_row(row: dict[str, Any], item: Item) -> ItemLabels | None:
    """One labels row checked against its item (ValueError says what is wrong); None when
    the row is left all null (not yet labelled)."""
    extra = sorted(set(row) - _ROW_FIELDS)
    if extra:
        raise ValueError(f"unknown field {extra[0]!r}")
    claims = row.get("claims")
    if not isinstance(claims, list) or not all(isinstance(c, dict) for c in claims):
        raise ValueError("claims must be a list of objects")
    numbers = [c.get("claim") for c in claims]
    expected = list(range(1, len(item.claims) + 1))
    if any(type(n) is not int for n in numbers) or sorted(numbers) != expected:
        raise ValueError(
            f"claims are numbered {numbers}, expected {expected} (claim boundaries are as "
            "given: do not split or merge claims)"
        )
    if _blank(row):
        return None
    relevance, appropriate = row.get("relevance"), row.get("abstention_appropriate")
    well_formed = type(relevance) is int and relevance in (0, 1, 2)
    if not well_formed and not (relevance is None and item.abstained):
        raise ValueError(
            f"relevance {relevance!r} is not 0, 1 or 2 (0 off-topic, 1 partial, 2 every part)"
        )
    if item.abstained and not isinstance(appropriate, bool):
        raise ValueError(f"abstention_appropriate {appropriate!r} is not true or false")
    if not item.abstained and appropriate is not None:
        raise ValueError("abstention_appropriate is for abstentions; this answer is not one")
    annotator = row.get("annotator")
    if annotator is not None and not isinstance(annotator, str):
        raise ValueError(f"annotator {annotator!r} is not a string")
    labels = sorted((_claim_label(c, item) for c in claims), key=lambda c: c.claim)
    return ItemLabels(tuple(labels), relevance, appropriate, annotator)


def read_labels(path: Path, blind: BlindPackage) -> dict[AnswerKey, ItemLabels]:
    """An annotator's labels keyed by (case_id, variant, trial), each row checked."""
    found: dict[AnswerKey, ItemLabels] = {}
    first: dict[str, int] = {}
    for line, row in iter_json_lines(path):
        where = f"{path}:{line}"
        bid = row.get("blind_id")
        if not isinstance(bid, str) or bid not in blind.items:
            raise InputError(f"{where}: blind_id {bid!r} is not an item of {blind.folder}")
        seen = first.setdefault(bid, line)
        if seen != line:
            raise InputError(f"{where}: blind_id {bid} repeated (first on line {seen})")
        try:
            labels = check_row(row, blind.items[bid])
        except ValueError as exc:
            raise InputError(f"{where}: {exc}") from None
        except ValidationError as exc:
            raise InputError(f"{where}: {describe_validation_error(exc)}") from None
        if labels is not None:
            found[blind.key[bid]] = labels
    return found


def apply_labels(
    answers: Sequence[Answer], labels: Mapping[AnswerKey, ItemLabels], annotator: str
) -> list[Answer]:
    """The answers `labels` covers, their claims labelled and `labelled_by` = `annotator`."""
    out = []
    for answer in answers:
        given = labels.get(answer.key)
        if given is None:
            continue
        if len(given.claims) != len(answer.claims):
            raise InputError(
                f"answer {answer.key}: {len(given.claims)} claim labels for "
                f"{len(answer.claims)} claims (labels of another split)"
            )
        claims = [
            {**claim.model_dump(), **label.model_dump(exclude={"claim"})}
            for claim, label in zip(answer.claims, given.claims, strict=True)
        ]
        out.append(revised(answer, claims=claims, relevance=given.relevance, labelled_by=annotator))
    return out


def read_judgements(path: Path) -> list[Judgement]:
    """The judgements of a `twinbench.rag.judgement/1` file, one per case, variant and trial."""
    rows: list[Judgement] = []
    first: dict[AnswerKey, int] = {}
    for line, judgement in load_models(path, Judgement):
        key = (judgement.case_id, judgement.variant, judgement.trial)
        seen = first.setdefault(key, line)
        if seen != line:
            raise InputError(f"{path}:{line}: judgement of {key} repeated (first on line {seen})")
        rows.append(judgement)
    return rows
