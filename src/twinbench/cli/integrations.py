"""`twinbench export hf|lm-eval`: a benchmark in another tool's format (docs/integrations.md).

The matching readers are kinds of `twinbench import` (`inspect`, `lm-eval`, `hf:DIR`), in
cli/building.py, beside the dataset importers.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from twinbench.cli.common import app, console, user_errors

export_app = typer.Typer(
    help="Write a benchmark in another tool's format: a Hugging Face dataset (Parquet + card) "
    "or an lm-evaluation-harness task folder.",
    no_args_is_help=True,
)
app.add_typer(export_app, name="export")

BENCH_HELP = "The benchmark folder (from twinbench build)"


@export_app.command("hf")
@user_errors
def export_hf_command(
    benchmark: Annotated[Path, typer.Argument(help=BENCH_HELP)],
    out: Annotated[Path, typer.Option("--out", "-o", help="Folder for the Parquet files + card")],
) -> None:
    """Parquet splits of the public items (never the holdout) and a dataset card (README.md).

    Load it with `datasets.load_dataset("parquet", data_dir=OUT)`; `twinbench import hf:OUT`
    reads it back into items.jsonl, byte for byte.
    """
    from twinbench.integrations.hf import export_hf

    done = export_hf(benchmark, out)
    console.print(done.summary(), soft_wrap=True)


@export_app.command("lm-eval")
@user_errors
def export_lm_eval_command(
    benchmark: Annotated[Path, typer.Argument(help=BENCH_HELP)],
    out: Annotated[Path, typer.Option("--out", "-o", help="Folder for the task (YAML + utils.py)")],
    name: Annotated[
        str | None, typer.Option(help="Task name (default: twinbench_ + the folder's name)")
    ] = None,
) -> None:
    """An lm-evaluation-harness task folder whose process_results applies twinbench's exact rule.

    Run it with `lm_eval --include_path OUT --tasks NAME --log_samples --output_path LOGS`, then
    `twinbench import lm-eval LOGS/…/samples_NAME_….jsonl --benchmark BENCH --out RUN`.
    """
    from twinbench.integrations.lm_eval import export_lm_eval

    done = export_lm_eval(benchmark, out, name)
    console.print(done.summary(), soft_wrap=True)
