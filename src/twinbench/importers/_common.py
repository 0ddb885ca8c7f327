"""Helpers shared by importers: Hugging Face loading, option deduplication, distractors.

A source path of the form ``hf:NAME[:CONFIG[:SPLIT]]`` is read with Hugging Face ``datasets``
(an optional dependency, imported only here). NAME is a hub dataset (``nyu-mll/multi_nli``)
or a local folder: one written by ``Dataset.save_to_disk`` / ``DatasetDict.save_to_disk``, or
one holding data files (parquet, JSON Lines, CSV) as a hub snapshot does. CONFIG may name
several configs joined by commas (``en,es,ru``); for a local folder each config is its
subfolder, as in the hub's per-config layout. Each row carries the config it came from in
`_config` and its position in that config's split in `_row`.

Official files are read with `read_text` and `csv_rows`, and fields checked with `required`,
so that bad input is one `InputError` naming the file, the line (a CSV file's row number,
the header being row 1) and what is wrong.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from twinbench.jsonl import InputError, read_text
from twinbench.normalize import normalize_option


def hf_rows(spec: Path | str, split: str) -> list[dict[str, Any]] | None:
    """Rows of `hf:NAME[:CONFIG[:SPLIT]]` (`split` unless the spec names one); None otherwise."""
    text = str(spec)
    if not text.startswith("hf:"):
        return None
    try:
        import datasets  # optional: only for hf: paths
    except ImportError:
        raise InputError(f"{text}: reading hf: paths needs `pip install datasets`") from None
    name, _, rest = text[3:].partition(":")
    config, _, named_split = rest.partition(":")
    rows: list[dict[str, Any]] = []
    for one in config.split(",") if config else [""]:
        loaded = _load(datasets, text, name, one.strip(), named_split or split)
        rows.extend({**row, "_config": one.strip() or None, "_row": i} for i, row in loaded)
    return rows


def _load(
    datasets: Any, spec: str, name: str, config: str, split: str
) -> Iterable[tuple[int, dict[str, Any]]]:
    """(position, row) of one config's split, from a local folder or the hub."""
    folder = Path(name)
    try:
        if folder.is_dir():
            if config and (folder / config).is_dir():
                folder = folder / config
            if (folder / "dataset_dict.json").is_file() or (folder / "state.json").is_file():
                loaded = datasets.load_from_disk(str(folder))
            else:
                loaded = datasets.load_dataset(str(folder))
            dataset = _split_of(loaded, split, spec)
        else:
            dataset = datasets.load_dataset(name, config or None, split=split)
    except InputError:
        raise
    except Exception as exc:  # network, unknown name, unreadable folder: one clear line
        raise InputError(f"{spec}: cannot load with Hugging Face datasets ({exc})") from None
    return ((i, dict(row)) for i, row in enumerate(dataset))


def _split_of(loaded: Any, split: str, spec: str) -> Any:
    """The `split` of a DatasetDict (its only split if it has one); a Dataset as it is."""
    if not hasattr(loaded, "keys"):
        return loaded
    splits = list(loaded.keys())
    if split in splits:
        return loaded[split]
    if len(splits) == 1:
        return loaded[splits[0]]
    raise InputError(f"{spec}: no split {split!r} (the folder has {', '.join(splits)})")


def csv_rows(
    path: Path | str, columns: Sequence[str], what: str, **dialect: Any
) -> list[tuple[int, dict[str, str]]]:
    """(row number, row) of a CSV file whose header (row 1) has `columns` among its own.

    Blank rows are skipped but counted; a row with more or fewer fields than the header is an
    InputError naming its row, as is a header without `columns` (`what` names the format).
    """
    reader = csv.reader(io.StringIO(read_text(path), newline=""), **dialect)
    rows: list[tuple[int, dict[str, str]]] = []
    try:
        header = next(reader, [])
        missing = [c for c in columns if c not in header]
        if missing:
            raise InputError(
                f"{path}:1: expected {what} columns {', '.join(columns)} "
                f"(missing: {', '.join(missing)})"
            )
        for number, fields in enumerate(reader, start=2):
            if not fields:
                continue
            if len(fields) != len(header):
                raise InputError(
                    f"{path}:{number}: {len(fields)} fields, the header has {len(header)}"
                )
            rows.append((number, dict(zip(header, fields, strict=True))))
    except csv.Error as exc:
        raise InputError(f"{path}:{reader.line_num}: not {what} CSV ({exc})") from None
    return rows


_KINDS = {str: "a string", list: "a list", dict: "an object", bool: "true or false"}


def type_name(value: Any) -> str:
    """The JSON name of a value's type: null, int, str, list, dict, ..."""
    return "null" if value is None else type(value).__name__


def required(row: dict[str, Any], key: str, kind: type, where: str) -> Any:
    """`row[key]`, which must be a `kind`; else an InputError `WHERE: missing key 'KEY'` or
    `WHERE: 'KEY' must be a string, got int`."""
    if key not in row:
        raise InputError(f"{where}: missing key {key!r}")
    value = row[key]
    if not isinstance(value, kind) or (kind is not bool and isinstance(value, bool)):
        raise InputError(
            f"{where}: {key!r} must be {_KINDS.get(kind, kind.__name__)}, got {type_name(value)}"
        )
    return value


def hf_where(spec: Path | str, row: dict[str, Any]) -> str:
    """Where an `hf:` row came from, for messages: `hf:NAME: row 12` (`[config]` if any)."""
    config = f" [{row['_config']}]" if row.get("_config") else ""
    return f"{spec}: row {row.get('_row', '?')}{config}"


def distinct_options(options: Iterable[str]) -> list[str]:
    """`options` without empty ones and without later ones equal to an earlier one after the
    published normalisation (`normalize_option`), in their order."""
    seen: set[str] = set()
    kept: list[str] = []
    for option in options:
        key = normalize_option(option)
        if key and key not in seen:
            seen.add(key)
            kept.append(option)
    return kept


def pick_distractors(pool: Sequence[str], exclude: Iterable[str], k: int, seed: int) -> list[str]:
    """Up to `k` strings from `pool`, chosen with `seed`, that differ from each other and from
    every string in `exclude` after the published normalisation."""
    banned = {normalize_option(e) for e in exclude}
    candidates = [
        c for c in distinct_options(sorted(set(pool))) if normalize_option(c) not in banned
    ]
    if not candidates:
        return []
    order = np.random.default_rng(seed).permutation(len(candidates))
    return [candidates[i] for i in order[:k]]
