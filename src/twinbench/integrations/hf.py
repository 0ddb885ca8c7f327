"""Hugging Face datasets: a benchmark's public items as Parquet + a dataset card, and back.

`export_hf` writes OUT/data/test-00000-of-00001.parquet (one row per public item; held-out
items never go out) and OUT/README.md, the card with the Hub's YAML metadata (`hf_card`). The
Parquet file's key-value metadata `twinbench` holds what a benchmark folder needs beside its
items (seed, ratio, generator rows, licence) and the sha256 of items.jsonl. `import_hf` rebuilds
each Item from its row and refuses the folder unless the items serialise to exactly that
sha256, so items.jsonl comes back byte for byte. Nested parts whose shape varies (a score
legend, an answer that is text, a number or a boolean, provenance) are JSON text columns.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Sequence
from dataclasses import dataclass
from importlib.metadata import metadata
from pathlib import Path
from typing import Any, Final, Literal

import orjson
from pydantic import BaseModel, ConfigDict, ValidationError

from twinbench.builder import write_benchmark
from twinbench.integrations import require
from twinbench.integrations.hf_card import card
from twinbench.jsonl import (
    InputError,
    describe_validation_error,
    dumps_line,
    load_models,
    record_dict,
)
from twinbench.outputs import fsync_path, output_set
from twinbench.records import ITEM_SCHEMA, ChoiceQuestion, Item, Manifest, ScoreQuestion
from twinbench.runner import check_manifest

EXPORT_FORMAT: Final = "twinbench.hf/1"
#: the one Parquet file of an export (the Hub's `SPLIT-SHARD-of-SHARDS` naming)
PARQUET: Final = "data/test-00000-of-00001.parquet"
METADATA_KEY: Final = b"twinbench"


@dataclass(frozen=True)
class Column:
    """One Parquet column: its name, its type (`json`: text holding JSON) and what it holds."""

    name: str
    kind: Literal["string", "bool", "int64", "list[string]", "json"]
    meaning: str


COLUMNS: Final = (
    Column("id", "string", "the item's id"),
    Column("pair_id", "string", "shared by an unanswerable item and its answerable twin"),
    Column("answerable", "bool", "false: the right response abstains, giving `family`"),
    Column("family", "string", "the reason code an abstention must give (for a twin: its pair's)"),
    Column("generator", "string", "the generator that made the item"),
    Column("generator_version", "string", "that generator's version"),
    Column("seed", "int64", "the item's seed (option permutations draw from it)"),
    Column("split", "string", "always `public`: held-out items are never exported"),
    Column("language", "string", "the language of the state and question (ISO 639-1)"),
    Column("state", "string", "the text the question is about"),
    Column("adversarial", "bool", "marked adversarial by its generator"),
    Column("question_type", "string", "`choice`, `score` (a rubric) or `noul` (yes/no)"),
    Column("instructions", "string", "the question"),
    Column("options", "list[string]", "choice: the options (null otherwise)"),
    Column("abstain_option", "string", "choice: the text of an explicit abstain option, if any"),
    Column("legend", "json", "score: label → number, a JSON object (null otherwise)"),
    Column("expected_abstain", "bool", "true: the right response abstains"),
    Column("expected_reason", "string", "the reason code the abstention must give (or null)"),
    Column(
        "expected_answer",
        "json",
        "the right answer as JSON: option text, legend value or "
        "true/false (null when the right response abstains)",
    ),
    Column("twin_id", "string", "the id of the other item of the pair (null: unpaired)"),
    Column(
        "answer_if_supported",
        "json",
        "out_of_language items: the answer, as JSON, if the language were declared",
    ),
    Column("provenance", "json", "what the generator edited, a JSON object"),
)


class ExportRecord(BaseModel):
    """The `twinbench` key-value metadata of an exported Parquet file."""

    model_config = ConfigDict(extra="forbid", frozen=True, allow_inf_nan=False)

    format: Literal["twinbench.hf/1"]
    item_schema: Literal["twinbench.item/1"]
    items: int
    items_sha256: str
    twinbench_version: str
    seed: int
    ratio: dict[str, int]
    generators: list[dict[str, Any]]
    license: str


@dataclass(frozen=True)
class HFExport:
    """What `export_hf` wrote."""

    out: Path
    items: int
    unanswerable: int
    items_sha256: str

    def summary(self) -> str:
        """One line: what was written, counts, path."""
        return (
            f"exported {self.items} public items ({self.unanswerable} unanswerable, "
            f"{self.items - self.unanswerable} answerable; holdout never exported) to "
            f"{self.out / PARQUET} and the dataset card {self.out / 'README.md'}; load it with "
            f'datasets.load_dataset("parquet", data_dir="{self.out}")'
        )


@dataclass(frozen=True)
class HFImport:
    """What `import_hf` wrote."""

    source: Path
    out: Path
    items: int
    items_sha256: str

    def summary(self) -> str:
        """One line: what was written, counts, path."""
        return (
            f"imported {self.items} items from {self.source} into {self.out / 'items.jsonl'} "
            f"(sha256 {self.items_sha256[:12]}…, the exported benchmark's, byte for byte)"
        )


def _json(value: Any) -> str | None:
    return None if value is None else orjson.dumps(value).decode("utf-8")


def item_row(item: Item) -> dict[str, Any]:
    """The Parquet row of an item, in COLUMNS order."""
    data, question = record_dict(item), item.question
    expected = data["expected"]
    return {
        "id": item.id,
        "pair_id": item.pair_id,
        "answerable": item.answerable,
        "family": item.family.value,
        "generator": item.generator.name,
        "generator_version": item.generator.version,
        "seed": item.seed,
        "split": item.split,
        "language": item.language,
        "state": item.state,
        "adversarial": item.adversarial,
        "question_type": question.type,
        "instructions": question.instructions,
        "options": question.options if isinstance(question, ChoiceQuestion) else None,
        "abstain_option": question.abstain_option if isinstance(question, ChoiceQuestion) else None,
        "legend": _json(data["question"]["legend"])
        if isinstance(question, ScoreQuestion)
        else None,
        "expected_abstain": item.expected.abstain,
        "expected_reason": expected.get("reason"),
        "expected_answer": _json(expected.get("answer")),
        "twin_id": item.twin_id,
        "answer_if_supported": _json(data.get("answer_if_supported")),
        "provenance": _json(data["provenance"]),
    }


def _loads(row: dict[str, Any], column: str) -> Any:
    text = row[column]
    if not isinstance(text, str):
        raise ValueError(f"{column}: expected JSON text, got {type(text).__name__}")
    try:
        return orjson.loads(text)
    except orjson.JSONDecodeError:
        raise ValueError(f"{column}: not JSON ({text[:40]!r})") from None


def row_item(row: dict[str, Any]) -> Item:
    """The Item a Parquet row holds (ValueError or ValidationError if it is not a valid one)."""
    question: dict[str, Any] = {"type": row["question_type"], "instructions": row["instructions"]}
    for key in ("options", "abstain_option"):
        if row[key] is not None:
            question[key] = row[key]
    if row["legend"] is not None:
        question["legend"] = _loads(row, "legend")
    expected: dict[str, Any] = {"abstain": row["expected_abstain"]}
    if row["expected_reason"] is not None:
        expected["reason"] = row["expected_reason"]
    if row["expected_answer"] is not None:
        expected["answer"] = _loads(row, "expected_answer")
    obj: dict[str, Any] = {
        "schema": ITEM_SCHEMA,
        **{key: row[key] for key in ("id", "pair_id", "answerable", "family")},
        "generator": {"name": row["generator"], "version": row["generator_version"]},
        **{key: row[key] for key in ("seed", "split", "language", "state", "adversarial")},
        "question": question,
        "expected": expected,
        "provenance": _loads(row, "provenance"),
    }
    if row["twin_id"] is not None:
        obj["twin_id"] = row["twin_id"]
    if row["answer_if_supported"] is not None:
        obj["answer_if_supported"] = _loads(row, "answer_if_supported")
    return Item.model_validate(obj)


def items_bytes(items: Sequence[Item]) -> bytes:
    """items.jsonl as twinbench writes it."""
    return b"".join(dumps_line(record_dict(item)) for item in items)


def _arrow_schema(pa: Any, record: ExportRecord) -> Any:
    types = {
        "string": pa.string(),
        "json": pa.string(),
        "bool": pa.bool_(),
        "int64": pa.int64(),
        "list[string]": pa.list_(pa.string()),
    }
    fields = [pa.field(c.name, types[c.kind]) for c in COLUMNS]
    return pa.schema(fields, metadata={METADATA_KEY: record.model_dump_json().encode()})


def _licence(manifest: dict[str, Any]) -> str:
    """The licence the manifest records; a build from the embedded corpus has twinbench's."""
    recorded = manifest.get("license")
    if isinstance(recorded, str) and recorded.strip():
        return recorded.strip().lower()
    if "corpus" in manifest:  # the embedded corpus was written for twinbench
        package = metadata("twinbench")
        named = [package[k] for k in ("License-Expression", "License") if k in package]
        return (named[0] if named else "other").lower()
    return "other"


def _public_items(benchmark: Path) -> tuple[dict[str, Any], list[Item], bytes]:
    if not benchmark.is_dir():
        raise InputError(
            f"{benchmark}: not a benchmark folder (expected a folder from twinbench build or "
            "import, with manifest.json and items.jsonl)"
        )
    manifest = check_manifest(benchmark)
    try:
        Manifest.model_validate(manifest)
    except ValidationError as exc:
        problem = describe_validation_error(exc)
        raise InputError(f"{benchmark / 'manifest.json'}: {problem}") from None
    path = benchmark / "items.jsonl"
    records = load_models(path, Item)
    for lineno, item in records:
        if item.split != "public":
            raise InputError(f"{path}:{lineno}: a held-out item; holdout items are never exported")
    return manifest, [item for _, item in records], path.read_bytes()


def _check_round_trip(path: Path, items: Sequence[Item], data: bytes) -> None:
    """Refuse unless the rows rebuild `data` (the items file) exactly."""
    rebuilt = items_bytes([row_item(item_row(item)) for item in items])
    if rebuilt == data:
        return
    lines, again = data.splitlines(keepends=True), rebuilt.splitlines(keepends=True)
    lineno = next((n for n, line in enumerate(lines, 1) if again[n - 1 : n] != [line]), len(lines))
    raise InputError(
        f"{path}:{lineno}: not written the way twinbench writes items (key order, spacing, "
        "escapes or blank lines differ), so an export could not be read back byte for byte"
    )


def export_hf(benchmark: Path, out: Path) -> HFExport:
    """Write the public items of `benchmark` as Parquet and a dataset card into `out`."""
    pa = require("pyarrow", "pyarrow")
    pq = require("pyarrow.parquet", "pyarrow")
    manifest, items, data = _public_items(benchmark)
    _check_round_trip(benchmark / "items.jsonl", items, data)
    _check_out(out)
    public = [g for g in manifest["generators"] if g.get("split", "public") == "public"]
    record = ExportRecord(
        format=EXPORT_FORMAT,
        item_schema=ITEM_SCHEMA,
        items=len(items),
        items_sha256=hashlib.sha256(data).hexdigest(),
        twinbench_version=str(manifest["twinbench_version"]),
        seed=int(manifest["seed"]),
        ratio={str(k): int(v) for k, v in manifest["ratio"].items()},
        generators=public,
        license=_licence(manifest),
    )
    columns = {c.name: [row[c.name] for row in map(item_row, items)] for c in COLUMNS}
    try:
        table = pa.table(columns, schema=_arrow_schema(pa, record))
    except (pa.ArrowException, OverflowError) as exc:
        problem = f"cannot be written as Parquet ({exc})"
        raise InputError(f"{benchmark / 'items.jsonl'}: {problem}") from None
    with output_set(out) as stage:
        pq.write_table(table, stage(PARQUET), compression="zstd")
        stage("README.md").write_text(card(items, record, COLUMNS), encoding="utf-8")
        for name in (PARQUET, "README.md"):  # on disk before the set is committed
            fsync_path(stage(name))
    return HFExport(out, len(items), sum(not i.answerable for i in items), record.items_sha256)


def _check_out(out: Path) -> None:
    """Refuse an `out` that holds files an export would not write (a new folder is fine)."""
    if out.exists() and not out.is_dir():
        raise InputError(f"{out}: not a folder")
    if not out.is_dir():
        return
    for path in sorted([*out.glob("*.parquet"), *(out / "data").rglob("*.parquet")]):
        if path != out / PARQUET:
            raise InputError(f"{path}: a Parquet file no export wrote; export into a new folder")
    if (out / "README.md").exists() and not (out / PARQUET).exists():
        raise InputError(f"{out / 'README.md'}: not a twinbench export's; export into a new folder")


def _shards(folder: Path) -> list[Path]:
    if not folder.is_dir():
        problem = "not a folder" if folder.exists() else "no such folder"
        raise InputError(f"{folder}: {problem} (expected one written by twinbench export hf)")
    shards = sorted((folder / "data").glob("test-*.parquet"))
    if not shards:
        raise InputError(
            f"{folder}: no data/test-*.parquet; not a folder written by twinbench export hf"
        )
    return shards


def _read_shard(pq: Any, path: Path) -> tuple[ExportRecord, list[dict[str, Any]]]:
    try:
        table = pq.read_table(path)
    except (OSError, ValueError) as exc:  # pyarrow.ArrowInvalid is a ValueError
        raise InputError(f"{path}: not a Parquet file ({' '.join(str(exc).split())})") from None
    raw = (table.schema.metadata or {}).get(METADATA_KEY)
    if raw is None:
        raise InputError(f"{path}: not a twinbench export (no twinbench metadata)")
    try:
        record = ExportRecord.model_validate_json(raw)
    except ValidationError as exc:
        problem = describe_validation_error(exc)
        raise InputError(f"{path}: twinbench metadata: {problem}") from None
    missing = [c.name for c in COLUMNS if c.name not in table.column_names]
    if missing:
        raise InputError(f"{path}: not a twinbench export (no column {', '.join(missing)})")
    return record, table.select([c.name for c in COLUMNS]).to_pylist()


def _items_of(path: Path, rows: list[dict[str, Any]]) -> list[Item]:
    items = []
    for n, row in enumerate(rows, start=1):
        try:
            items.append(row_item(row))
        except ValidationError as exc:
            raise InputError(f"{path}: row {n}: {describe_validation_error(exc)}") from None
        except ValueError as exc:
            raise InputError(f"{path}: row {n}: {exc}") from None
    return items


def import_hf(folder: Path, out: Path) -> HFImport:
    """Write the benchmark a `twinbench export hf` folder holds into `out`, byte for byte."""
    pq = require("pyarrow.parquet", "pyarrow")
    items: list[Item] = []
    first: ExportRecord | None = None
    shards = _shards(folder)
    for path in shards:
        record, rows = _read_shard(pq, path)
        if first is not None and record != first:
            raise InputError(f"{path}: its twinbench metadata differs from {shards[0]}'s")
        first = first or record
        items += _items_of(path, rows)
    assert first is not None
    digest = hashlib.sha256(items_bytes(items)).hexdigest()
    if digest != first.items_sha256 or len(items) != first.items:
        raise InputError(
            f"{shards[0]}: the rows are not the items exported ({len(items)} items, sha256 "
            f"{digest[:12]}…; the metadata records {first.items}, {first.items_sha256[:12]}…): "
            "changed after twinbench exported them"
        )
    fields = {
        "seed": first.seed,
        "source": {"kind": "hf", "path": os.path.basename(folder.resolve())},
        "license": first.license,
        "generators": first.generators,
        "ratio": first.ratio,
    }
    manifest = write_benchmark(out, items, [], fields)
    return HFImport(folder, out, len(items), str(manifest["files"]["items.jsonl"]))
