"""`twinbench rag metrics | compare | fuse`: score TREC runs, compare two, fuse several."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated

import typer
from rich.table import Table

from twinbench.cli.common import console, user_errors
from twinbench.cli.rag import rag_app
from twinbench.jsonl import InputError, dumps_json
from twinbench.rag.fusion import DEFAULT_OFFSET, fuse_runs
from twinbench.rag.metrics import (
    DEFAULT_METRICS,
    GAIN_NOTE,
    Evaluation,
    QueryStatus,
    evaluate,
    paired_comparison,
    parse_metrics,
    with_judged,
)
from twinbench.rag.trec import read_qrels, read_run, write_run
from twinbench.render import fmt_p

QRELS_HELP = "Qrels file: QID 0 DOCID GRADE per line"
RUN_HELP = "Run file: QID Q0 DOCID RANK SCORE TAG per line (ranked by score, ties by DOCID)"
METRICS_HELP = "Comma-separated metrics at cutoffs: recall@K, mrr@K, ndcg@K, judged@K"
SHOWN = 8  # query ids listed in a note before "…"


def _fmt(value: float | None, digits: int = 4) -> str:
    return "—" if value is None else f"{value:.{digits}f}"


def _ids(qids: list[str]) -> str:
    more = f", … ({len(qids) - SHOWN} more)" if len(qids) > SHOWN else ""
    return ", ".join(qids[:SHOWN]) + more


def _notes(result: Evaluation, accounting: bool = True) -> list[str]:
    """Lines on which queries are averaged in and which are not (`accounting`), and on the
    queries the run lacks or holds unjudged."""
    counts = result.counts()
    lines = []
    if accounting:
        lines.append(f"{counts['evaluated']} queries with a relevant passage are averaged in")
    if accounting and counts["no_relevant"]:
        lines.append(
            f"{counts['no_relevant']} with no relevant passage are counted apart, not averaged "
            f"in: {_ids(result.queries(QueryStatus.NO_RELEVANT))}"
        )
    if counts["empty_ranking"]:
        lines.append(
            f"{counts['empty_ranking']} of them are not in the run: evaluated with an empty "
            f"ranking (they score 0): {_ids(result.missing())}"
        )
    if counts["not_in_qrels"]:
        lines.append(
            f"{counts['not_in_qrels']} of the run have no judgments: not scored: "
            f"{_ids(result.queries(QueryStatus.NOT_IN_QRELS))}"
        )
    return lines


@rag_app.command("metrics")
@user_errors
def metrics_command(
    qrels: Annotated[Path, typer.Argument(help=QRELS_HELP)],
    run: Annotated[Path, typer.Argument(help=RUN_HELP)],
    metrics: Annotated[str, typer.Option(help=METRICS_HELP)] = DEFAULT_METRICS,
    per_query: Annotated[bool, typer.Option("--per-query", help="Also print every query")] = False,
    as_json: Annotated[bool, typer.Option("--json", help="Print the JSON only")] = False,
) -> None:
    """Recall@k, MRR@k, nDCG@k (gain 2^g − 1) and judged@k of a run against qrels."""
    chosen = with_judged(parse_metrics(metrics))
    result = evaluate(read_qrels(qrels), read_run(run), chosen)
    if as_json:
        sys.stdout.write(dumps_json(result.as_dict()))
        return
    grid = Table(title=f"retrieval metrics of {run.name}", caption=GAIN_NOTE)
    for column in ("metric", "mean", "formula"):
        grid.add_column(column, justify="right" if column == "mean" else "left")
    for metric, mean in zip(chosen, result.means().values(), strict=True):
        grid.add_row(metric.label, _fmt(mean), metric.kind.formula)
    console.print(grid)
    for line in _notes(result):
        console.print(f"queries: {line}", markup=False, highlight=False)
    if per_query:
        rows = Table(title="per query", caption=GAIN_NOTE)
        labels = [m.label for m in chosen]
        rows.add_column("query", no_wrap=True)
        rows.add_column("status", overflow="fold")
        for column in ("rel", "ranked", *labels):
            rows.add_column(column, justify="right", no_wrap=True)
        for qid, row in sorted(result.per_query.items()):
            status = str(row.status) + ("" if row.in_run else ", not in run")
            values = [_fmt(row.scores[label], 3) for label in labels]
            rows.add_row(qid, status, str(row.relevant), str(row.retrieved), *values)
        console.print(rows)


@rag_app.command("compare")
@user_errors
def compare_command(
    qrels: Annotated[Path, typer.Argument(help=QRELS_HELP)],
    run_a: Annotated[Path, typer.Argument(help="Run A, the baseline (" + RUN_HELP + ")")],
    run_b: Annotated[Path, typer.Argument(help="Run B, compared with A")],
    metrics: Annotated[str, typer.Option(help=METRICS_HELP)] = DEFAULT_METRICS,
    seed: Annotated[int, typer.Option(help="Seed of the bootstrap and the sign-flip test")] = 7,
    resamples: Annotated[int, typer.Option(min=100, help="Bootstrap resamples")] = 10_000,
    draws: Annotated[int, typer.Option(min=100, help="Sign-flip draws")] = 20_000,
    as_json: Annotated[bool, typer.Option("--json", help="Print the JSON only")] = False,
) -> None:
    """Paired per-query differences B − A: mean, query-bootstrap 95% CI, sign-flip p."""
    judged = read_qrels(qrels)
    result = paired_comparison(
        judged, read_run(run_a), read_run(run_b), metrics, seed, resamples, draws
    )
    if as_json:
        sys.stdout.write(dumps_json(result.as_dict()))
        return
    grid = Table(
        title=f"B − A per query: A = {run_a.name}, B = {run_b.name}",
        caption=f"{GAIN_NOTE}; 95% CI: queries resampled (seed {seed}); two-sided sign-flip p; "
        "up/down: queries where B scores higher/lower",
    )
    for column in ("metric", "A", "B", "B − A [95% CI]", "p", "up/down"):
        grid.add_column(column, justify="left" if column == "metric" else "right", no_wrap=True)
    for c in result.comparisons:
        d = c.difference
        grid.add_row(
            c.label,
            f"{c.mean_a:.3f}",
            f"{c.mean_b:.3f}",
            f"{d.estimate:+.3f} [{d.low:+.3f}, {d.high:+.3f}]",
            fmt_p(c.test.p_value),
            f"{len(c.improved)}/{len(c.worsened)}",
        )
    console.print(grid)
    for line in _notes(result.a):
        console.print(f"queries (A): {line}", markup=False, highlight=False)
    for line in _notes(result.b, accounting=False):
        console.print(f"queries (B): {line}", markup=False, highlight=False)


@rag_app.command("fuse")
@user_errors
def fuse_command(
    runs: Annotated[list[Path], typer.Argument(help="Two or more run files to fuse")],
    out: Annotated[
        Path, typer.Option("--out", "-o", help="The fused run file (written atomically)")
    ],
    offset: Annotated[int, typer.Option(min=0, help="RRF offset: 1 / (offset + rank)")] = (
        DEFAULT_OFFSET
    ),
    tag: Annotated[str, typer.Option(help="The TAG column of the fused run")] = "rrf",
) -> None:
    """Reciprocal rank fusion: Σ 1 / (offset + rank) per passage, ties by passage id."""
    if len(runs) < 2:
        raise InputError("fuse: expected two or more run files")
    if not tag or any(ch.isspace() for ch in tag):
        raise InputError(f"--tag: {tag!r} must be one word (it is a TREC column)")
    fused = fuse_runs([read_run(path) for path in runs], offset)
    # full precision: a reader re-ranks by score, and fused scores can differ below 1e-6
    write_run(out, fused, tag, score_format=".17g")
    console.print(
        f"wrote {out}: {len(fused)} queries fused from {len(runs)} runs (RRF offset {offset})",
        markup=False,
        highlight=False,
    )
