"""Commands that run systems: run, eval, systems."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from twinbench.cli.common import (
    LANGUAGES_HELP,
    JsonFlag,
    app,
    console,
    errors,
    parse_languages,
    print_json,
    user_errors,
)
from twinbench.jsonl import InputError

if TYPE_CHECKING:
    from rich.progress import Progress

    from twinbench.runner import RunPlan
    from twinbench.runrecord import RunRecord
    from twinbench.systems.base import System


def _progress_bar() -> Progress:
    from rich.progress import (
        BarColumn,
        MofNCompleteColumn,
        Progress,
        TextColumn,
        TimeElapsedColumn,
        TimeRemainingColumn,
    )

    return Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TextColumn("[progress.data.speed]{task.fields[rate]}"),
        TimeElapsedColumn(),
        TextColumn("ETA"),
        TimeRemainingColumn(),
        console=errors,
    )


BASE_URL_HELP = (
    "HTTP systems' server. openai: the OpenAI base URL with /v1, as the OpenAI SDK takes it "
    "(http://127.0.0.1:8000/v1; /chat/completions is added); laya, jev, typed-decisions: "
    "the server root (http://127.0.0.1:8000; /v1/systemone or /v1/ask is added)"
)

#: the exit code of a run that finished with more failed rows than --max-error-rate allows
EXIT_FAILED_RUN = 3


@dataclass(frozen=True)
class FailurePolicy:
    """What a run does about failures: resend `error` rows, check first, the bound."""

    retry_errors: bool = True
    check: bool = True
    max_error_rate: float | None = 0.05


def _warn_unnamed_model(specs: list[str], model: str | None) -> None:
    """Say so when `openai` would send the model name "default" (none given)."""
    if model is None and "openai" in specs:
        errors.print(
            "note: openai without a model (openai:MODEL or --model): requests name the model "
            "'default', which a server serving one model accepts and others refuse",
            markup=False,
            highlight=False,
        )


def _run_system(
    system: System,
    plan: RunPlan,
    out: Path,
    seed: int,
    benchmark: Path | None = None,
    policy: FailurePolicy = FailurePolicy(),
) -> RunRecord:
    from twinbench.runner import run as run_plan

    total = plan.task_count()
    bar = _progress_bar()  # started at the first response: a failed check prints one line
    task = bar.add_task(f"{system.card.name}", total=total, rate="")
    started = [0.0, 0]

    def progress(sent: int, pending: int) -> None:
        import time

        if not started[0]:
            bar.start()
            started[0] = time.perf_counter()
            started[1] = total - pending
        elapsed = time.perf_counter() - started[0]
        rate = f"{sent / elapsed:.2f} items/s" if elapsed > 0 else ""
        bar.update(task, completed=started[1] + sent, rate=rate)

    def notice(line: str) -> None:
        bar.stop()
        errors.print(line)

    try:
        return run_plan(
            system,
            plan,
            out,
            seed=seed,
            progress=progress,
            benchmark=benchmark,
            notice=notice,
            retry_errors=policy.retry_errors,
            check=policy.check,
            max_error_rate=policy.max_error_rate,
        )
    except KeyboardInterrupt:
        bar.stop()
        errors.print(
            f"interrupted: {out / 'responses.jsonl'} is intact; run the same "
            "command again to resume"
        )
        raise typer.Exit(130) from None
    finally:
        bar.stop()


@app.command()
@user_errors
def run(
    benchmark: Annotated[Path, typer.Option("--benchmark", "-b", help="Benchmark folder")],
    system: Annotated[
        str, typer.Option("--system", "-s", help="System spec; see `twinbench systems`")
    ],
    out: Annotated[
        Path, typer.Option("--out", "-o", help="Run folder (responses.jsonl, run.json)")
    ],
    trials: Annotated[int, typer.Option(min=1, help="Repeat every item this many times")] = 1,
    permutations: Annotated[
        int, typer.Option(min=1, help="Option orders per item (order 0 is the stored one)")
    ] = 1,
    limit: Annotated[int | None, typer.Option(min=1, help="Only the first N items")] = None,
    concurrency: Annotated[
        int,
        typer.Option(
            min=1,
            help="Requests in flight for HTTP systems (a streaming window, no batches); the "
            "whole run's: --shard processes and Ray actors each take an exact share",
        ),
    ] = 4,
    executor: Annotated[
        str,
        typer.Option(
            help="local (this process) or ray[=ADDRESS]: the plan's --shards as Ray tasks, "
            "merged into --out (a local Ray cluster when no ADDRESS is given)"
        ),
    ] = "local",
    shards: Annotated[int, typer.Option(min=1, help="Shards for --executor ray")] = 2,
    chunk: Annotated[
        int | None,
        typer.Option(
            min=1,
            help="--executor ray: tasks per actor call; each chunk reaches disk as it "
            "returns (default: the larger of 64, 8 x --concurrency, 4 x --batch-size)",
        ),
    ] = None,
    shard: Annotated[
        str | None,
        typer.Option(help="Run only slice I/N of the plan (merge the N shards with `merge`)"),
    ] = None,
    max_rps: Annotated[
        float | None,
        typer.Option(
            min=0.001,
            help="At most this many requests per second, for the whole run (shared out "
            "exactly over --shard processes and Ray actors)",
        ),
    ] = None,
    max_tokens_per_s: Annotated[
        float | None,
        typer.Option(
            min=1.0,
            help="At most this many prompt tokens per second (estimated: 4 chars each), for "
            "the whole run (shared out like --max-rps)",
        ),
    ] = None,
    batch_size: Annotated[
        int, typer.Option(min=1, help="Items per call for local systems (batched by length)")
    ] = 16,
    seed: Annotated[
        int, typer.Option(help="Seed for seeded systems (e.g. always-answer:random)")
    ] = 0,
    base_url: Annotated[str | None, typer.Option(help=BASE_URL_HELP)] = None,
    model: Annotated[str | None, typer.Option(help="Model name for HTTP systems")] = None,
    api_key_env: Annotated[
        str | None, typer.Option(help="Environment variable holding the API key (never echoed)")
    ] = None,
    timeout: Annotated[
        float,
        typer.Option(
            min=0.1, help="Deadline per HTTP call in seconds, retries and their waits included"
        ),
    ] = 30.0,
    logprobs: Annotated[
        bool,
        typer.Option(
            help="openai: ask for the answer tokens' log-probabilities (vLLM, SGLang, "
            "llama.cpp return them) and read confidences from them"
        ),
    ] = False,
    answer_format: Annotated[
        str | None,
        typer.Option(
            help="openai: letters (the lettered prompt smollm2 sees, replied as one letter; "
            "the default with --logprobs) or json ({abstain, reason, answer} with the answers "
            "written out; the default without)"
        ),
    ] = None,
    keep_errors: Annotated[
        bool,
        typer.Option(
            "--keep-errors",
            help="On resume, keep the rows with status error (default: send them again)",
        ),
    ] = False,
    check: Annotated[
        bool,
        typer.Option(
            help="HTTP systems: send one request alone first and stop (exit 2) if it fails"
        ),
    ] = True,
    max_error_rate: Annotated[
        float,
        typer.Option(
            min=0.0,
            max=1.0,
            help="Exit 3 (run.json `failed` says why) when more than this share of the rows "
            "are error or invalid",
        ),
    ] = 0.05,
    as_json: JsonFlag = False,
) -> None:
    """Run a system on a benchmark; resumable (the same command continues a stopped run).

    Exit codes: 0 done; 2 bad input or a failed check request (nothing written); 3 finished
    with more error/invalid rows than --max-error-rate; 130 interrupted (resumable)."""
    from twinbench.fitted import fitted_fields
    from twinbench.merging import parse_shard
    from twinbench.runner import RunPlan, load_benchmark, split_limits
    from twinbench.shards import shard_slice
    from twinbench.systems import SystemOptions, make_system
    from twinbench.systems.base import ANSWER_FORMATS

    if answer_format is not None and answer_format not in ANSWER_FORMATS:
        raise InputError(f"--answer-format {answer_format!r}: expected letters or json")
    if shard is not None and executor == "local":  # the slice only (shards.py)
        part = shard_slice(benchmark, parse_shard(shard), trials, permutations, limit)
        plan = RunPlan.of_slice(
            part,
            batch_size=batch_size,
            window=concurrency,
            max_rps=max_rps,
            max_tokens_per_s=max_tokens_per_s,
        )
        fitted = part.options
    else:
        items = load_benchmark(benchmark, limit)
        plan = RunPlan(
            items,
            trials=trials,
            permutations=permutations,
            batch_size=batch_size,
            window=concurrency,
            max_rps=max_rps,
            max_tokens_per_s=max_tokens_per_s,
            shard=None if shard is None else parse_shard(shard),
        )
        fitted = fitted_fields(items)
    options = SystemOptions(
        base_url=base_url,
        model=model,
        api_key_env=api_key_env,
        timeout_s=timeout,
        concurrency=concurrency,
        seed=seed,
        **fitted,
        logprobs=logprobs,
        answer_format=answer_format,
    )
    chosen = make_system(system, options)  # bad options are refused before any note
    _warn_unnamed_model([system], model)
    if plan.shard is not None:  # the limits are the whole run's: this shard takes its share
        plan = split_limits(plan, concurrency, *plan.shard)
    if executor == "ray" or executor.startswith("ray="):
        from twinbench.distributed import RunFailed, run_on_ray

        if shard is not None:
            raise InputError("--shard and --executor ray do not go together (Ray makes the shards)")
        address = executor.partition("=")[2] or None
        bar = _progress_bar()
        job = bar.add_task(f"{chosen.card.name} on Ray ({shards} shards)", total=None, rate="")

        def progress(sent: int, total: int) -> None:
            bar.start()
            bar.update(job, completed=sent, total=total)

        try:
            meta = run_on_ray(
                system,
                chosen.card,
                options,
                plan,
                out,
                shards=shards,
                benchmark=benchmark,
                address=address,
                seed=seed,
                chunk=chunk,
                retry_errors=not keep_errors,
                max_error_rate=max_error_rate,
                progress=progress,
            )
        except RunFailed as exc:
            bar.stop()
            errors.print(f"error: {exc}", markup=False, highlight=False)
            raise typer.Exit(1) from None
        except KeyboardInterrupt:
            bar.stop()
            errors.print(
                f"interrupted: every finished chunk is in {out / 'shards'}; run the same "
                "command again to resume"
            )
            raise typer.Exit(130) from None
        finally:
            bar.stop()
    elif executor == "local":
        policy = FailurePolicy(not keep_errors, check, max_error_rate)
        meta = _run_system(chosen, plan, out, seed, benchmark, policy)
    else:
        raise InputError(f"--executor {executor!r}: expected local or ray[=ADDRESS]")
    counts = ", ".join(f"{k} {v}" for k, v in (meta.counts or {}).items())
    if as_json:
        print_json(meta.model_dump(mode="json", by_alias=True))
    else:
        console.print(
            f"{chosen.card.name}: {meta.responses} responses ({counts}) in "
            f"{out / 'responses.jsonl'}"
        )
    if meta.failed:
        errors.print(f"error: {meta.failed}", markup=False, highlight=False)
        raise typer.Exit(EXIT_FAILED_RUN)


@app.command()
@user_errors
def merge(
    shards: Annotated[list[Path], typer.Argument(help="The shard run folders (any order)")],
    out: Annotated[Path, typer.Option("--out", "-o", help="Folder for the merged run")],
    benchmark: Annotated[
        Path | None,
        typer.Option("--benchmark", "-b", help="The benchmark (default: the one the shards name)"),
    ] = None,
) -> None:
    """Merge the N shards of one plan (`run --shard I/N`) into one run folder.

    Checks that they share the system card, seed, trials, permutations and items, that each of
    0..N-1 is there once and finished, and that each holds exactly its slice; writes
    responses.jsonl in plan order and a run.json naming the shards.
    """
    from twinbench.merging import merge as merge_shards

    record = merge_shards(shards, out, benchmark)
    console.print(f"merged {len(shards)} shards: {record.responses} responses into {out}")


@app.command("eval")
@user_errors
def evaluate(
    out: Annotated[
        Path | None,
        typer.Option(
            "--out", "-o", help="Folder for everything it writes [default: twinbench-out]"
        ),
    ] = None,
    system: Annotated[
        list[str] | None,
        typer.Option(
            "--system",
            "-s",
            help="System spec; repeat for several systems in one command [default: smollm2]",
        ),
    ] = None,
    seed: Annotated[int | None, typer.Option(help="Build seed [default: 0]")] = None,
    per_family: Annotated[
        int | None,
        typer.Option(
            min=0,
            help="Pairs per family sent to each system, spread over the family's generators "
            "(0 = every item of the default build; the default, 120, keeps a 2-core CPU run "
            "of smollm2 under 15 minutes)",
        ),
    ] = None,
    languages: Annotated[str | None, typer.Option(help=LANGUAGES_HELP)] = None,
    base_url: Annotated[str | None, typer.Option(help=BASE_URL_HELP)] = None,
    model: Annotated[str | None, typer.Option(help="HTTP systems: the model name")] = None,
    api_key_env: Annotated[
        str | None, typer.Option(help="Environment variable holding the API key (never echoed)")
    ] = None,
    timeout: Annotated[
        float | None,
        typer.Option(min=0.1, help="HTTP: deadline per call in seconds, retries included [30]"),
    ] = None,
    concurrency: Annotated[
        int | None, typer.Option(min=1, help="HTTP: requests in flight [4]")
    ] = None,
    logprobs: Annotated[
        bool | None, typer.Option(help="openai: read confidences from log-probabilities")
    ] = None,
    answer_format: Annotated[
        str | None, typer.Option(help="openai: letters or json (see `twinbench run --help`)")
    ] = None,
    config: Annotated[
        Path | None,
        typer.Option(
            help="TOML file whose [eval] table gives defaults for these options "
            "[default: ./twinbench.toml when present]"
        ),
    ] = None,
    as_json: JsonFlag = False,
) -> None:
    """The main job: build the default benchmark, run the systems, grade, write the report.

    The benchmark folder holds the full default build; each system answers --per-family pairs
    of each family (all of them with --per-family 0), and the two references (`shortcut`,
    rules that read no meaning, and `abstain-by-form`) answer the same items. HTTP systems
    take the same options as `twinbench run`. Run again with the same options to resume an
    interrupted run. Options given here win over the config file.
    """
    from twinbench.config import load_eval_config
    from twinbench.evaluation import evaluate as run_evaluation
    from twinbench.render import metrics_table
    from twinbench.systems import SystemOptions
    from twinbench.systems.base import ANSWER_FORMATS

    file, read = load_eval_config(config)
    say = errors if as_json else console  # with --json, stdout holds the JSON alone
    if read is not None:
        say.print(f"defaults from {read}", markup=False, highlight=False)

    def pick(given: Any, key: str, default: Any) -> Any:
        return (
            given
            if given is not None
            else getattr(file, key)
            if getattr(file, key) is not None
            else default
        )

    chosen_format = pick(answer_format, "answer_format", None)
    if chosen_format is not None and chosen_format not in ANSWER_FORMATS:
        raise InputError(f"--answer-format {chosen_format!r}: expected letters or json")
    options = SystemOptions(
        base_url=pick(base_url, "base_url", None),
        model=pick(model, "model", None),
        api_key_env=pick(api_key_env, "api_key_env", None),
        timeout_s=pick(timeout, "timeout", 30.0),
        concurrency=pick(concurrency, "concurrency", 4),
        logprobs=pick(logprobs, "logprobs", False),
        answer_format=chosen_format,
    )
    specs = system or file.systems or ["smollm2"]
    _warn_unnamed_model(specs, options.model)
    spoken = pick(languages, "languages", None)
    result = run_evaluation(
        Path(pick(out, "out", "twinbench-out")),
        specs,
        seed=pick(seed, "seed", 0),
        per_family=pick(per_family, "per_family", 120),
        languages=parse_languages(spoken) if spoken else None,
        on_step=lambda line: say.print(line, markup=False, highlight=False),
        run_system=_run_system,
        options=options,
    )
    if as_json:
        print_json(result.report.to_json())
        return
    for folder in result.run_folders:
        metrics = result.report.systems[folder.name]
        console.print(metrics_table(metrics.to_json()))


@app.command()
def systems(as_json: JsonFlag = False) -> None:
    """List the available systems and their spec syntax."""
    from rich.markup import escape
    from rich.table import Table

    from twinbench.systems import available

    if as_json:
        print_json(available())
        return
    table = Table(title="systems (twinbench run --system SPEC)")
    table.add_column("spec", no_wrap=True)
    table.add_column("what it is")
    for name, description in available().items():
        table.add_row(escape(name), escape(description))
    console.print(table)
