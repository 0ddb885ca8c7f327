"""The API's arguments, resolved in one place: paths, records, systems and languages.

A file or folder is a `str` or an `os.PathLike`; records are a non-empty sequence of `Item` or
`Response`; a system is a spec string or an object with a `card` and `respond`. Anything else
is one InputError line that names the argument, what was given and what is accepted:

    graded_run: items must be a benchmark folder, an items.jsonl path or a sequence of Item
    records; got int 3
"""

from __future__ import annotations

import os
import reprlib
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import TypeGuard, TypeVar, cast

from pydantic import BaseModel

from twinbench.jsonl import InputError
from twinbench.records import Item, Response
from twinbench.runner import load_benchmark
from twinbench.systems.base import System, SystemCard

PathArg = str | os.PathLike[str]
ItemsArg = PathArg | Sequence[Item]
ResponsesArg = PathArg | Sequence[Response]
SystemArg = System | str
LanguagesArg = str | Sequence[str] | None

FOLDER = "a folder path (str or os.PathLike)"
BENCHMARK = "a benchmark folder, an items.jsonl path or a sequence of Item records"
RESPONSES = "a run folder, a responses.jsonl path or a sequence of Response records"
RUN = "a run folder or a responses.jsonl path"
RUNS = "a sequence of run folders or responses.jsonl paths"
SYSTEM = (
    "a system spec such as 'smollm2' (`twinbench systems` lists them) or an object with a "
    "card (SystemCard) and respond(requests)"
)
LANGUAGES = "language codes such as ['en', 'es'] or 'en,es'"
COSTS = "a cost table path (TOML or JSON)"

T = TypeVar("T", bound=BaseModel)
_SHORT = reprlib.Repr()  # keyword arguments need Python 3.12
_SHORT.maxstring = _SHORT.maxother = 40
_SHORT.maxlist = _SHORT.maxtuple = _SHORT.maxdict = 3


def given(value: object) -> str:
    """What a caller passed, short: `int 3`, `list of str ['a', 'b']`, `dict {'id': 1}`."""
    kind = type(value).__name__
    if isinstance(value, list | tuple):
        names = list(dict.fromkeys(type(v).__name__ for v in value))
        kind = f"{kind} of {', '.join(names)}" if names else f"empty {kind}"
    return f"{kind} {_SHORT.repr(value)}"


def wrong(where: str, value: object, accepted: str) -> InputError:
    """The InputError for an argument of the wrong form."""
    return InputError(f"{where} must be {accepted}; got {given(value)}")


def is_path(value: object) -> TypeGuard[PathArg]:
    """Whether `value` is given as a path (a str or an os.PathLike)."""
    return isinstance(value, str | os.PathLike)


def path(value: object, where: str, accepted: str = FOLDER) -> Path:
    """`value` as a Path, if it is a non-empty str or a str os.PathLike."""
    if is_path(value):
        text = os.fspath(value)
        if isinstance(text, str) and text:
            return Path(text)
    raise wrong(where, value, accepted)


def existing(value: object, where: str, accepted: str) -> Path:
    """`value` as the Path of a file or folder that exists."""
    found = path(value, where, accepted)
    if not found.exists():
        raise InputError(f"{found}: no such file or folder ({where})")
    return found


def records(value: object, model: type[T], where: str, accepted: str) -> list[T]:
    """`value` as a non-empty list of `model` records."""
    single = isinstance(value, str | bytes | Mapping | BaseModel)  # iterable, yet one thing
    if single or not isinstance(value, Iterable):
        raise wrong(where, value, accepted)
    out = list(value)
    bad = [n for n, v in enumerate(out) if not isinstance(v, model)]
    if out and bad and len(bad) < len(out):  # mostly records: name the first stray one
        n = bad[0]
        kind = type(value).__name__
        raise InputError(f"{where} must be {accepted}; got a {kind} whose [{n}] is {given(out[n])}")
    if not out or bad:
        raise wrong(where, value if isinstance(value, list | tuple) else out, accepted)
    return out


def items(value: object, where: str, limit: int | None = None) -> list[Item]:
    """The items of a benchmark folder, an items.jsonl file or a sequence of Item records."""
    if is_path(value):
        return load_benchmark(existing(value, where, BENCHMARK), limit)
    chosen = records(value, Item, where, BENCHMARK)
    return chosen[:limit] if limit is not None else chosen


def responses(value: object, where: str) -> Path | list[Response]:
    """A run folder or responses.jsonl path (checked to exist), or Response records."""
    if is_path(value):
        return existing(value, where, RESPONSES)
    return records(value, Response, where, RESPONSES)


def runs(value: object, where: str) -> list[Path]:
    """Run folders or responses.jsonl paths, each checked to exist."""
    if is_path(value) or isinstance(value, bytes | Mapping) or not isinstance(value, Iterable):
        raise wrong(where, value, RUNS)
    given_runs = list(value)
    if not all(is_path(v) for v in given_runs):
        raise wrong(where, given_runs, RUNS)
    return [existing(v, where, RUN) for v in given_runs]


def system(value: object, where: str) -> SystemArg:
    """A spec string, or an instance with a SystemCard `card` and a callable `respond`."""
    if isinstance(value, str) and value:
        return value
    if isinstance(value, type) and isinstance(getattr(value, "card", None), SystemCard):
        raise InputError(
            f"{where} must be {SYSTEM}; got the class {value.__name__}, not an instance "
            f"(pass {value.__name__}())"
        )
    card = getattr(value, "card", None)
    if isinstance(card, SystemCard) and callable(getattr(value, "respond", None)):
        return cast(System, value)
    raise wrong(where, value, SYSTEM)


def languages(value: object, where: str) -> tuple[str, ...] | None:
    """Declared languages: 'en,es' or a sequence of codes; None or empty: the run's card."""
    if value is None or (isinstance(value, Sequence) and len(value) == 0):
        return None
    if isinstance(value, str):
        codes = tuple(part.strip() for part in value.split(",") if part.strip())
    elif isinstance(value, Sequence) and all(isinstance(v, str) and v for v in value):
        codes = tuple(value)
    else:
        raise wrong(where, value, LANGUAGES)
    if not codes:
        raise wrong(where, value, LANGUAGES)
    return codes
