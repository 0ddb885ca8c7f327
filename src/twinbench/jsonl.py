"""JSON Lines reading with `FILE:LINE: problem` errors, and atomic writing."""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import re
import tempfile
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import IO, Any, TypeVar

import orjson
from pydantic import BaseModel, ValidationError

T = TypeVar("T", bound=BaseModel)
_BOM = b"\xef\xbb\xbf"


class InputError(Exception):
    """Bad user input; the message is one line naming the file (and line) and the problem."""


def check_readable(path: Path) -> None:
    """Raise InputError unless `path` is an existing, non-empty regular file."""
    if not path.exists():
        raise InputError(f"{path}: no such file")
    if not path.is_file():
        raise InputError(f"{path}: not a file")
    if path.stat().st_size == 0:
        raise InputError(f"{path}: file is empty (expected one JSON object per line)")


def read_text(path: Path | str) -> str:
    """The text of a UTF-8 file (without a leading byte-order mark); a byte that is not UTF-8
    is an InputError naming its line."""
    try:
        data = Path(path).read_bytes()
    except OSError as exc:
        raise InputError(f"{path}: cannot read ({exc.strerror or exc})") from None
    data = data.removeprefix(_BOM)
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        problem = f"not UTF-8 text (byte 0x{data[exc.start]:02x})"
        raise InputError(f"{path}:{line}: {problem}") from None


def sha256_file(path: Path) -> str:
    """The hex sha256 of a file's bytes (manifests record it; readers check it)."""
    with path.open("rb") as handle:  # read in chunks: a 1 GB items.jsonl is not held
        return hashlib.file_digest(handle, "sha256").hexdigest()


def _json_problem(path: Path, lineno: int, line: bytes, exc: Exception) -> InputError:
    text = line.decode("utf-8", "replace").strip()
    if lineno == 1 and "," in text and not text.startswith(("{", "[")):
        return InputError(f"{path}:1: looks like CSV, not JSON Lines (one JSON object per line)")
    return InputError(f"{path}:{lineno}: invalid JSON ({exc})")


_SPACED_KEY = re.compile(rb'"\s+:')


def _key_count(obj: Any) -> int:
    if isinstance(obj, dict):
        return len(obj) + sum(_key_count(v) for v in obj.values())
    if isinstance(obj, list):
        return sum(_key_count(v) for v in obj)
    return 0


def _no_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    seen: dict[str, Any] = {}
    for key, value in pairs:
        if key in seen:
            raise ValueError(f"duplicate key {key!r}")
        seen[key] = value
    return seen


def duplicate_key(line: bytes, obj: Any) -> str | None:
    """The problem if the JSON text `line` (parsed as `obj`) repeats a key in one object.

    orjson keeps the last of repeated keys silently. Every key in the text is a string closed
    by `"` and followed by `:`, so when no key has whitespace before its colon, the text holds
    at most `line.count(b'":')` keys; a repeated key would make the parsed count smaller. Only
    lines where that count differs (or spaced colons) are re-parsed with a checking hook, which
    keeps the common line on the fast path.
    """
    keys = line.count(b'":')
    if line.count(b"{") == 1 and keys == len(obj) and not _SPACED_KEY.search(line):
        return None  # one object, no nesting: the common response row, checked in C speed
    if not _SPACED_KEY.search(line) and keys == _key_count(obj):
        return None
    try:
        json.loads(line, object_pairs_hook=_no_duplicates)
    except ValueError as exc:
        return str(exc)
    return None


def iter_json_lines(path: Path) -> Iterator[tuple[int, Any]]:
    """Yield (line number, parsed object) for each non-blank line; raise InputError on bad JSON.

    A UTF-8 byte-order mark on the first line is skipped; a repeated key in one object is an
    error (JSON parsers differ on which copy wins, so the file is ambiguous).
    """
    check_readable(path)
    seen = False
    with path.open("rb") as handle:
        for lineno, line in enumerate(handle, start=1):
            if lineno == 1 and line.startswith(_BOM):
                line = line[len(_BOM) :]
            if not line.strip():
                continue
            try:
                obj = orjson.loads(line)
            except orjson.JSONDecodeError as exc:
                raise _json_problem(path, lineno, line, exc) from None
            duplicate = duplicate_key(line, obj)
            if duplicate:
                raise InputError(f"{path}:{lineno}: {duplicate}")
            if not isinstance(obj, dict):
                raise InputError(
                    f"{path}:{lineno}: expected a JSON object, got {type(obj).__name__}"
                )
            seen = True
            yield lineno, obj
    if not seen:
        raise InputError(f"{path}: file is empty (expected one JSON object per line)")


def describe_validation_error(exc: ValidationError) -> str:
    """Return the first pydantic error as `field.path: message` (plus a count of the rest)."""
    errors = exc.errors()
    first = errors[0]
    loc = ".".join(str(part) for part in first["loc"] if part not in ("choice", "score", "noul"))
    text = f"{loc}: {first['msg']}" if loc else str(first["msg"])
    if len(errors) > 1:
        text += f" (and {len(errors) - 1} more)"
    return text


def load_models(path: Path, model: type[T], errors: list[str] | None = None) -> list[tuple[int, T]]:
    """Read and validate every line of `path` as `model`.

    With `errors=None` the first problem raises InputError; otherwise problems are appended
    to `errors` as `FILE:LINE: problem` lines and reading goes on (bad JSON still stops it,
    since the rest of the file cannot be trusted to be line-aligned).
    """
    records: list[tuple[int, T]] = []
    try:
        for lineno, obj in iter_json_lines(path):
            try:
                records.append((lineno, model.model_validate(obj)))
            except ValidationError as exc:
                problem = f"{path}:{lineno}: {describe_validation_error(exc)}"
                if errors is None:
                    raise InputError(problem) from None
                errors.append(problem)
    except InputError as exc:
        if errors is None:
            raise
        errors.append(str(exc))
    return records


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


@contextlib.contextmanager
def atomic_write(path: Path, mode: str = "w") -> Iterator[IO[Any]]:
    """Open a temp file beside `path`; rename it over `path` only if the block succeeds."""
    path.parent.mkdir(parents=True, exist_ok=True)
    # the pid in the name lets `outputs.recover` sweep temp files of processes that died
    fd, tmp = tempfile.mkstemp(
        prefix=f".{path.name}.twb-{os.getpid()}-", suffix=".tmp", dir=path.parent
    )
    try:
        encoding = None if "b" in mode else "utf-8"
        with os.fdopen(fd, mode, encoding=encoding) as handle:
            yield handle
            handle.flush()
            os.fsync(handle.fileno())
        os.chmod(tmp, 0o666 & ~_umask())  # mkstemp makes 0600; give the usual file mode
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise


def _default(obj: Any) -> Any:
    if hasattr(obj, "item") and hasattr(obj, "dtype"):  # numpy scalar
        return obj.item()
    raise TypeError(f"cannot serialise {type(obj).__name__}")


def dumps_line(obj: Any) -> bytes:
    """Serialise one object as a JSON line (key order kept, UTF-8, trailing newline)."""
    return orjson.dumps(obj, default=_default, option=orjson.OPT_APPEND_NEWLINE)


def record_dict(record: BaseModel) -> dict[str, Any]:
    """Return the JSON-ready dict of a record, with field aliases (`schema`) and no Nones."""
    return record.model_dump(mode="json", by_alias=True, exclude_none=True)


def write_jsonl(path: Path, rows: Iterable[BaseModel | dict[str, Any]]) -> int:
    """Atomically write `rows` as JSON Lines; return how many were written."""
    count = 0
    with atomic_write(path, "wb") as handle:
        for row in rows:
            handle.write(dumps_line(record_dict(row) if isinstance(row, BaseModel) else row))
            count += 1
    return count


def read_json(path: Path) -> Any:
    """One JSON document from `path`; invalid JSON is an InputError naming the file."""
    try:
        return orjson.loads(path.read_bytes())
    except orjson.JSONDecodeError as exc:
        raise InputError(f"{path}: invalid JSON ({exc})") from None


def dumps_json(obj: Any) -> str:
    """Serialise one JSON document (indented, sorted keys, trailing newline)."""
    options = orjson.OPT_INDENT_2 | orjson.OPT_SORT_KEYS
    return orjson.dumps(obj, default=_default, option=options).decode("utf-8") + "\n"


def write_json(path: Path, obj: Any) -> None:
    """Atomically write one JSON document (indented, sorted keys, trailing newline)."""
    with atomic_write(path) as handle:
        handle.write(dumps_json(obj))
