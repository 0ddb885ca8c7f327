"""The items index: what a shard reads instead of parsing every line of items.jsonl.

`twinbench build` writes `items.index.jsonl` beside `items.jsonl` and lists it in the manifest,
so `check_manifest` verifies it as it verifies the items. JSON Lines, read as a stream:

- line 1, the header: `schema`, `items` (how many), `items_sha256` (the sha256 of
  items.jsonl, which is also the items' digest `runner.items_digest`, run.json's
  `items_sha256`: build writes each item as the JSON line that the digest hashes) and
  `options` (the `SystemOptions` fields fitted to the whole benchmark, `fitted.py`);
- then one line per item, in file order: `[id, offset, length]`, the item's bytes in
  items.jsonl being `offset:offset + length`.

A shard needs every id and the digest to find its tasks in the plan's blind order, and the
lines of its own items only (`slicing.py`); reading the index line by line, it holds neither
the ids nor the offsets of the other items. An index whose `items_sha256` is not the
manifest's hash of items.jsonl (the items rewritten since) is not used.
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any, Final, Literal

import numpy as np
import numpy.typing as npt
import orjson
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from twinbench.jsonl import (
    InputError,
    atomic_write,
    describe_validation_error,
    dumps_line,
    sha256_file,
)

INDEX_NAME: Final = "items.index.jsonl"
INDEX_SCHEMA: Final = "twinbench.index/1"


class IndexHeader(BaseModel):
    """The first line of items.index.jsonl (see the module docstring)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    schema_: Literal["twinbench.index/1"] = Field(INDEX_SCHEMA, alias="schema")
    items: int = Field(ge=0)
    items_sha256: str
    options: dict[str, Any]


def line_offsets(path: Path) -> list[int]:
    """Where each line of `path` starts, then the file's size (lines end with a newline, as
    `write_jsonl` writes them; JSON text holds no raw newline)."""
    starts, size = [0], 0
    with path.open("rb") as handle:
        while chunk := handle.read(1 << 24):
            newlines = np.flatnonzero(np.frombuffer(chunk, dtype=np.uint8) == ord("\n"))
            starts.extend((newlines + size + 1).tolist())
            size += len(chunk)
    if starts[-1] != size:  # a last line without its newline
        starts.append(size)
    return starts


def write_index(path: Path, items: Path, ids: Sequence[str], options: dict[str, Any]) -> None:
    """Write the index of the items file `items`, whose lines are the items `ids`, to `path`."""
    offsets = line_offsets(items)
    if len(offsets) != len(ids) + 1:
        raise ValueError(f"{items}: {len(offsets) - 1} lines for {len(ids)} item ids")
    header = IndexHeader(items=len(ids), items_sha256=sha256_file(items), options=options)
    with atomic_write(path, "wb") as handle:
        handle.write(dumps_line(header.model_dump(mode="json", by_alias=True)))
        for n, item_id in enumerate(ids):
            handle.write(dumps_line([item_id, offsets[n], offsets[n + 1] - offsets[n]]))


class IndexedItems:
    """A benchmark's items as its index gives them (`slicing.PlanItems`): nothing parsed."""

    def __init__(self, folder: Path, header: IndexHeader) -> None:
        self.index, self.source = folder / INDEX_NAME, folder / "items.jsonl"
        self.count, self.digest, self.fitted = header.items, header.items_sha256, header.options

    def rows(self) -> Iterator[tuple[str, int, int]]:
        """(id, offset, length) of each item, in file order, read line by line."""
        lineno = 1
        with self.index.open("rb") as handle:
            handle.readline()
            for lineno, line in zip(range(2, self.count + 2), handle, strict=False):
                try:
                    item_id, offset, length = orjson.loads(line)
                except (orjson.JSONDecodeError, ValueError, TypeError):
                    raise InputError(f"{self.index}:{lineno}: not [id, offset, length]") from None
                yield item_id, offset, length
            if self.count and lineno != self.count + 1:
                raise InputError(f"{self.index}: fewer lines than its {self.count} items")

    def ids(self) -> Iterator[str]:
        """Every item id, in file order."""
        return (item_id for item_id, _, _ in self.rows())

    def pick(self, numbers: npt.NDArray[np.int64]) -> tuple[list[str], list[bytes]]:
        """The ids and JSON lines of the items `numbers` (0-based, ascending)."""
        wanted = iter(numbers.tolist())
        ids: list[str] = []
        spans: list[tuple[int, int]] = []
        following = next(wanted, None)
        for n, (item_id, offset, length) in enumerate(self.rows()):
            if n == following:
                ids.append(item_id)
                spans.append((offset, length))
                following = next(wanted, None)
                if following is None:
                    break
        with self.source.open("rb") as handle:
            fd = handle.fileno()
            return ids, [os.pread(fd, length, offset) for offset, length in spans]

    def options(self) -> dict[str, Any]:
        """The fitted system options the index records."""
        return self.fitted


def read_index(folder: Path, manifest: dict[str, Any]) -> IndexedItems | None:
    """`folder`'s items through its index, or None when its manifest (already checked by
    `check_manifest`) lists none or one made for other items."""
    files = manifest.get("files", {})
    if INDEX_NAME not in files:
        return None
    path = folder / INDEX_NAME
    with path.open("rb") as handle:
        first = handle.readline()
    try:
        header = IndexHeader.model_validate_json(first)
    except ValidationError as exc:
        problem = describe_validation_error(exc)
        raise InputError(f"{path}:1: not an items index header ({problem})") from None
    if header.items_sha256 != files.get("items.jsonl"):
        return None
    return IndexedItems(folder, header)
