"""The dataset card (README.md) of a Hugging Face export: the Hub's YAML metadata, then what a
person needs: how to load and grade it, the grading rule, counts per family, generator, language
and question type, and what each Parquet column holds.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Final

from twinbench.integrations import require
from twinbench.records import Item

if TYPE_CHECKING:
    from twinbench.integrations.hf import Column, ExportRecord

FAMILY_MEANING: Final = {
    "underspecified_state": "the state does not settle the answer: the fact it rests on is "
    "missing, or a reference in it has two readings",
    "contradictory_options": "no option can be the one right answer: the answer is listed twice, "
    "the state denies every option, or the question presupposes what the state denies",
    "out_of_language": "written in a language the system may not support; unless the system "
    "declares it, the right response abstains",
}
RECIPE: Final = """\
pip install 'twinbench[hf]'
twinbench import hf:DIR --out eval/benchmark
twinbench run --benchmark eval/benchmark --system always-abstain --out eval/runs/always-abstain
twinbench report eval"""
RULE: Final = """\
| item | response | outcome | correct |
|---|---|---|---|
| unanswerable, family f | abstains with code f | `correct_abstain` | yes |
| unanswerable, family f | abstains with another code (or none) | `wrong_reason` | no |
| unanswerable | answers | `false_commit` | no |
| answerable | answers, answer matches | `correct_answer` | yes |
| answerable | answers, no match | `wrong_answer` | no |
| answerable | abstains | `false_abstain` | no |"""


def _size_category(n: int) -> str:
    for bound, name in ((1_000, "n<1K"), (10_000, "1K<n<10K"), (100_000, "10K<n<100K")):
        if n < bound:
            return name
    return "100K<n<1M" if n < 1_000_000 else "n>1M"


def _table(items: Sequence[Item], head: str, key: Callable[[Item], tuple[str, ...]]) -> str:
    """A markdown table of unanswerable/answerable counts per `key` (sorted)."""
    counts = Counter((key(i), i.answerable) for i in items)
    rows = [f"| {head} | unanswerable | answerable |", "|" + "---|" * (head.count("|") + 3)]
    for k in sorted({k for k, _ in counts}):
        rows.append(f"| {' | '.join(k)} | {counts[k, False]} | {counts[k, True]} |")
    return "\n".join(rows)


def _front_matter(items: Sequence[Item], record: ExportRecord, name: str) -> str:
    yaml = require("yaml", "pyyaml")
    kinds = {i.question.type for i in items}
    meta = {
        "license": record.license,
        "pretty_name": name,
        "language": sorted({i.language for i in items}),
        "task_categories": [
            "question-answering",
            *(["multiple-choice"] if "choice" in kinds else []),
        ],
        "size_categories": [_size_category(len(items))],
        "tags": ["abstention", "unanswerable-questions", "twinbench"],
        "configs": [
            {"config_name": "default", "data_files": [{"split": "test", "path": "data/test-*"}]}
        ],
    }
    text = yaml.safe_dump(meta, sort_keys=False, allow_unicode=True, width=1000)
    return f"---\n{text}---\n"


def card(items: Sequence[Item], record: ExportRecord, columns: Sequence[Column]) -> str:
    """The dataset card (README.md): the Hub's YAML metadata, then what a person needs."""
    name = f"twinbench benchmark {record.items_sha256[:12]}"
    unanswerable = sum(not i.answerable for i in items)
    families = _table(items, "family", lambda i: (i.family.value,))
    meanings = "\n".join(f"- `{f}`: {FAMILY_MEANING[f]}" for f in sorted({i.family for i in items}))
    generators = _table(
        items,
        "generator | version | family",
        lambda i: (i.generator.name, i.generator.version, i.family.value),
    )
    languages = _table(items, "language", lambda i: (i.language,))
    kinds = _table(items, "question type", lambda i: (i.question.type,))
    column_rows = "\n".join(f"| `{c.name}` | `{c.kind}` | {c.meaning} |" for c in columns)
    ratio = f"{record.ratio.get('answerable', 1)}:{record.ratio.get('unanswerable', 1)}"
    licence = record.license
    if licence == "other":
        licence = "not recorded by the benchmark (see the licence of the data it was imported from)"
    return f"""{_front_matter(items, record, name)}
# {name}

Unanswerable items, each paired with an answerable twin that differs from it by one edit. A
system should answer every twin and abstain on every unanswerable item, giving the item's
reason code (its family). Grading is exact and public: no judge, no model.

- built with twinbench {record.twinbench_version}, seed {record.seed}, answerable:unanswerable \
{ratio}
- {len(items)} items ({unanswerable} unanswerable, {len(items) - unanswerable} answerable), \
the benchmark's public split, as the split `test`; held-out items are never exported
- licence: {licence}
- items.jsonl sha256: `{record.items_sha256}`

## Load

```python
from datasets import load_dataset

ds = load_dataset("parquet", data_dir="DIR")["test"]
```

## Grade with twinbench

DIR is this dataset's folder (from the Hub: `hf download NAME --repo-type dataset --local-dir
DIR`). `twinbench import hf:DIR` writes items.jsonl back byte for byte (the sha256 above) and
refuses rows changed after the export.

```sh
{RECIPE}
```

Put your system in place of `always-abstain` (`twinbench systems` lists the specs, `openai`
is any OpenAI-compatible endpoint); responses made elsewhere are graded with
`twinbench grade --items eval/benchmark/items.jsonl --responses responses.jsonl`.

## The grading rule

For a valid response (twinbench's docs/grading.md gives every metric):

{RULE}

A match: choice, the option text after normalisation (NFKC, case fold, no punctuation, single
spaces) equals the expected one; score, the number equals the expected legend value; noul,
P(yes) >= 0.5 equals the expected boolean. An item whose language the system does not declare
must be abstained on with `out_of_language`; an `out_of_language` item whose language is
declared is graded as answerable against `answer_if_supported`.

## Families

{meanings}

{families}

## Generators

{generators}

## Languages and question types

{languages}

{kinds}

## Columns

Text columns marked json hold one JSON value (their shape varies from row to row); the row of
an item is every field of twinbench's item record (`twinbench schema item`).

| column | type | meaning |
|---|---|---|
{column_rows}
"""
