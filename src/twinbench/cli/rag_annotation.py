"""`twinbench rag package / label / agreement`: human labels of RAG answers."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Any

import typer

from twinbench.cli.common import console, errors, user_errors
from twinbench.cli.rag import rag_app
from twinbench.jsonl import InputError


@rag_app.command("package")
@user_errors
def package_command(
    answers: Annotated[Path, typer.Argument(help="answers.jsonl (twinbench.rag.answer/1)")],
    out: Annotated[Path, typer.Option("--out", "-o", help="Folder for the blind package")],
    corpus: Annotated[
        Path | None,
        typer.Option(
            "--corpus",
            help="The corpus folder the answers were made over, with its cases.jsonl "
            "(default: the embedded course notes)",
        ),
    ] = None,
    cases: Annotated[
        Path | None, typer.Option(help="cases.jsonl (default: the corpus folder's)")
    ] = None,
    seed: Annotated[int, typer.Option(help="Seed of the blind ids, the sample and the order")] = 0,
    sample: Annotated[
        int | None, typer.Option(min=1, help="Label this many answers, drawn with the seed")
    ] = None,
) -> None:
    """Write a blind labelling package: items, a labels template, the rubric, the key apart."""
    from twinbench.rag.annotation import package
    from twinbench.rag.answering import read_answers
    from twinbench.rag.corpus import COURSE_NOTES, load_corpus
    from twinbench.rag.validate import load_cases

    folder = corpus or COURSE_NOTES
    loaded = load_cases(cases or folder / "cases.jsonl", folder)
    summary = package(
        read_answers(answers),
        {case.case_id: case for case in loaded},
        load_corpus(folder).passages,
        out,
        seed=seed,
        sample=sample,
    )
    failed = ", ".join(f"{n} {status}" for status, n in summary["failed_left_out"].items())
    console.print(
        f"wrote {summary['items']} items ({summary['abstentions']} abstentions, "
        f"{summary['claims']} claims) into {out}"
        + (f"; left out failed answers: {failed}" if failed else "")
        + "; key.json is for after labelling",
        markup=False,
        highlight=False,
        soft_wrap=True,
    )


@rag_app.command("label")
@user_errors
def label_command(
    folder: Annotated[Path, typer.Argument(help="The package folder")],
    annotator: Annotated[str, typer.Option(help="Whose labels this page records")],
    port: Annotated[
        int, typer.Option(help="Port on 127.0.0.1 (default 0: a free port the OS picks)")
    ] = 0,
) -> None:
    """A local page showing one blind answer at a time; each is saved to labels/NAME.jsonl."""
    from twinbench.rag.annotation_page import label_server

    try:
        server = label_server(folder, annotator, port)
    except OSError as exc:
        raise InputError(f"--port {port}: cannot listen on 127.0.0.1 ({exc.strerror})") from None
    console.print(
        f"annotator {annotator}: open http://127.0.0.1:{server.server_address[1]}/ "
        "(Ctrl-C to stop; labels are saved as you go)",
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


def _rate(value: float | None) -> str:
    return "-" if value is None else f"{value:.3f}"


def _print(report: dict[str, Any], names: tuple[str, str]) -> None:
    from rich import box
    from rich.table import Table

    answers, claims = report["answers"], report["claims"]
    failed = ", ".join(f"{n} {s}" for s, n in answers["judge_failed"].items()) or "0"
    table = Table(title="agreement", box=box.SIMPLE_HEAD, show_header=False)
    for label, value in [
        ("answers labelled by both", str(answers["both"])),
        (f"only {names[0]} / only {names[1]}", f"{answers['only_a']} / {answers['only_b']}"),
        ("judge failed (left out)", failed),
        ("claims matched (unmatched)", f"{claims['matched']} ({claims['unmatched']})"),
        ("claim agreement", _rate(claims["agreement"])),
        ("Cohen's kappa (3 labels)", _rate(claims["kappa"])),
    ]:
        table.add_row(label, value)
    for key, label in [
        ("answer_level", "answers with every claim equal"),
        ("relevance", "relevance equal"),
        ("abstention_appropriate", "abstention verdict equal"),
    ]:
        part = report[key]
        table.add_row(label, f"{part['agree']} of {part['answers']} ({_rate(part['rate'])})")
    table.add_row("relevance kappa", _rate(report["relevance"]["kappa"]))
    console.print(table)
    confusion = Table(title=f"rows {names[0]}, columns {names[1]}", box=box.SIMPLE_HEAD)
    confusion.add_column("")
    for name in claims["confusion"]["labels"]:
        confusion.add_column(name, justify="right")
    for name, row in zip(claims["confusion"]["labels"], claims["confusion"]["table"], strict=True):
        confusion.add_row(name, *map(str, row))
    console.print(confusion)


@rag_app.command("agreement")
@user_errors
def agreement_command(
    folder: Annotated[Path, typer.Argument(help="The package folder")],
    labels_a: Annotated[Path, typer.Argument(help="One annotator's labels (JSON Lines)")],
    labels_b: Annotated[
        Path | None, typer.Argument(help="Another annotator's labels (or give --judgements)")
    ] = None,
    judgements: Annotated[
        Path | None,
        typer.Option(help="A judge's judgements.jsonl to compare LABELS_A with, instead"),
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the report as JSON")] = False,
) -> None:
    """Claim-level agreement of two labellings: raw, Cohen's kappa, confusion, relevance."""
    from twinbench.rag.agreement import agreement
    from twinbench.rag.annotation import open_package
    from twinbench.rag.labels import read_judgements, read_labels

    if (labels_b is None) == (judgements is None):
        raise InputError("give LABELS_B or --judgements (exactly one)")
    blind = open_package(folder)
    first = read_labels(labels_a, blind)
    if judgements is not None:
        packaged = set(blind.key.values())
        judged = read_judgements(judgements)
        second: Any = [j for j in judged if (j.case_id, j.variant, j.trial) in packaged]
        names = (labels_a.stem, "judge")
    else:
        assert labels_b is not None
        second, names = read_labels(labels_b, blind), (labels_a.stem, labels_b.stem)
    report = agreement(first, second)
    if as_json:
        typer.echo(json.dumps({"a": names[0], "b": names[1], **report}, indent=2))
        return
    _print(report, names)
    if report["claims"]["matched"] == 0:
        errors.print("no claim is labelled by both sides", markup=False, highlight=False)
