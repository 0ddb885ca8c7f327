"""What systems are fitted to from a whole benchmark, not from the items one run sends.

`SystemOptions.benchmark_languages` (the language router's detector) and `form_codes` (the
`abstain-by-form` reference's rule) are read from every item of the benchmark. They are
computed here, once: by `twinbench build` for the benchmark's index (so a shard gets the whole
benchmark's without reading it, `item_index.py`) and by a run that loads every item. The
rule is applied in `systems/baselines.py`.
"""

from __future__ import annotations

import unicodedata
from collections import Counter
from collections.abc import Iterable, Sequence
from typing import Any

from twinbench.records import FAMILIES, Item


def latin_script(text: str) -> bool:
    """Whether most letters of `text` are Latin (a script check, not language identification)."""
    letters = [ch for ch in text if ch.isalpha()]
    latin = sum(unicodedata.name(ch, "").startswith("LATIN") for ch in letters)
    return 2 * latin >= len(letters)


def form_codes(items: Iterable[Item]) -> dict[str, str]:
    """The abstain-by-form rule fitted to a benchmark: per question type, the family most of
    its Latin-script unanswerable items belong to (ties: the first family in FAMILIES order).

    It reads the benchmark's labels on purpose: it is the best a rule that sees only the form
    (question type, script) can do on this benchmark, the reference row of every report."""
    counts: dict[str, Counter[str]] = {}
    for item in items:
        if not item.answerable and latin_script(item.state):
            counts.setdefault(item.question.type, Counter())[item.family.value] += 1
    return {
        kind: max(FAMILIES, key=lambda f: (tally[f], -FAMILIES.index(f)))
        for kind, tally in sorted(counts.items())
    }


def fitted_fields(items: Sequence[Item]) -> dict[str, Any]:
    """The `SystemOptions` fields fitted to `items`: `benchmark_languages` and `form_codes`."""
    return {
        "benchmark_languages": tuple(sorted({item.language for item in items})),
        "form_codes": form_codes(items),
    }
