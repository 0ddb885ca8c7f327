"""twinbench: benchmarks of unanswerable items with answerable twins, graded exactly.

The public API (docs/api.md): `build`, `run`, `grade`, `report`, `compare`, `evaluate`, and
the records and documents they take and return (`Item`, `Response`, `System`, `SystemCard`,
`Metrics`, `Report`, `Comparison`, `RunRecord`). Names are imported on first use, so
`import twinbench` stays cheap for the command line.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from twinbench.cpu import configure_openmp

__version__ = "0.1.0"

configure_openmp()  # before anything imports torch (twinbench/cpu.py says why)

_HOMES = {
    "build": "twinbench.api",
    "run": "twinbench.api",
    "grade": "twinbench.api",
    "graded_run": "twinbench.api",
    "report": "twinbench.api",
    "compare": "twinbench.api",
    "evaluate": "twinbench.api",
    "Item": "twinbench.records",
    "Response": "twinbench.records",
    "ReasonCode": "twinbench.records",
    "System": "twinbench.systems.base",
    "SystemCard": "twinbench.systems.base",
    "Request": "twinbench.systems.base",
    "Metrics": "twinbench.documents",
    "Report": "twinbench.documents",
    "Comparison": "twinbench.documents",
    "RunRecord": "twinbench.runrecord",
    "Evaluation": "twinbench.evaluation",
    "InputError": "twinbench.jsonl",
}
__all__ = [
    "Comparison",
    "Evaluation",
    "InputError",
    "Item",
    "Metrics",
    "ReasonCode",
    "Report",
    "Request",
    "Response",
    "RunRecord",
    "System",
    "SystemCard",
    "__version__",
    "build",
    "compare",
    "evaluate",
    "grade",
    "graded_run",
    "report",
    "run",
]

if TYPE_CHECKING:
    from twinbench.api import build, compare, evaluate, grade, graded_run, report, run
    from twinbench.documents import Comparison, Metrics, Report
    from twinbench.evaluation import Evaluation
    from twinbench.jsonl import InputError
    from twinbench.records import Item, ReasonCode, Response
    from twinbench.runrecord import RunRecord
    from twinbench.systems.base import Request, System, SystemCard


def __getattr__(name: str) -> Any:
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module 'twinbench' has no attribute {name!r}")
    value = getattr(importlib.import_module(home), name)
    globals()[name] = value
    return value
