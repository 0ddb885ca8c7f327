"""The shared pieces of the command line: the app, consoles, error handling."""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import ParamSpec, TypeVar

import typer
from rich.console import Console

from twinbench.jsonl import InputError

app = typer.Typer(
    help="Build, run and grade benchmarks of unanswerable items with answerable twins.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
)
console = Console(emoji=False)
errors = Console(stderr=True, emoji=False)
P = ParamSpec("P")
R = TypeVar("R")
MAX_PROBLEMS = 20


def user_errors(func: Callable[P, R]) -> Callable[P, R]:
    """Turn InputError into one line on stderr and exit code 2 (no traceback)."""

    @functools.wraps(func)
    def wrapper(*args: P.args, **kwargs: P.kwargs) -> R:
        try:
            return func(*args, **kwargs)
        except InputError as exc:
            errors.print(f"error: {exc}", markup=False, highlight=False, soft_wrap=True)
            raise typer.Exit(2) from None

    return wrapper


def parse_languages(text: str) -> tuple[str, ...]:
    """Parse a comma-separated language list such as `en,es`."""
    languages = tuple(part.strip() for part in text.split(",") if part.strip())
    if not languages:
        raise InputError(f"--languages: expected a comma-separated list, got {text!r}")
    return languages
