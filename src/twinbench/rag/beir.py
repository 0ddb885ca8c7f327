"""Import a BEIR folder as a corpus + cases + qrels (SciFact's own semantics: `scifact.py`).

Both write into one folder: `passages.jsonl`, `corpus.json` (written last: a folder with it is
complete), `cases.jsonl` and `qrels.txt` (TREC). Passage ids are stable source locations: the
BEIR `_id`, or for SciFact the abstract's doc id (`--unit abstract`) or `DOC#sN`, N the 0-based
sentence index SciFact's rationales use (`--unit sentence`); never a counter.

- BEIR (`corpus.jsonl`, `queries.jsonl`, `qrels/SPLIT.tsv`): one case per query judged in the
  split. BEIR judges whole documents and annotates no facts, so each positive judgment becomes
  evidence whose quote is the whole passage text, `checked_documents` lists every judged doc,
  and a query with no positive judgment is unanswerable.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from twinbench.jsonl import InputError, iter_json_lines, read_text, sha256_file, write_jsonl
from twinbench.outputs import output_set
from twinbench.rag.corpus import write_corpus
from twinbench.rag.records import Case, Evidence, Passage
from twinbench.rag.trec import Qrels, write_qrels

Unit = Literal["abstract", "sentence"]
BEIR_FACT = "Rests on the passages judged relevant (BEIR judges whole documents, no facts)."
BEIR_NONE = "No passage is judged relevant to this query (judgments only; not proof of absence)."


@dataclass(frozen=True)
class Imported:
    """What an import wrote."""

    out: Path
    version: str
    passages: int
    cases: int
    answerable: int
    qrels: int


def _need(path: Path) -> Path:
    if not path.is_file():
        raise InputError(f"{path}: no such file")
    return path


def _identifier(path: Path, lineno: int, row: dict[str, Any], field: str) -> str:
    value = row.get(field)
    if isinstance(value, bool) or not isinstance(value, str | int):
        raise InputError(f"{path}:{lineno}: {field} must be a string or an integer")
    text = str(value)
    if not text or text != text.strip() or any(ch.isspace() for ch in text):
        raise InputError(f"{path}:{lineno}: {field} {text!r} is empty or has whitespace (TREC)")
    return text


def _string(path: Path, lineno: int, row: dict[str, Any], field: str) -> str:
    value = row.get(field, "")
    if not isinstance(value, str):
        raise InputError(f"{path}:{lineno}: {field} must be a string")
    return value


def _unique(path: Path, lineno: int, seen: dict[str, int], key: str, what: str) -> None:
    if key in seen:
        raise InputError(f"{path}:{lineno}: duplicate {what} {key!r} (first on line {seen[key]})")
    seen[key] = lineno


def read_beir_corpus(path: Path, version: str) -> list[Passage]:
    """BEIR corpus rows as passages (a row with no text keeps its title as the text)."""
    passages: list[Passage] = []
    seen: dict[str, int] = {}
    for lineno, row in iter_json_lines(_need(path)):
        doc_id = _identifier(path, lineno, row, "_id")
        _unique(path, lineno, seen, doc_id, "_id")
        title, text = _string(path, lineno, row, "title"), _string(path, lineno, row, "text")
        if not text.strip():
            text = title
        if not text.strip():
            raise InputError(f"{path}:{lineno}: document {doc_id!r} has no title and no text")
        passages.append(
            Passage(
                passage_id=doc_id, doc_id=doc_id, title=title, text=text, corpus_version=version
            )
        )
    return passages


def read_beir_queries(path: Path) -> dict[str, str]:
    """BEIR queries: `_id` → text."""
    queries: dict[str, str] = {}
    seen: dict[str, int] = {}
    for lineno, row in iter_json_lines(_need(path)):
        qid = _identifier(path, lineno, row, "_id")
        _unique(path, lineno, seen, qid, "query _id")
        text = _string(path, lineno, row, "text")
        if not text.strip():
            raise InputError(f"{path}:{lineno}: query {qid!r} has no text")
        queries[qid] = text
    return queries


def read_beir_qrels(path: Path, queries: dict[str, str], doc_ids: set[str]) -> Qrels:
    """`query-id TAB corpus-id TAB score` rows (a header line is skipped); ids must exist."""
    qrels: Qrels = {}
    for lineno, line in enumerate(read_text(_need(path)).splitlines(), start=1):
        parts = line.split("\t") if "\t" in line else line.split()
        if not line.strip() or (lineno == 1 and parts[0].strip() == "query-id"):
            continue
        if len(parts) != 3:
            raise InputError(f"{path}:{lineno}: expected query-id, corpus-id, score")
        qid, doc_id, score = (part.strip() for part in parts)
        if qid not in queries:
            raise InputError(f"{path}:{lineno}: query-id {qid!r} is not in queries.jsonl")
        if doc_id not in doc_ids:
            raise InputError(f"{path}:{lineno}: corpus-id {doc_id!r} is not in corpus.jsonl")
        try:
            grade = int(score)
        except ValueError:
            raise InputError(f"{path}:{lineno}: score {score!r} is not an integer") from None
        if grade < 0:
            raise InputError(f"{path}:{lineno}: score {grade} is negative")
        judged = qrels.setdefault(qid, {})
        if doc_id in judged:
            raise InputError(f"{path}:{lineno}: {doc_id!r} judged twice for query {qid!r}")
        judged[doc_id] = grade
    if not qrels:
        raise InputError(f"{path}: no judgments")
    return qrels


def _write(
    out: Path,
    passages: list[Passage],
    cases: list[Case],
    qrels: Qrels,
    *,
    version: str,
    cutting: str,
    source: dict[str, Any],
) -> Imported:
    # one output set: a refusal or a kill leaves the old import, or the new one whole
    with output_set(out) as stage:
        write_jsonl(stage("cases.jsonl"), cases)
        write_qrels(stage("qrels.txt"), qrels)
        write_corpus(out, passages, version=version, cutting=cutting, source=source, stage=stage)
    return Imported(
        out=out,
        version=version,
        passages=len(passages),
        cases=len(cases),
        answerable=sum(case.answerable for case in cases),
        qrels=sum(len(judged) for judged in qrels.values()),
    )


def _name(folder: Path) -> str:
    """The folder's name for a version string (`scifact-beir` for `scifact/beir`)."""
    folder = folder.resolve()
    return f"{folder.parent.name}-beir" if folder.name == "beir" else folder.name


def _sources(folder: Path, paths: Iterable[Path]) -> dict[str, str]:
    return {
        str(p.relative_to(folder)) if p.is_relative_to(folder) else p.name: sha256_file(p)
        for p in paths
    }


def import_beir(
    folder: Path, out: Path, *, split: str = "test", version: str | None = None
) -> Imported:
    """Import a BEIR folder's corpus and one split's queries and qrels into `out`."""
    corpus_path, queries_path = folder / "corpus.jsonl", folder / "queries.jsonl"
    qrels_path = folder / "qrels" / f"{split}.tsv"
    if not qrels_path.is_file():
        known = sorted(p.stem for p in (folder / "qrels").glob("*.tsv"))
        raise InputError(f"{qrels_path}: no such file (splits here: {', '.join(known) or 'none'})")
    version = version or f"{_name(folder)}-{sha256_file(_need(corpus_path))[:12]}"
    passages = read_beir_corpus(corpus_path, version)
    by_id = {p.passage_id: p for p in passages}
    queries = read_beir_queries(queries_path)
    qrels = read_beir_qrels(qrels_path, queries, set(by_id))
    cases = []
    for qid in (q for q in queries if q in qrels):
        judged = qrels[qid]
        positive = sorted(d for d, grade in judged.items() if grade > 0)
        cases.append(
            Case(
                case_id=qid,
                question=queries[qid],
                answerable=bool(positive),
                required_facts=[BEIR_FACT if positive else BEIR_NONE],
                evidence=[
                    Evidence(passage_id=d, grade=judged[d], quote=by_id[d].text) for d in positive
                ],
                checked_documents=sorted(judged),
                corpus_version=version,
            )
        )
    source = {
        "format": "beir",
        "folder": _name(folder),
        "split": split,
        "sha256": _sources(folder, (corpus_path, queries_path, qrels_path)),
    }
    cutting = "beir: one passage per corpus.jsonl row, passage_id = _id"
    return _write(out, passages, cases, qrels, version=version, cutting=cutting, source=source)
