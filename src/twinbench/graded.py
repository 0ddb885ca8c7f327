"""The one grading path: a run folder (or a responses file) and its items in, a graded run out.

`grade`, `eval`, `report` and `compare` all come through :func:`grade_run`, so the same run is
graded the same way everywhere: the same response rule, the same declared-language rule
(`--languages` if given, else the run's system card, else `en`), the same expected table.
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from twinbench.documents import Metrics
from twinbench.grader import (
    ExpectedTable,
    GradedTable,
    Outcome,
    expected_table,
    grade_file,
    grade_rows,
)
from twinbench.jsonl import record_dict
from twinbench.metrics.cost import CostTable, load_cost_table
from twinbench.metrics.summary import summarize
from twinbench.records import FAMILIES, GradedRow, Item, Response
from twinbench.runner import run_languages
from twinbench.runrecord import RunRecord, load_run

RESPONSES = "responses.jsonl"


@dataclass
class ExpectedCache:
    """Expected tables of one item list, one per declared-language set (built once each)."""

    items: Sequence[Item]
    tables: dict[tuple[str, ...], ExpectedTable] = field(default_factory=dict)

    def get(self, languages: tuple[str, ...]) -> ExpectedTable:
        """The table for `languages` (sorted, deduplicated)."""
        key = tuple(sorted(set(languages)))
        if key not in self.tables:
            self.tables[key] = expected_table(self.items, key)
        return self.tables[key]


@dataclass(frozen=True)
class GradedRun:
    """One run after grading: its name, graded rows, declared languages, run record, and the
    responses file it was graded from (None for records passed in memory)."""

    name: str
    table: GradedTable
    languages: tuple[str, ...]
    record: RunRecord | None
    items: Sequence[Item]
    source: Path | None = None

    def rows(self) -> Iterator[GradedRow]:
        """One GradedRow per response, in file order (graded.jsonl)."""
        g, items = self.table, self.items
        system = g.systems[0] if g.systems else "?"
        valid, correct, abstain = g.valid, g.correct, g.abstain
        for n in range(len(g)):
            item = items[int(g.item[n])]
            outcome = Outcome(int(g.outcome[n]))
            reason = int(g.reason[n])
            confidence = float(g.confidence[n])
            yield GradedRow(
                item_id=item.id,
                pair_id=item.pair_id,
                family=FAMILIES[int(g.family[n])],
                answerable=bool(g.answerable[n]),
                system=system,
                trial=int(g.trial[n]),
                permutation=int(g.permutation[n]),
                status="ok" if valid[n] else outcome.label,
                outcome=outcome.label,
                correct=bool(correct[n]) if valid[n] else None,
                abstain=bool(abstain[n]) if valid[n] else None,
                reason=FAMILIES[reason] if reason >= 0 else None,
                confidence=None if math.isnan(confidence) else confidence,
            )

    def metrics(self, costs: CostTable | None = None) -> Metrics:
        """Every metric of this run (the published cost table unless `costs` is given)."""
        summary = summarize(self.table, costs or load_cost_table(), self.languages)
        if self.record is not None:
            summary["system_card"] = self.record.system.model_dump(mode="json")
        return Metrics.model_validate(summary)


def grade_run(
    items: Sequence[Item] | ExpectedCache,
    run: Path | Sequence[Response],
    languages: tuple[str, ...] | None = None,
    *,
    name: str | None = None,
) -> GradedRun:
    """Grade a run folder (its responses.jsonl), a responses file or Response records
    against `items`.

    `languages` overrides the declared languages; otherwise they come from the run.json
    beside the responses (`en` when there is none, as for records). Pass an ExpectedCache to
    grade several runs of one benchmark without rebuilding the expected table for each.
    Problems in records name them as `responses:N` (N counts from 1, like lines).
    """
    cache = items if isinstance(items, ExpectedCache) else ExpectedCache(items)
    if not isinstance(run, Path):
        table = cache.get(languages or ("en",))
        rows = (("responses", n, record_dict(r)) for n, r in enumerate(run, start=1))
        graded, record, source = grade_rows(rows, table), None, None
        name = name or (run[0].system if run else "responses")
    else:
        folder, responses = (run, run / RESPONSES) if run.is_dir() else (run.parent, run)
        table = cache.get(run_languages(folder, languages))
        graded, record, source = grade_file(responses, table), load_run(folder), responses
        name = name or folder.name
    return GradedRun(
        name=name,
        table=graded,
        languages=table.languages,
        record=record,
        items=cache.items,
        source=source,
    )
