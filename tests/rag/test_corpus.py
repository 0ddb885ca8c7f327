"""rag.corpus: a corpus folder or passages.jsonl read back, its corpus.json written and checked."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest

from conftest import write_rows
from twinbench.jsonl import InputError
from twinbench.rag.corpus import load_corpus, write_corpus
from twinbench.rag.records import Passage


def _passage(pid: str, text: str, version: str = "notes-v2") -> Passage:
    doc_id, _, page = pid.partition(":")
    return Passage(
        passage_id=pid,
        doc_id=doc_id,
        title=f"page {page}",
        text=text,
        location={"page": int(page.removeprefix("p"))},
        corpus_version=version,
        topic="deadlock",
    )


PASSAGES = [
    _passage("os-notes:p13", "A deadlock is a state in which every process waits."),
    _passage("os-notes:p14", "Thread T1 holds lock L1 and asks for lock L2."),
    _passage("syllabus:p3", "Assignment 2 is due on 14 March."),
]


def test_write_then_load_round_trips(tmp_path: Path) -> None:
    manifest = write_corpus(
        tmp_path, PASSAGES, version="notes-v2", cutting="one per page", source={"by": "hand"}
    )
    digest = hashlib.sha256((tmp_path / "passages.jsonl").read_bytes()).hexdigest()
    assert manifest.files == {"passages.jsonl": digest}
    assert manifest.passages == 3
    on_disk = json.loads((tmp_path / "corpus.json").read_text())
    assert on_disk == {
        "schema": "twinbench.rag.corpus/1",
        "version": "notes-v2",
        "files": {"passages.jsonl": digest},
        "passages": 3,
        "cutting": "one per page",
        "source": {"by": "hand"},
    }
    for path in (tmp_path, tmp_path / "corpus.json"):
        corpus = load_corpus(path)
        assert corpus.version == "notes-v2"
        assert list(corpus.passages) == ["os-notes:p13", "os-notes:p14", "syllabus:p3"]
        assert corpus.passages["os-notes:p14"] == PASSAGES[1]
        assert corpus.lines == {"os-notes:p13": 1, "os-notes:p14": 2, "syllabus:p3": 3}
        assert corpus.documents == {"os-notes", "syllabus"}
        assert corpus.manifest == manifest
        assert len(corpus) == 3


def test_a_bare_passages_file_takes_its_version_from_the_passages(tmp_path: Path) -> None:
    write_corpus(tmp_path, PASSAGES, version="notes-v2", cutting="one per page")
    corpus = load_corpus(tmp_path / "passages.jsonl")
    assert (corpus.version, corpus.manifest, len(corpus)) == ("notes-v2", None, 3)


def test_passages_of_another_version(tmp_path: Path) -> None:
    rows = [p.model_dump(mode="json", by_alias=True) for p in PASSAGES]
    rows[2]["corpus_version"] = "notes-v1"
    path = write_rows(tmp_path / "passages.jsonl", rows)
    problems: list[str] = []
    corpus = load_corpus(path, problems)
    assert problems == [
        f"{path}:3: corpus_version 'notes-v1' is not the corpus's ('notes-v2', from line 1)"
    ]
    assert len(corpus) == 3
    with pytest.raises(InputError, match=r":3: corpus_version 'notes-v1'"):
        load_corpus(path)


def test_manifest_count_and_missing_file(tmp_path: Path) -> None:
    write_corpus(tmp_path, PASSAGES, version="notes-v2", cutting="one per page")
    manifest = tmp_path / "corpus.json"
    document = json.loads(manifest.read_text())
    document["passages"] = 4
    document["files"]["notes.pdf"] = "0" * 64
    manifest.write_text(json.dumps(document, indent=2, sort_keys=True) + "\n")
    problems: list[str] = []
    load_corpus(tmp_path, problems)
    # sorted keys: cutting (2), files (3), notes.pdf (4), passages.jsonl (5), passages (7)
    assert problems == [
        f"{manifest}:4: lists notes.pdf, which is not in {tmp_path}",
        f"{manifest}:7: records 4 passages, passages.jsonl holds 3",
    ]
    with pytest.raises(InputError, match=r"lists notes.pdf.*\(and 1 more\)$"):
        load_corpus(tmp_path)


def test_a_bad_manifest(tmp_path: Path) -> None:
    write_corpus(tmp_path, PASSAGES, version="notes-v2", cutting="one per page")
    manifest = tmp_path / "corpus.json"
    manifest.write_text('{\n  "version": "notes-v2",\n  "files": {\n')
    with pytest.raises(InputError, match=r"corpus.json:4: invalid JSON"):
        load_corpus(tmp_path)
    manifest.write_text('{"version": "notes-v2"}\n')
    with pytest.raises(InputError, match=r"corpus.json:1: files: Field required"):
        load_corpus(tmp_path)


def test_write_corpus_refuses_repeated_ids_and_other_versions(tmp_path: Path) -> None:
    with pytest.raises(InputError, match=r"passage 3: duplicate passage_id 'os-notes:p13'"):
        write_corpus(tmp_path, [*PASSAGES[:2], PASSAGES[0]], version="notes-v2", cutting="-")
    with pytest.raises(InputError, match=r"passage 1 \(os-notes:p13\): corpus_version 'notes-v2'"):
        write_corpus(tmp_path, PASSAGES, version="notes-v3", cutting="-")
    assert not (tmp_path / "passages.jsonl").exists()
