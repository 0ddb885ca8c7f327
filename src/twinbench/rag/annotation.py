"""Human labels for RAG answers: a blind package, and the labels read back and applied.

* `package`: `items.jsonl` (per answer: a blind id, the question, the answer, the numbered
  passages that reached the prompt and the claims as split, with no labels and no variant,
  generator or labeller), `labels.template.jsonl`, `README.md` (the rubric) and, kept apart,
  `key.json` (blind id -> case_id, variant, trial). Ok answers and abstentions go in; failed
  answers have nothing to label. Rows are in a seeded order; `sample` draws answers (seeded).
* `read_labels`: an annotator's labels, every row checked against its item (one
  `FILE:LINE: problem` InputError); a row left all null is not yet labelled and skipped.
* `apply_labels`: the labelled answers, claims labelled and `labelled_by` set, for the metrics.
* `read_judgements`: a judgements file, one judgement per answer key.

Agreement of two labellings is `twinbench.rag.agreement`; the labelling page is
`twinbench.rag.annotation_page`.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final, Literal

import numpy as np
from pydantic import BaseModel, ConfigDict, Field, StrictBool, StrictInt, ValidationError

from twinbench.audit.human import _blind_id
from twinbench.jsonl import (
    InputError,
    describe_validation_error,
    dumps_json,
    dumps_line,
    iter_json_lines,
    load_models,
    read_text,
    record_dict,
)
from twinbench.outputs import write_set
from twinbench.rag.answers import (
    Answer,
    AnswerStatus,
    ClaimLabel,
    Judgement,
    Severity,
    SupportLabel,
    revised,
)
from twinbench.rag.records import Case, Passage, Text
from twinbench.rag.validate import is_span

ITEM_SCHEMA: Final = "twinbench.rag.annotation-item/1"
KEY_SCHEMA: Final = "twinbench.rag.annotation-key/1"
#: (case_id, variant, trial), as `Answer.key`
AnswerKey = tuple[str, str, int]

RUBRIC: Final = """\
Judge each claim against the numbered passages only (what the assistant saw), not against
what you know.

- **supported**: the passages state the claim (a paraphrase counts).
- **contradicted**: a passage states something the claim cannot be true beside.
- **insufficient**: the passages neither state nor contradict it. Not found is not false: a
  claim you believe wrong but no passage contradicts is insufficient.

Every claim that is not supported gets a **severity**: **minor** (a side detail; the answer
still serves), **major** (misleads on something the question asked), **critical** (a wrong
date, number, rule or step a reader would act on).

**evidence_ids** name the passages that support or contradict the claim, cited or not;
**evidence_quote** is a verbatim span of one of them (whitespace may differ).

**Relevance** of the answer: **0** off-topic, **1** answers part of the question, **2** answers
every requested part (whether or not it is supported). For an abstention, say whether
abstaining was **appropriate**: true when the passages do not answer the question.

**Citation scope**: a claim's cited_ids were attached by the run's declared scope before
labelling (`sentence`: a citation covers the sentence it trails, or the one before when it
opens a sentence; `answer`: every citation covers every claim). Do not re-attach citations;
label support against all passages, and citation precision is computed from the two.

Claim boundaries are as given: do not split or merge claims.
"""


class _Record(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, populate_by_name=True)


class ShownPassage(_Record):
    """A passage as the annotator sees it: its prompt number ([1] first), id, title, text."""

    number: StrictInt = Field(ge=1)
    passage_id: Text
    title: str = ""
    text: Text


class ShownClaim(_Record):
    """A claim as split, numbered from 1, with the passage ids it cites."""

    number: StrictInt = Field(ge=1)
    text: Text
    cited_ids: list[str] = Field(default_factory=list)


class Item(_Record):
    """One blind item of `items.jsonl`: nothing that names the variant, model or labeller."""

    schema_: Literal["twinbench.rag.annotation-item/1"] = Field(ITEM_SCHEMA, alias="schema")
    blind_id: Text
    question: Text
    answer: str
    abstained: StrictBool = False
    passages: list[ShownPassage]
    claims: list[ShownClaim]


@dataclass(frozen=True)
class BlindPackage:
    """A package folder read back: its items (file order) and the key."""

    folder: Path
    items: dict[str, Item]
    key: dict[str, AnswerKey]


@dataclass(frozen=True)
class ItemLabels:
    """One labelling of one answer: a label per claim, relevance, an abstention's verdict."""

    claims: tuple[ClaimLabel, ...]
    relevance: int | None
    abstention_appropriate: bool | None = None
    annotator: str | None = None


def _item(answer: Answer, case: Case, passages: Mapping[str, Passage], blind: str) -> Item:
    shown = []
    for number, pid in enumerate(answer.passages, start=1):
        if pid not in passages:
            raise InputError(f"answer {answer.key}: passage {pid!r} is not in the corpus")
        passage = passages[pid]
        shown.append(
            ShownPassage(number=number, passage_id=pid, title=passage.title, text=passage.text)
        )
    claims = [
        ShownClaim(number=n, text=c.text, cited_ids=c.cited_ids)
        for n, c in enumerate(answer.claims, start=1)
    ]
    return Item(
        blind_id=blind,
        question=case.question,
        answer=answer.answer or "",
        abstained=answer.abstained,
        passages=shown,
        claims=claims,
    )


def template_row(item: Item) -> dict[str, Any]:
    """The empty labels row of an item (what `labels.template.jsonl` holds)."""
    row: dict[str, Any] = {"blind_id": item.blind_id, "annotator": None, "relevance": None}
    if item.abstained:
        row["abstention_appropriate"] = None
    row["claims"] = [
        {
            "claim": c.number,
            "support_label": None,
            "evidence_ids": [],
            "evidence_quote": None,
            "severity": None,
        }
        for c in item.claims
    ]
    return row


def package(
    answers: Sequence[Answer],
    cases: Mapping[str, Case],
    passages: Mapping[str, Passage],
    out: Path,
    seed: int = 0,
    sample: int | None = None,
) -> dict[str, Any]:
    """Write a blind annotation package into `out`; returns what went in and what did not."""
    usable = [a for a in answers if a.status == AnswerStatus.OK]
    if sample is not None:
        if sample > len(usable):
            raise InputError(f"--sample {sample}: only {len(usable)} answers can be labelled")
        picks = np.random.default_rng([seed, 1]).choice(len(usable), sample, replace=False)
        usable = [usable[i] for i in sorted(picks.tolist())]
    items, key = [], {}
    for answer in usable:
        if answer.case_id not in cases:
            raise InputError(f"answer {answer.key}: case {answer.case_id!r} is not in the cases")
        blind = _blind_id(json.dumps(list(answer.key)), seed)
        if blind in key:
            raise InputError(f"answer {answer.key}: repeated, or its blind id collides")
        key[blind] = {"case_id": answer.case_id, "variant": answer.variant, "trial": answer.trial}
        items.append(_item(answer, cases[answer.case_id], passages, blind))
    order = np.random.default_rng([seed, 2]).permutation(len(items)).tolist()
    items = [items[i] for i in order]
    write_set(
        out,
        {
            "items.jsonl": "".join(dumps_line(record_dict(i)).decode() for i in items),
            "labels.template.jsonl": "".join(dumps_line(template_row(i)).decode() for i in items),
            "key.json": dumps_json(
                {"schema": KEY_SCHEMA, "seed": seed, "sample": sample, "items": key}
            ),
            "README.md": _readme(len(items)),
        },
    )
    failed = Counter(a.status.value for a in answers if a.status != AnswerStatus.OK)
    return {
        "items": len(items),
        "abstentions": sum(i.abstained for i in items),
        "claims": sum(len(i.claims) for i in items),
        "failed_left_out": dict(sorted(failed.items())),
    }


def _readme(count: int) -> str:
    return (
        f"# Blind labelling package\n\n{count} answers to label, one per line of `items.jsonl`, "
        "in the order given. Label them on the local page (`twinbench rag label FOLDER "
        "--annotator NAME`, saved to `labels/NAME.jsonl`) or copy `labels.template.jsonl` and "
        "fill in every null. Do not open `key.json`: it says which system wrote each answer, "
        "and the labels must not know.\n\n## Rubric\n\n" + RUBRIC
    )


def open_package(folder: Path) -> BlindPackage:
    """Read a package folder's items and key; problems name the file (and line)."""
    rows = load_models(folder / "items.jsonl", Item)
    path = folder / "key.json"
    try:
        document = json.loads(read_text(path))
        entries = document["items"]
        key = {b: (e["case_id"], e["variant"], int(e["trial"])) for b, e in entries.items()}
    except (json.JSONDecodeError, KeyError, TypeError, ValueError, AttributeError) as exc:
        raise InputError(f"{path}: not a package key ({type(exc).__name__}: {exc})") from None
    items = {item.blind_id: item for _, item in rows}
    for line, item in rows:
        if item.blind_id not in key:
            raise InputError(f"{folder / 'items.jsonl'}:{line}: {item.blind_id} not in key.json")
    return BlindPackage(folder, items, key)


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
