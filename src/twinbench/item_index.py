"""The items index: what a shard reads instead of parsing every line of items.jsonl.

`twinbench build` writes `items.index.json` beside `items.jsonl` and lists it in the manifest,
so `check_manifest` verifies it as it verifies the items. One compact JSON document:

- `items_sha256`: the sha256 of items.jsonl. It is also the items' digest
  (`runner.items_digest`, run.json's `items_sha256`): build writes each item as the JSON line
  that the digest hashes, so the file's bytes are what the digest reads;
- `ids`: every item id, in file order;
- `offsets`: where each line starts, then the file's size: line i is bytes
  `offsets[i]:offsets[i + 1]`;
- `options`: the `SystemOptions` fields fitted to the whole benchmark (`systems.fitted`).

A shard needs every id and the digest to find its tasks in the plan's blind order, and the
lines of its own items only (`slicing.py`). An index whose `items_sha256` is not the
manifest's hash of items.jsonl (the items rewritten since) is not used.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any, Final, Literal

import numpy as np
import orjson
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from twinbench.jsonl import InputError, atomic_write, describe_validation_error, sha256_file

INDEX_NAME: Final = "items.index.json"
INDEX_SCHEMA: Final = "twinbench.index/1"


class ItemIndex(BaseModel):
    """items.index.json (see the module docstring)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    schema_: Literal["twinbench.index/1"] = Field(INDEX_SCHEMA, alias="schema")
    items_sha256: str
    ids: list[str]
    offsets: list[int]
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
    document = {
        "schema": INDEX_SCHEMA,
        "items_sha256": sha256_file(items),
        "ids": list(ids),
        "offsets": offsets,
        "options": options,
    }
    with atomic_write(path, "wb") as handle:
        handle.write(orjson.dumps(document, option=orjson.OPT_APPEND_NEWLINE))


def read_index(folder: Path, manifest: dict[str, Any]) -> ItemIndex | None:
    """The index of `folder`'s items.jsonl, or None when its manifest (already checked by
    `check_manifest`) lists none or one made for other items."""
    files = manifest.get("files", {})
    if INDEX_NAME not in files:
        return None
    path = folder / INDEX_NAME
    try:
        index = ItemIndex.model_validate_json(path.read_bytes())
    except ValidationError as exc:
        raise InputError(f"{path}: not an items index ({describe_validation_error(exc)})") from None
    if index.items_sha256 != files.get("items.jsonl"):
        return None
    if len(index.offsets) != len(index.ids) + 1:
        raise InputError(f"{path}: {len(index.ids)} ids but {len(index.offsets)} offsets")
    return index
