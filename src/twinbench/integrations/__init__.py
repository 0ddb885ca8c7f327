"""Bridges to the tools evaluation engineers already run: inspect_ai, lm-evaluation-harness and
Hugging Face datasets (docs/integrations.md).

Each module imports its tool only when it is used, so the core install stays light; `require`
turns a missing tool into a one-line install hint. Imported runs go through `write_imported_run`,
so `report` and `compare` read them exactly like runs made by `twinbench run`.
"""

from __future__ import annotations

import importlib
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from types import ModuleType

from twinbench.jsonl import InputError, write_jsonl
from twinbench.records import Item, Response
from twinbench.runner import items_digest
from twinbench.runrecord import RunRecord, write_run
from twinbench.systems.base import SystemCard


def require(module: str, pip_name: str) -> ModuleType:
    """Import `module`, or fail with the pip command that installs it."""
    try:
        return importlib.import_module(module)
    except ImportError:
        raise InputError(
            f"this needs {pip_name}: pip install '{pip_name}' (or pip install 'twinbench[dev]')"
        ) from None


def write_imported_run(
    out: Path,
    card: SystemCard,
    responses: Sequence[Response],
    items: Sequence[Item],
    *,
    source: str,
    benchmark: Path | None = None,
    trials: int = 1,
) -> RunRecord:
    """Write `responses` (in the order given) and a run.json with status `imported` into `out`.

    The run records the items' sha256 and count, so `report`, `compare` and `grade` check it
    against the benchmark like any run; a folder that already holds responses is refused.
    """
    if (out / "responses.jsonl").exists():
        raise InputError(f"{out}/responses.jsonl exists; import into a new folder")
    write_jsonl(out / "responses.jsonl", list(responses))
    counts = Counter(r.status for r in responses)
    record = RunRecord(
        system=card,
        status="imported",
        trials=trials,
        items=len(items),
        items_sha256=items_digest(items),
        benchmark=None if benchmark is None else str(benchmark.resolve()),
        counts=dict(sorted(counts.items())),
        responses=len(responses),
        source=source,
    )
    write_run(out, record)
    return record
