"""The typed, versioned documents twinbench writes besides JSON Lines records.

`Metrics` (metrics.json of `grade` and of each run in `eval`), `Report` (metrics.json of
`report` and `eval`) and `Comparison` (compare.json). The top levels are typed fields; nested
blocks whose shape follows a metric's own definition (a reliability diagram, a paired
analysis) are kept as JSON objects. `twinbench schema metrics|report|compare` prints each
JSON Schema; `to_json()` is the document as written.
"""

from __future__ import annotations

from typing import Any, Final, Literal

from pydantic import BaseModel, ConfigDict, Field

METRICS_SCHEMA: Final = "twinbench.metrics/1"
REPORT_SCHEMA: Final = "twinbench.report/1"
COMPARE_SCHEMA: Final = "twinbench.compare/1"

Rate = float | None
Block = dict[str, Any]


class _Document(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, populate_by_name=True)

    def to_json(self) -> dict[str, Any]:
        """The JSON object written to disk (field aliases, Nones kept)."""
        return self.model_dump(mode="json", by_alias=True)


class FamilyMetrics(_Document):
    """One family's figures over valid responses (docs/grading.md gives each formula)."""

    unanswerable: int
    twins: int
    recall: Rate
    precision: Rate
    twin_accuracy: Rate
    abstained_with_code: int
    wrong_reason: int
    accuracy: Rate
    ideal_pair_rate: Rate
    pair_score: Rate
    ideal_pairs: Block


class OverallMetrics(_Document):
    """Figures pooled over all items (families weighted by their size)."""

    ideal_pair_rate: Rate
    pair_score: Rate
    abstention_precision: Rate
    abstention_recall: Rate
    twin_accuracy: Rate
    accuracy: Rate
    accuracy_failures_as_wrong: Rate
    coverage: Rate
    selective_risk: Rate
    cost_weighted_score: Rate
    ideal_pairs: Block


class Metrics(_Document):
    """Every metric of one graded run: per family, their macro mean, pooled, calibration,
    permutation sensitivity, and the cost table used."""

    schema_: Literal["twinbench.metrics/1"] = Field(METRICS_SCHEMA, alias="schema")
    twinbench_version: str
    systems: list[str]
    languages: list[str]
    counts: dict[str, int]
    families: dict[str, FamilyMetrics]
    macro: Block
    overall: OverallMetrics
    confidence: Block | None
    permutation: Block | None
    costs: Block
    system_card: Block | None = None

    def family(self, name: str) -> FamilyMetrics:
        """The block of family `name`."""
        return self.families[name]


class Report(_Document):
    """`report`: per-system metrics, per-family and pooled intervals, the paired analysis,
    the benchmark's provenance, each run's facts and the examples of each kind of error."""

    schema_: Literal["twinbench.report/1"] = Field(REPORT_SCHEMA, alias="schema")
    languages: dict[str, list[str]]
    systems: dict[str, Metrics]
    family_intervals: dict[str, Block]
    paired: Block
    overall_intervals: dict[str, Block] = Field(default_factory=dict)
    #: manifest sha256, seed, generators@versions, twinbench version, items (provenance.py)
    benchmark: Block | None = None
    #: per run: run.json's status, plan and versions (None: the run has no run.json)
    runs: dict[str, Block | None] = Field(default_factory=dict)
    #: per run, family and error outcome: its count and a few examples (gallery.py)
    examples: dict[str, Block] = Field(default_factory=dict)


class Comparison(_Document):
    """`compare`: every (A, B, family, metric) difference with interval, p and Holm p."""

    schema_: Literal["twinbench.compare/1"] = Field(COMPARE_SCHEMA, alias="schema")
    systems: list[str]
    #: the system every other was compared with (None: every pair, in the order given)
    baseline: str | None = None
    #: one line per run with more than 5 % of its rows invalid or error
    warnings: list[str] = []
    comparisons: list[Block]
    settings: Block
