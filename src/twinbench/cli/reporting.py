"""Commands that read results: report, compare, audit."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Annotated

import typer

from twinbench.cli.common import (
    LANGUAGES_HELP,
    app,
    console,
    parse_languages,
    user_errors,
)
from twinbench.jsonl import InputError, dumps_json
from twinbench.outputs import write_set


@app.command()
@user_errors
def report(
    folders: Annotated[
        list[Path],
        typer.Argument(
            help="Run folders (responses.jsonl) and/or report folders (runs/*/, e.g. what "
            "`eval` writes)"
        ),
    ],
    benchmark: Annotated[
        Path | None,
        typer.Option(
            "--benchmark",
            "-b",
            help="Benchmark folder (default: a report folder's benchmark/, else the one "
            "run.json names)",
        ),
    ] = None,
    out: Annotated[
        Path | None,
        typer.Option(
            "--out",
            "-o",
            help="Folder for metrics.json, report.md, report.html (default: the folder given, "
            "when it is one report folder; else twinbench-report)",
        ),
    ] = None,
    languages: Annotated[str | None, typer.Option(help=LANGUAGES_HELP)] = None,
    seed: Annotated[int, typer.Option(help="Seed of the bootstrap and the sign-flip tests")] = 7,
    as_json: Annotated[bool, typer.Option("--json", help="Print the metrics JSON only")] = False,
) -> None:
    """Grade runs once each; write metrics.json, report.md and report.html (paired analysis).

    `twinbench report OUT` reads what `eval` wrote; `twinbench report RUN_A RUN_B -b BENCH
    -o DIR` reports on runs made with `build` and `run` wherever they are.
    """
    from twinbench.reporter import (
        benchmark_for,
        build_report,
        grade_folders,
        report_markdown,
        write_report,
    )

    declared = parse_languages(languages) if languages else None
    single = len(folders) == 1 and not (folders[0] / "responses.jsonl").is_file()
    target = out if out is not None else folders[0] if single else Path("twinbench-report")
    bench = benchmark_for(folders, benchmark)
    built = build_report(grade_folders(folders, bench, declared), seed, bench)
    write_report(target, built)
    if as_json:
        sys.stdout.write(dumps_json(built.to_json()))
        return
    from rich.markdown import Markdown

    console.print(Markdown(report_markdown(built.to_json())))
    console.print(f"wrote {target / 'metrics.json'}, {target / 'report.md'} and report.html")


@app.command()
@user_errors
def compare(
    runs: Annotated[list[Path], typer.Argument(help="Two or more run folders (responses.jsonl)")],
    benchmark: Annotated[
        Path | None,
        typer.Option(
            "--benchmark", "-b", help="Benchmark folder (default: the one run.json names)"
        ),
    ] = None,
    out: Annotated[
        Path, typer.Option("--out", "-o", help="Folder for compare.json/.md/.html")
    ] = Path("twinbench-compare"),
    languages: Annotated[str | None, typer.Option(help=LANGUAGES_HELP)] = None,
    seed: Annotated[int, typer.Option(help="Seed of the bootstrap and the tests")] = 7,
    as_json: Annotated[bool, typer.Option("--json", help="Print the JSON only")] = False,
    baseline: Annotated[
        str | None,
        typer.Option(help="Compare every other run with this system (its card name) only"),
    ] = None,
) -> None:
    """Paired differences between runs, in the order given: intervals, sign-flip p, Holm."""
    from twinbench.api import compare as compare_runs
    from twinbench.comparison import compare_html, compare_markdown

    override = parse_languages(languages) if languages else None
    result = compare_runs(
        runs, benchmark=benchmark, languages=override, seed=seed, baseline=baseline
    ).to_json()
    write_set(
        out,
        {
            "compare.json": dumps_json(result),
            "compare.md": compare_markdown(result),
            "compare.html": compare_html(result),
        },
    )
    if as_json:
        sys.stdout.write(dumps_json(result))
        return
    from rich.table import Table

    from twinbench.render import fmt_p

    grid = Table(title="paired differences A − B (95% cluster-bootstrap CI; Holm-adjusted p)")
    for column in ("A − B", "family", "metric", "A", "B", "A − B [95% CI]", "p", "Holm p"):
        grid.add_column(
            column, justify="left" if column in ("A − B", "family", "metric") else "right"
        )
    for r in result["comparisons"]:
        d = r["difference"]
        grid.add_row(
            f"{r['a']} − {r['b']}",
            r["family"],
            r["metric"],
            f"{r['value_a']:.3f}",
            f"{r['value_b']:.3f}",
            f"{d['estimate']:+.3f} [{d['low']:+.3f}, {d['high']:+.3f}]",
            fmt_p(r["test"]["p_value"]),
            fmt_p(r["test"]["holm_p"]),
        )
    console.print(grid)
    console.print(f"wrote {out / 'compare.json'}, {out / 'compare.md'}, {out / 'compare.html'}")


audit_app = typer.Typer(
    help="Audit a benchmark: leakage probes and the human audit.", no_args_is_help=True
)
app.add_typer(audit_app, name="audit")


@audit_app.command("similarity")
@user_errors
def audit_similarity_command(
    benchmark: Annotated[Path, typer.Argument(help="Benchmark folder or items.jsonl")],
    bound: Annotated[float, typer.Option(help="Largest acceptable probe AUC")] = 0.65,
    seed: Annotated[int, typer.Option(help="Seed of the folds' bootstrap")] = 0,
    perplexity: Annotated[
        bool,
        typer.Option(help="Add the perplexity-band probe (SmolLM2 NLL of each state; slow)"),
    ] = False,
    as_json: Annotated[bool, typer.Option("--json", help="Print the JSON only")] = False,
) -> None:
    """Can a probe tell items from twins? Cross-validated AUC per generator and feature set.

    Probes: length, word n-grams, a trained probe (character n-grams + simple counts), every
    relational rule, and (--perplexity) SmolLM2's NLL. Each is read between pairs (AUC) and
    within pairs (share of pairs whose item scores above its twin); a version over the bound on
    either is marked, and `build --strict` refuses it.
    """
    from rich.table import Table

    from twinbench.audit.similarity import audit_similarity, smollm2_perplexity
    from twinbench.runner import load_benchmark

    result = audit_similarity(
        load_benchmark(benchmark),
        bound=bound,
        seed=seed,
        perplexity=smollm2_perplexity if perplexity else None,
    )
    if as_json:
        sys.stdout.write(dumps_json(result))
        return
    grid = Table(
        title=f"similarity audit (bound: AUC <= {bound:g}; --json has 95% pair-bootstrap CIs)"
    )
    probes = list(dict.fromkeys(p for g in result["generators"].values() for p in g["auc"]))
    # the generator@version is what a reader acts on: never wrap it
    grid.add_column("generator", no_wrap=True)
    grid.add_column("pairs", justify="right")
    for p in probes:
        grid.add_column(p.replace("_", " "), justify="right")
    grid.add_column("within pairs (max)", justify="right")
    grid.add_column("shortcut ideal pairs", justify="right")
    grid.add_column("verdict")
    for name, g in result["generators"].items():
        cells = []
        for p in probes:
            a = g["auc"].get(p)
            text = "-" if a is None else f"{a['auc']:.2f}"
            cells.append(f"[bold red]{text}[/]" if p in g["over_bound"] else text)
        top = max(g["within_pair"], key=lambda p: g["within_pair"][p]["auc"])
        text = f"{g['within_pair'][top]['auc']:.2f} {top.replace('_', ' ')}"
        cells.append(f"[bold red]{text}[/]" if f"within:{top}" in g["over_bound"] else text)
        verdict = "ok" if g["passes"] else "OVER: " + ", ".join(g["over_bound"])
        if g["exempt"]:
            verdict += f" (exempt from {', '.join(g['exempt'])})"
        rate = g["shortcut"]["ideal_pair_rate"]
        shortcut = f"{rate['estimate']:.2f} [{rate['low']:.2f}, {rate['high']:.2f}]"
        grid.add_row(name, str(g["pairs"]), *cells, shortcut, verdict)
    console.print(grid)


@audit_app.command("sample")
@user_errors
def audit_sample(
    items: Annotated[Path, typer.Argument(help="A JSONL file whose rows carry stratum fields")],
    strata: Annotated[str, typer.Option(help="Comma-separated (dotted) stratum fields")] = (
        "family,generator.name"
    ),
    n: Annotated[int, typer.Option("--n", min=1, help="Sample size")] = 60,
    seed: Annotated[int, typer.Option(help="Sampling seed")] = 0,
    out: Annotated[Path, typer.Option("--out", "-o", help="Sample file to write")] = Path(
        "audit-sample.jsonl"
    ),
) -> None:
    """Stratified sample (small strata over-drawn; each row records its stratum's share)."""
    from twinbench.audit.human import sample
    from twinbench.jsonl import iter_json_lines, write_jsonl

    rows = [row for _, row in iter_json_lines(items)]
    by_id = {row.get("id"): row for row in rows}
    targets = [r for r in rows if r.get("answerable") is not True]  # items, not their twins
    fields = [f.strip() for f in strata.split(",") if f.strip()]
    drawn = sample(targets, fields, n, seed)
    for entry in drawn:
        entry["twin"] = by_id.get(entry["row"].get("twin_id"))
    write_jsonl(out, drawn)
    console.print(
        f"sampled {len(drawn)} of {len(targets)} rows into {out} "
        f"({len({str(e['stratum']) for e in drawn})} strata)"
    )


@audit_app.command("package")
@user_errors
def audit_package(
    sample_file: Annotated[Path, typer.Argument(help="The file `audit sample` wrote")],
    annotators: Annotated[str, typer.Option(help="Comma-separated annotator names")] = "a,b,c",
    out: Annotated[Path, typer.Option("--out", "-o", help="Package folder")] = Path(
        "audit-package"
    ),
    seed: Annotated[int, typer.Option(help="Seed of blind ids and per-annotator orders")] = 0,
    rubric: Annotated[Path | None, typer.Option(help="Rubric JSON (default: built in)")] = None,
) -> None:
    """Blind two-pass annotation packages per annotator, verdict templates, and the KEY."""
    from twinbench.audit.human import package
    from twinbench.jsonl import iter_json_lines

    entries = [row for _, row in iter_json_lines(sample_file)]
    twins = {e["twin"]["id"]: e["twin"] for e in entries if e.get("twin")}
    questions = json.loads(rubric.read_text("utf-8"))["questions"] if rubric else None
    names = [a.strip() for a in annotators.split(",") if a.strip()]
    package(entries, twins, names, out, seed, questions)
    console.print(
        f"wrote pass 1 and pass 2 files for {', '.join(names)}, verdict templates in "
        f"{out / 'verdicts'}, and {out / 'KEY.json'} (keep it from the annotators)"
    )


@audit_app.command("score")
@user_errors
def audit_score(
    folder: Annotated[Path, typer.Argument(help="The package folder with filled verdicts")],
    threshold_field: Annotated[
        str | None, typer.Option(help="Numeric (dotted) field for a threshold analysis")
    ] = None,
    errata: Annotated[Path, typer.Option(help="Errata file to write or extend")] = Path(
        "errata.json"
    ),
    seed: Annotated[int, typer.Option(help="Bootstrap seed")] = 0,
) -> None:
    """Majority verdicts, Fleiss' kappa, reweighted error rate, and a versioned errata file."""
    from twinbench.audit.human import extend_errata, score

    result = score(folder, threshold_field, seed=seed)
    document = extend_errata(errata, result.pop("errata")["entries"])
    version = document["version"]
    # both files checked and made before either is written; one folder: one output set
    files = {errata.resolve(): document, (folder / "audit-score.json").resolve(): result}
    for where in dict.fromkeys(path.parent for path in files):
        texts = {p.name: dumps_json(d) for p, d in files.items() if p.parent == where}
        write_set(where, texts)
    rate = result["error_rate"]
    kappas = ", ".join(
        f"{q} {k:.3f}" if k is not None else f"{q} undefined (every vote the same)"
        for q, k in result["fleiss_kappa"].items()
    )
    console.print(
        f"{result['items']} items, {result['audited_wrong']} audited wrong; "
        f"population error rate {rate['estimate']:.3f} [{rate['low']:.3f}, "
        f"{rate['high']:.3f}] (reweighted by stratum share); Fleiss' kappa: {kappas}"
    )
    console.print(f"wrote {errata} (version {version}) and {folder / 'audit-score.json'}")


@audit_app.command("serve")
@user_errors
def audit_serve(
    folder: Annotated[Path, typer.Argument(help="The package folder")],
    annotator: Annotated[str, typer.Option(help="Whose verdicts this page records")],
    port: Annotated[
        int, typer.Option(help="Port on 127.0.0.1 (default 0: a free port the OS picks)")
    ] = 0,
) -> None:
    """A local web page showing one blind item at a time; every verdict is saved at once."""
    from twinbench.audit.serve import Session, make_server

    try:
        server = make_server(Session(folder, annotator), port)
    except OSError as exc:
        raise InputError(f"--port {port}: cannot listen on 127.0.0.1 ({exc.strerror})") from None
    console.print(
        f"annotator {annotator}: open http://127.0.0.1:{server.server_address[1]}/ "
        "(Ctrl-C to stop; verdicts are saved as you go)",
        markup=False,
        highlight=False,
        soft_wrap=True,
    )
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        console.print("stopped")
    finally:
        server.server_close()
