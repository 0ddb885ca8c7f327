"""Human labels for RAG answers: a blind package, and the labels read back and applied.

* `package`: `items.jsonl` (per answer: a blind id, the question, the answer, the numbered
  passages that reached the prompt and the claims as split, with no labels and no variant,
  generator or labeller), `labels.template.jsonl`, `README.md` (the rubric) and, kept apart,
  `key.json` (blind id -> case_id, variant, trial). Ok answers and abstentions go in; failed
  answers have nothing to label. Rows are in a seeded order; `sample` draws answers (seeded).

Reading the labels back is `twinbench.rag.labels`, agreement of two labellings
`twinbench.rag.agreement`, the labelling page `twinbench.rag.annotation_page`.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final, Literal

import numpy as np
from pydantic import BaseModel, ConfigDict, Field, StrictBool, StrictInt

from twinbench.audit.human import _blind_id
from twinbench.jsonl import (
    InputError,
    dumps_json,
    dumps_line,
    load_models,
    read_text,
    record_dict,
)
from twinbench.outputs import write_set
from twinbench.rag.answers import (
    Answer,
    AnswerStatus,
)
from twinbench.rag.records import Case, Passage, Text

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
    # every number finite: a nan or inf score, grade or time is an input error
    model_config = ConfigDict(
        extra="forbid", frozen=True, populate_by_name=True, allow_inf_nan=False
    )


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
