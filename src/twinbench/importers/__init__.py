"""Importers: public datasets, read from their official file formats, into item pairs.

Each importer is a function ``(path, seed) -> list[Pair]`` registered by name. A path of the
form ``hf:NAME[:CONFIG[:SPLIT]]`` loads the dataset with Hugging Face ``datasets`` instead, from
the hub or from a local folder (see `_common`; needs that package, and a network for the hub;
neither is required for the official files).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from twinbench.generators.base import Pair
from twinbench.importers.falseqa import import_falseqa
from twinbench.importers.nli import import_mnli
from twinbench.importers.squad2 import import_squad2
from twinbench.importers.xnli import import_xnli

Importer = Callable[[Path | str, int], list[Pair]]

IMPORTERS: dict[str, Importer] = {
    "squad2": import_squad2,
    "mnli": import_mnli,
    "xnli": import_xnli,
    "falseqa": import_falseqa,
}

__all__ = ["IMPORTERS", "Importer"]
