"""Import SciFact with its own evidence semantics, as a corpus + cases + qrels.

Written like a BEIR import (beir.py: the same folder layout, id rules and checks).

- SciFact (`corpus.jsonl` of `{doc_id, title, abstract: [sentence]}` and a claims file): a
  SUPPORT or CONTRADICT rationale is evidence of grade 3 (a rationale is, by SciFact's
  definition, sufficient to justify the label) quoting its sentences verbatim: per sentence
  passage its sentence, per abstract one quote spanning its first to its last rationale
  sentence (a passage is judged once; rationales may skip sentences). An NEI claim is
  unanswerable, its cited docs its checked documents; a claim with both labels would be
  adversarial (`contradictory_passages`). qrels.txt holds the evidence only, so NEI claims
  have no relevant passage (unlike BEIR's SciFact qrels, which count every cited doc).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from twinbench.jsonl import InputError, iter_json_lines, sha256_file
from twinbench.rag.beir import (
    Imported,
    Unit,
    _identifier,
    _name,
    _need,
    _sources,
    _string,
    _unique,
    _write,
)
from twinbench.rag.records import AdversarialKind, Case, Evidence, Passage
from twinbench.rag.trec import Qrels

#: a SciFact rationale is, by its definition, sufficient to justify the label
SCIFACT_GRADE = 3


@dataclass(frozen=True)
class _Abstract:
    doc_id: str
    title: str
    sentences: list[str]


def read_scifact_corpus(path: Path) -> dict[str, _Abstract]:
    """SciFact corpus rows `{doc_id, title, abstract: [sentence, ...]}` by doc id."""
    docs: dict[str, _Abstract] = {}
    seen: dict[str, int] = {}
    for lineno, row in iter_json_lines(_need(path)):
        doc_id = _identifier(path, lineno, row, "doc_id")
        _unique(path, lineno, seen, doc_id, "doc_id")
        sentences = row.get("abstract")
        if not isinstance(sentences, list) or not all(isinstance(s, str) for s in sentences):
            raise InputError(f"{path}:{lineno}: abstract must be a list of sentences")
        if not "".join(sentences).strip():
            raise InputError(f"{path}:{lineno}: document {doc_id!r} has an empty abstract")
        docs[doc_id] = _Abstract(doc_id, _string(path, lineno, row, "title"), sentences)
    return docs


def scifact_passages(docs: dict[str, _Abstract], unit: Unit, version: str) -> list[Passage]:
    """Abstracts (text = sentences joined by one space, as BEIR) or their non-blank sentences."""
    if unit == "abstract":
        return [
            Passage(
                passage_id=d.doc_id,
                doc_id=d.doc_id,
                title=d.title,
                text=" ".join(d.sentences),
                corpus_version=version,
            )
            for d in docs.values()
        ]
    return [
        Passage(
            passage_id=f"{d.doc_id}#s{n}",
            doc_id=d.doc_id,
            title=d.title,
            text=sentence.strip(),
            location={"sentence": n},
            corpus_version=version,
        )
        for d in docs.values()
        for n, sentence in enumerate(d.sentences)
        if sentence.strip()
    ]


def _rationales(
    path: Path, lineno: int, row: dict[str, Any], docs: dict[str, _Abstract]
) -> tuple[dict[str, list[int]], set[str]]:
    """(doc id → rationale sentence indices, labels) of one claim, checked against the corpus."""
    evidence = row.get("evidence")
    if not isinstance(evidence, dict):
        raise InputError(f"{path}:{lineno}: evidence must be an object of doc id → rationales")
    sentences: dict[str, list[int]] = {}
    labels: set[str] = set()
    for doc_id, rationales in evidence.items():
        if doc_id not in docs:
            raise InputError(f"{path}:{lineno}: evidence doc {doc_id!r} is not in the corpus")
        if not isinstance(rationales, list) or not rationales:
            raise InputError(f"{path}:{lineno}: evidence[{doc_id!r}] must list rationales")
        for rationale in rationales:
            label = rationale.get("label") if isinstance(rationale, dict) else None
            picked = rationale.get("sentences") if isinstance(rationale, dict) else None
            if label not in ("SUPPORT", "CONTRADICT"):
                raise InputError(
                    f"{path}:{lineno}: rationale label {label!r} is not SUPPORT or CONTRADICT"
                )
            count = len(docs[doc_id].sentences)
            if (
                not isinstance(picked, list)
                or not picked
                or not all(type(i) is int and 0 <= i < count for i in picked)
            ):
                raise InputError(
                    f"{path}:{lineno}: rationale sentences {picked!r} of doc "
                    f"{doc_id!r} are not indices into its {count} sentences"
                )
            if not all(docs[doc_id].sentences[i].strip() for i in picked):
                raise InputError(f"{path}:{lineno}: a rationale sentence of {doc_id!r} is blank")
            labels.add(label)
            sentences.setdefault(doc_id, []).extend(picked)
    return sentences, labels


def _contract(claim: str, labels: set[str]) -> tuple[list[str], list[str]]:
    supports = f"The evidence supports the claim: {claim}"
    contradicts = f"The evidence contradicts the claim: {claim}"
    if labels == {"SUPPORT"}:
        return [supports], [contradicts]
    if labels == {"CONTRADICT"}:
        return [contradicts], [supports]
    if labels:
        return [f"Some evidence supports and some contradicts the claim: {claim}"], []
    return [f"The corpus does not settle the claim: {claim}"], [supports, contradicts]


def scifact_case(
    path: Path,
    lineno: int,
    row: dict[str, Any],
    docs: dict[str, _Abstract],
    unit: Unit,
    version: str,
) -> Case:
    """One SciFact claim as an evidence contract (see the module docstring)."""
    case_id = _identifier(path, lineno, row, "id")
    claim = _string(path, lineno, row, "claim")
    if not claim.strip():
        raise InputError(f"{path}:{lineno}: claim {case_id!r} has no text")
    cited = row.get("cited_doc_ids", [])
    if not isinstance(cited, list) or not all(isinstance(c, str | int) for c in cited):
        raise InputError(f"{path}:{lineno}: cited_doc_ids must be a list of doc ids")
    for doc_id in map(str, cited):
        if doc_id not in docs:
            raise InputError(f"{path}:{lineno}: cited doc {doc_id!r} is not in the corpus")
    sentences, labels = _rationales(path, lineno, row, docs)
    evidence: list[Evidence] = []
    for doc_id in sorted(sentences):
        doc, picked = docs[doc_id], sorted(set(sentences[doc_id]))
        if unit == "abstract":  # one judgment per passage: the span first to last rationale
            quote = " ".join(doc.sentences[picked[0] : picked[-1] + 1]).strip()
            evidence.append(Evidence(passage_id=doc_id, grade=SCIFACT_GRADE, quote=quote))
            continue
        evidence.extend(
            Evidence(
                passage_id=f"{doc_id}#s{i}", grade=SCIFACT_GRADE, quote=doc.sentences[i].strip()
            )
            for i in picked
        )
    required, forbidden = _contract(claim, labels)
    mixed = len(labels) > 1
    return Case(
        case_id=case_id,
        question=claim,
        answerable=bool(evidence),
        adversarial=mixed,
        adversarial_kind=AdversarialKind.CONTRADICTORY_PASSAGES if mixed else None,
        required_facts=required,
        forbidden_claims=forbidden,
        evidence=evidence,
        checked_documents=sorted({*map(str, cited), *sentences}),
        corpus_version=version,
    )


def default_claims(folder: Path) -> Path:
    """`claims.jsonl` when the folder has one, else `claims_dev.jsonl` (BEIR's test split)."""
    single = folder / "claims.jsonl"
    return single if single.is_file() else folder / "claims_dev.jsonl"


def import_scifact(
    folder: Path,
    out: Path,
    *,
    claims: Path | None = None,
    unit: Unit = "abstract",
    version: str | None = None,
) -> Imported:
    """Import SciFact's corpus and claims with SciFact's evidence semantics into `out`."""
    corpus_path = folder / "corpus.jsonl"
    claims_path = claims if claims is not None else default_claims(folder)
    if not claims_path.is_absolute() and not claims_path.exists():
        claims_path = folder / claims_path
    suffix = "" if unit == "abstract" else "-sentences"
    version = version or f"{_name(folder)}{suffix}-{sha256_file(_need(corpus_path))[:12]}"
    docs = read_scifact_corpus(corpus_path)
    passages = scifact_passages(docs, unit, version)
    cases: list[Case] = []
    seen: dict[str, int] = {}
    for lineno, row in iter_json_lines(_need(claims_path)):
        case = scifact_case(claims_path, lineno, row, docs, unit, version)
        _unique(claims_path, lineno, seen, case.case_id, "claim id")
        cases.append(case)
    qrels: Qrels = {
        case.case_id: {e.passage_id: e.grade for e in case.evidence}
        for case in cases
        if case.evidence
    }
    source = {
        "format": "scifact",
        "folder": _name(folder),
        "unit": unit,
        "sha256": _sources(folder, (corpus_path, claims_path)),
    }
    cutting = (
        "scifact: one passage per abstract, passage_id = doc_id, text = sentences joined by "
        "one space"
        if unit == "abstract"
        else "scifact: one passage per non-blank abstract sentence, passage_id = DOC#sN "
        "(N = SciFact's 0-based sentence index)"
    )
    return _write(out, passages, cases, qrels, version=version, cutting=cutting, source=source)
