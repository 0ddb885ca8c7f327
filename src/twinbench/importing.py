"""Importing public datasets: an official file (or a hub dataset) in, a benchmark folder out.

`twinbench import` is a thin layer over these. An imported benchmark is written like a built
one (items.jsonl, holdout/items.jsonl, manifest.json as one set, with file hashes); the
ArcticAbstain release also brings one run per model (responses.jsonl and a run.json).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from twinbench.builder import write_benchmark
from twinbench.jsonl import InputError, write_jsonl
from twinbench.records import Item, ReasonCode
from twinbench.runrecord import RunRecord, write_run
from twinbench.systems.base import SystemCard


@dataclass(frozen=True)
class Imported:
    """What an import wrote: pairs, runs and responses, and the items file's sha256."""

    pairs: int
    items_sha256: str
    runs: int = 0
    responses: int = 0


def _manifest_fields(
    kind: str, path: str, seed: int, items: list[Item], family: ReasonCode
) -> dict[str, object]:
    ref = items[0].generator
    return {
        "seed": seed,
        "source": {"kind": kind, "path": Path(path).name},
        "generators": [
            {
                "name": ref.name,
                "version": ref.version,
                "family": family.value,
                "split": "public",
                "pairs": len(items) // 2,
            }
        ],
        "ratio": {"answerable": 1, "unanswerable": 1},
    }


def import_dataset(kind: str, path: str, out: Path, seed: int = 0) -> Imported:
    """Import squad2, mnli, xnli or falseqa from `path` (a file or hf:NAME[:CONFIG[:SPLIT]])."""
    from twinbench.importers import IMPORTERS

    if kind not in IMPORTERS:
        raise InputError(f"unknown source {kind!r}; choose one of {', '.join(IMPORTERS)}")
    if not path.startswith("hf:") and not Path(path).is_file():
        raise InputError(f"{path}: no such file")
    pairs = IMPORTERS[kind](path, seed)
    if not pairs:
        raise InputError(f"{path}: no pairs could be made from this file")
    items = [item for pair in pairs for item in (pair.item, pair.twin)]
    fields = _manifest_fields(kind, path, seed, items, pairs[0].item.family)
    manifest = write_benchmark(out, items, [], fields)
    return Imported(pairs=len(pairs), items_sha256=str(manifest["files"]["items.jsonl"]))


def import_arcticqa(folder: Path, out: Path) -> Imported:
    """ArcticAbstain v1: items into out/benchmark, one run per model into out/runs/MODEL."""
    from twinbench.importers.arcticqa import import_items, import_responses

    items = import_items(folder)
    runs = import_responses(folder)
    fields = _manifest_fields("arcticqa", str(folder), 0, items, ReasonCode.CONTRADICTORY_OPTIONS)
    manifest = write_benchmark(out / "benchmark", items, [], fields)
    languages = tuple(sorted({i.language for i in items}))
    for model, responses in runs.items():
        write_jsonl(out / "runs" / model / "responses.jsonl", responses)
        record = RunRecord(
            system=SystemCard(name=model, languages=languages),
            status="imported",
            responses=len(responses),
            source="ArcticAbstain v1 responses.csv",
        )
        write_run(out / "runs" / model, record)
    return Imported(
        pairs=len(items) // 2,
        items_sha256=str(manifest["files"]["items.jsonl"]),
        runs=len(runs),
        responses=sum(map(len, runs.values())),
    )
