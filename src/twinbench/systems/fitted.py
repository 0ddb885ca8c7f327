"""The SystemOptions fields fitted to a whole benchmark, not to the items one run sends."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from twinbench.records import Item
from twinbench.systems.baselines import form_codes


def fitted_fields(items: Sequence[Item]) -> dict[str, Any]:
    """`benchmark_languages` (the router's detector) and `form_codes` (abstain-by-form's rule)
    of `items`: what `SystemOptions` reads from the benchmark. The benchmark's index stores
    them (`item_index.py`), so a shard gets the whole benchmark's without reading it."""
    return {
        "benchmark_languages": tuple(sorted({item.language for item in items})),
        "form_codes": form_codes(items),
    }
