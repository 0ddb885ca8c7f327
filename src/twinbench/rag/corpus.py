"""A RAG corpus on disk: `passages.jsonl` plus `corpus.json` (its manifest), read and written.

A corpus folder holds both files; corpus.json records the version, the sha256 of every file
and how passages were cut, so a changed file cannot silently change what a case means. A bare
`passages.jsonl` can be read too: its version is then its passages' `corpus_version`.
Problems are `FILE:LINE: problem` lines (`jsonl.InputError` when not collected).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any, Final

import orjson
from pydantic import ValidationError

from twinbench.jsonl import (
    InputError,
    describe_validation_error,
    load_models,
    read_text,
    record_dict,
    sha256_file,
    write_json,
    write_jsonl,
)
from twinbench.outputs import output_set
from twinbench.rag.records import CorpusManifest, Passage

PASSAGES: Final = "passages.jsonl"
MANIFEST: Final = "corpus.json"
#: the embedded course-notes corpus (passages.jsonl, corpus.json) and its cases.jsonl
COURSE_NOTES: Final = Path(str(resources.files("twinbench") / "rag" / "data" / "course_notes"))
COURSE_CASES: Final = COURSE_NOTES / "cases.jsonl"


@dataclass(frozen=True)
class Corpus:
    """Passages by id (in file order), the corpus version and where they were read."""

    version: str
    passages: Mapping[str, Passage]
    #: the passages.jsonl line of each passage id (its first occurrence)
    lines: Mapping[str, int]
    path: Path
    manifest: CorpusManifest | None = None

    @property
    def documents(self) -> frozenset[str]:
        """The doc_ids of the corpus."""
        return frozenset(p.doc_id for p in self.passages.values())

    def __len__(self) -> int:
        return len(self.passages)


def _key_line(text: str, key: str) -> int:
    """The line of `text` where the JSON key `key` first appears (1 if it does not)."""
    needle = f'"{key}"'
    for lineno, line in enumerate(text.splitlines(), start=1):
        if needle in line:
            return lineno
    return 1


def _read_manifest(path: Path, problems: list[str]) -> tuple[CorpusManifest | None, str]:
    text = read_text(path)
    try:
        obj: Any = orjson.loads(text)
    except orjson.JSONDecodeError as exc:
        line = text.count("\n", 0, exc.pos) + 1
        raise InputError(f"{path}:{line}: invalid JSON ({exc.msg})") from None
    try:
        return CorpusManifest.model_validate(obj), text
    except ValidationError as exc:
        problems.append(f"{path}:1: {describe_validation_error(exc)}")
        return None, text


def _manifest_problems(manifest: CorpusManifest, path: Path, text: str) -> list[str]:
    problems = []
    if PASSAGES not in manifest.files:
        problems.append(f"{path}:{_key_line(text, 'files')}: files does not list {PASSAGES}")
    for name, digest in manifest.files.items():
        where = f"{path}:{_key_line(text, name)}"
        target = path.parent / name
        if not target.is_file():
            problems.append(f"{where}: lists {name}, which is not in {path.parent}")
            continue
        actual = sha256_file(target)
        if actual != digest:
            problems.append(
                f"{where}: sha256 of {name} is {actual}, corpus.json records {digest} "
                "(the file changed after corpus.json was written)"
            )
    return problems


def _locate(path: Path) -> tuple[Path, Path | None]:
    """(passages.jsonl, corpus.json or None) for a corpus folder, corpus.json or passages file."""
    if path.is_dir():
        manifest = path / MANIFEST
        if not manifest.is_file():
            raise InputError(
                f"{path}: no {MANIFEST} (a corpus folder holds {PASSAGES} and {MANIFEST}; "
                f"give the {PASSAGES} itself to read it without a manifest)"
            )
        return path / PASSAGES, manifest
    if path.name == MANIFEST:
        return path.parent / PASSAGES, path
    return path, None


def load_corpus(path: Path, problems: list[str] | None = None) -> Corpus:
    """Read a corpus folder (passages.jsonl + corpus.json) or a bare passages.jsonl.

    Checked: every passage against the schema, repeated passage ids, each passage's
    corpus_version, and (with a manifest) the passage count and every file's sha256. With
    `problems=None` the first problem raises InputError; otherwise problems are appended as
    `FILE:LINE: problem` lines and the corpus holds the first passage of each id.
    """
    found: list[str] = []
    passages_path, manifest_path = _locate(path)
    manifest, text = (None, "")
    if manifest_path is not None:
        manifest, text = _read_manifest(manifest_path, found)
        if manifest is not None:
            found.extend(_manifest_problems(manifest, manifest_path, text))
    rows = load_models(passages_path, Passage, found)
    version = manifest.version if manifest else rows[0][1].corpus_version if rows else ""
    source = f"{MANIFEST}" if manifest else f"line {rows[0][0]}" if rows else ""
    passages: dict[str, Passage] = {}
    lines: dict[str, int] = {}
    for lineno, passage in rows:
        where = f"{passages_path}:{lineno}"
        first = lines.get(passage.passage_id)
        if first is not None:
            found.append(
                f"{where}: duplicate passage_id {passage.passage_id!r} (first on line {first})"
            )
            continue
        passages[passage.passage_id] = passage
        lines[passage.passage_id] = lineno
        if passage.corpus_version != version:
            found.append(
                f"{where}: corpus_version {passage.corpus_version!r} is not the corpus's "
                f"({version!r}, from {source})"
            )
    if manifest is not None and manifest_path is not None and manifest.passages != len(rows):
        found.append(
            f"{manifest_path}:{_key_line(text, 'passages')}: records {manifest.passages} "
            f"passages, {passages_path.name} holds {len(rows)}"
        )
    if problems is None and found:
        more = f" (and {len(found) - 1} more)" if len(found) > 1 else ""
        raise InputError(found[0] + more)
    if problems is not None:
        problems.extend(found)
    return Corpus(version, passages, lines, passages_path, manifest)


def write_corpus(
    folder: Path,
    passages: Iterable[Passage],
    *,
    version: str,
    cutting: str,
    source: Mapping[str, Any] | None = None,
    stage: Callable[[str], Path] | None = None,
) -> CorpusManifest:
    """Write `folder/passages.jsonl` and its `corpus.json` (version, sha256, cutting).

    Every passage must carry `version` as its corpus_version and a passage id of its own.
    The two files are one output set (`outputs.output_set`), or part of the caller's set
    when `stage` is given.
    """
    if stage is None:
        with output_set(folder) as own:
            return write_corpus(
                folder, passages, version=version, cutting=cutting, source=source, stage=own
            )
    rows = list(passages)
    seen: set[str] = set()
    for n, passage in enumerate(rows, start=1):
        if passage.passage_id in seen:
            raise InputError(f"passage {n}: duplicate passage_id {passage.passage_id!r}")
        seen.add(passage.passage_id)
        if passage.corpus_version != version:
            raise InputError(
                f"passage {n} ({passage.passage_id}): corpus_version "
                f"{passage.corpus_version!r} is not {version!r}"
            )
    written = stage(PASSAGES)
    write_jsonl(written, rows)
    manifest = CorpusManifest(
        version=version,
        files={PASSAGES: sha256_file(written)},
        passages=len(rows),
        cutting=cutting,
        source=dict(source or {}),
    )
    write_json(stage(MANIFEST), record_dict(manifest))
    return manifest
