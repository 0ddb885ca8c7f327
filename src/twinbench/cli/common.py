"""The shared pieces of the command line: the app, consoles, error handling."""

from __future__ import annotations

import contextlib
import functools
import math
import os
import sys
from collections.abc import Callable, Iterator, Sequence
from typing import Annotated, Any, ParamSpec, TextIO, TypeVar

import typer
from rich.console import Console
from typer._click.exceptions import ClickException, NoArgsIsHelpError
from typer.core import TyperGroup
from typer.exceptions import Abort

from twinbench.jsonl import InputError


def _given(args: Any, param: Any) -> str:
    """`; given VALUE` for the option a usage error names, read from the command line."""
    argv = list(sys.argv[1:] if args is None else args)
    for flag in getattr(param, "opts", None) or []:
        for at, token in enumerate(argv):
            if token == flag and at + 1 < len(argv):
                return f"; given {argv[at + 1]!r}"
            if token.startswith(flag + "="):
                return f"; given {token[len(flag) + 1 :]!r}"
    return ""


class OneLineErrors(TyperGroup):
    """The root group: a usage error (an unknown option, a value out of its range, a missing
    or unreadable file argument) is one `error:` line naming the command, the option, the
    value and what is allowed, exit 2, the style of every other twinbench error (typer's
    framed panel named neither in its first line)."""

    def main(
        self,
        args: Sequence[str] | None = None,
        prog_name: str | None = None,
        complete_var: str | None = None,
        standalone_mode: bool = True,
        windows_expand_args: bool = True,
        **extra: Any,
    ) -> Any:
        def call(standalone: bool) -> Any:
            return super(OneLineErrors, self).main(
                args, prog_name, complete_var, standalone, windows_expand_args, **extra
            )

        if not standalone_mode:
            return call(False)
        try:
            code = call(False)
        except NoArgsIsHelpError as exc:
            errors.print(exc.format_message(), markup=False, highlight=False)
            sys.exit(exc.exit_code)
        except ClickException as exc:
            ctx = getattr(exc, "ctx", None)
            path = getattr(ctx, "command_path", "") or ""
            where = " ".join(["twinbench", *path.split()[1:]])
            message = " ".join(exc.format_message().split())
            value = _given(args, getattr(exc, "param", None))
            errors.print(
                f"error: {where}: {message}{value} (see {where} --help)",
                markup=False,
                highlight=False,
                soft_wrap=True,
            )
            sys.exit(exc.exit_code)
        except Abort:
            errors.print("aborted", markup=False, highlight=False)
            sys.exit(1)
        sys.exit(code if isinstance(code, int) else 0)


app = typer.Typer(
    cls=OneLineErrors,
    help="Build, run and grade benchmarks of unanswerable items with answerable twins.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    context_settings={"help_option_names": ["-h", "--help"]},
)


def _width(stream: TextIO) -> int | None:
    """None (rich measures the terminal) on a terminal; else $COLUMNS or 200, so a table
    piped to a file or `less` is not cut at rich's default of 80 columns."""
    if stream.isatty():
        return None
    columns = os.environ.get("COLUMNS", "")
    return int(columns) if columns.isdigit() and int(columns) > 0 else PIPED_WIDTH


PIPED_WIDTH = 200
console = Console(emoji=False, width=_width(sys.stdout))
errors = Console(stderr=True, emoji=False, width=_width(sys.stderr))


def _version(value: bool) -> None:
    if value:
        from twinbench import __version__

        console.print(f"twinbench {__version__}", markup=False, highlight=False)
        raise typer.Exit()


@app.callback()
def _root(
    version: Annotated[
        bool,
        typer.Option(
            "--version", callback=_version, is_eager=True, help="Print the version and exit"
        ),
    ] = False,
) -> None:
    """Build, run and grade benchmarks of unanswerable items with answerable twins."""


P = ParamSpec("P")
R = TypeVar("R")
MAX_PROBLEMS = 20
# one declared-language rule in every command (twinbench.runner.run_languages)
LANGUAGES_HELP = (
    "Declared languages, e.g. en,es (default: the languages of the run's system card in its "
    "run.json; en when there is no run.json)"
)


def os_problem(exc: OSError) -> str:
    """One line for a file-system error: `PATH: what went wrong` (no errno noise)."""
    where = exc.filename if exc.filename is not None else "?"
    if exc.filename2 is not None:
        where = f"{where} -> {exc.filename2}"
    what = {
        IsADirectoryError: "is a folder, expected a file",
        NotADirectoryError: "a part of this path is a file, expected a folder",
        FileExistsError: "already exists and is not a folder",
        PermissionError: "permission denied",
        FileNotFoundError: "no such file or folder",
    }.get(type(exc), exc.strerror or str(exc))
    return f"{where}: {what}"


def _finite(options: dict[str, Any]) -> None:
    """Refuse a float option that is nan or infinite: typer's range checks (`min=`) let
    `nan` through, as every comparison with it is false, and `inf` through any lower bound."""
    for name, value in options.items():
        if isinstance(value, float) and not math.isfinite(value):
            option = "--" + name.replace("_", "-")
            raise InputError(f"{option} {value}: expected a finite number")


def user_errors(func: Callable[P, R]) -> Callable[P, R]:
    """Turn bad input into one line on stderr and exit code 2 (no traceback).

    InputError carries its own `FILE:LINE: problem`; file-system errors (an --out that is a
    file, an unwritable folder, a full disk) and undecodable text are reported the same way.
    """

    @functools.wraps(func)
    def wrapper(*args: P.args, **kwargs: P.kwargs) -> R:
        try:
            _finite(kwargs)
            return func(*args, **kwargs)
        except InputError as exc:
            message = str(exc)
        except OSError as exc:
            message = os_problem(exc)
        except UnicodeDecodeError as exc:
            message = f"input is not valid UTF-8 (byte {exc.start}: {exc.reason})"
        errors.print(f"error: {message}", markup=False, highlight=False, soft_wrap=True)
        raise typer.Exit(2) from None

    return wrapper


#: `--json` on every command that prints results: the machine-readable form on stdout only
JsonFlag = Annotated[
    bool, typer.Option("--json", help="Print the result as JSON on stdout, nothing else")
]


def print_json(document: Any) -> None:
    """`document` as the project's canonical JSON on stdout (what `--json` prints)."""
    from twinbench.jsonl import dumps_json

    sys.stdout.write(dumps_json(document))


def parse_languages(text: str) -> tuple[str, ...]:
    """Parse a comma-separated language list such as `en,es`."""
    languages = tuple(part.strip() for part in text.split(",") if part.strip())
    if not languages:
        raise InputError(f"--languages: expected a comma-separated list, got {text!r}")
    return languages


@contextlib.contextmanager
def stage_bar() -> Iterator[Callable[[str, int, int], None]]:
    """A progress bar on stderr for work in named stages; yields `report(stage, done, total)`.

    Each new stage restarts the bar (its count, elapsed time and ETA); the bar is removed when
    the work ends, so the tables printed after it stand alone. Off when stderr is not a
    terminal (a log gets no bar frames)."""
    from rich.progress import (
        BarColumn,
        MofNCompleteColumn,
        Progress,
        TextColumn,
        TimeElapsedColumn,
        TimeRemainingColumn,
    )

    columns = (
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        TextColumn("ETA"),
        TimeRemainingColumn(),
    )
    with Progress(*columns, console=errors, transient=True, disable=not errors.is_terminal) as bar:
        task = bar.add_task("starting", total=None)
        current = [""]

        def report(stage: str, done: int, total: int) -> None:
            if stage != current[0]:
                current[0] = stage
                bar.reset(task, total=total, description=stage)
            bar.update(task, completed=done, total=total)

        yield report
