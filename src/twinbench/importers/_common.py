"""Helpers shared by importers: Hugging Face loading and seeded distractor choice."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from twinbench.jsonl import InputError


def hf_rows(spec: Path | str, split: str) -> list[dict[str, Any]] | None:
    """Rows of `hf:NAME[:CONFIG]` via `datasets.load_dataset`, or None for a local path."""
    text = str(spec)
    if not text.startswith("hf:"):
        return None
    try:
        import datasets  # optional: only for hf: paths
    except ImportError:
        raise InputError(f"{text}: loading from the hub needs `pip install datasets`") from None
    name, _, config = text[3:].partition(":")
    try:
        dataset = datasets.load_dataset(name, config or None, split=split)
    except Exception as exc:  # network, unknown name: one clear line
        raise InputError(f"{text}: cannot load from the hub ({exc})") from None
    return [dict(row) for row in dataset]


def pick_distractors(pool: Sequence[str], exclude: set[str], k: int, seed: int) -> list[str]:
    """Up to `k` distinct strings from `pool` not in `exclude`, chosen with `seed`."""
    candidates = sorted({p for p in pool if p and p not in exclude})
    if not candidates:
        return []
    order = np.random.default_rng(seed).permutation(len(candidates))
    return [candidates[i] for i in order[:k]]
