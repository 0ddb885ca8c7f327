"""Check the embedded course-notes corpus and cases (or any corpus + cases) by script.

Usage: python scripts/rag_corpus_check.py [--cases CASES] [--corpus CORPUS]
                                          [--sample N] [--seed S] [--min-run 8]

Checks, each printed with its numbers: `twinbench rag validate` passes; no question copies
`--min-run` or more consecutive words of any passage (a copied question makes retrieval
artificially easy); every unanswerable case names the documents its reviewer checked, each of
them in the corpus, and has no evidence graded above 0. Prints counts per topic and per kind,
and the word-overlap statistics between each question and its closest passage. With
`--sample N` it also prints N cases drawn with `--seed` (evidence quotes and the passages they
come from) for a reviewer to re-read. Exit code 1 when a check fails.
"""

from __future__ import annotations

import argparse
import random
import re
import statistics
from collections import Counter
from pathlib import Path

from twinbench.rag.corpus import COURSE_CASES, COURSE_NOTES, Corpus
from twinbench.rag.records import AdversarialKind, Case
from twinbench.rag.validate import check_cases, kind_counts

WORD = re.compile(r"[a-z0-9]+(?:['.][a-z0-9]+)*")


def words(text: str) -> list[str]:
    """Lower-cased word tokens (numbers such as 0.01 and 4 KiB kept as tokens)."""
    return WORD.findall(text.lower())


def longest_run(a: list[str], b: list[str]) -> int:
    """The length of the longest run of consecutive words shared by `a` and `b`."""
    best = 0
    previous = [0] * (len(b) + 1)
    for x in a:
        current = [0] * (len(b) + 1)
        for j, y in enumerate(b, start=1):
            if x == y:
                current[j] = previous[j - 1] + 1
                best = max(best, current[j])
        previous = current
    return best


def overlap(case: Case, corpus: Corpus) -> tuple[int, str, float]:
    """(longest shared run with any passage, that passage, share of question words found in the
    case's best evidence passage or, without evidence, in that passage)."""
    question = words(case.question)
    runs = {pid: longest_run(question, words(p.text)) for pid, p in corpus.passages.items()}
    pid = max(sorted(runs), key=lambda key: runs[key])
    target = case.evidence[0].passage_id if case.evidence else pid
    vocabulary = set(words(corpus.passages[target].text))
    share = sum(w in vocabulary for w in question) / len(question)
    return runs[pid], pid, share


def table(title: str, counts: Counter[str]) -> None:
    print(f"{title}:")
    for key, n in sorted(counts.items()):
        print(f"  {key:<38}{n:>4}")


def print_sample(cases: list[Case], corpus: Corpus, n: int, seed: int) -> None:
    """Print `n` cases drawn with `seed`: question, contract, quotes and their passages."""
    rng = random.Random(seed)
    print(f"\nsample of {n} cases (seed {seed}):")
    for case in rng.sample(cases, min(n, len(cases))):
        kind = case.adversarial_kind.value if case.adversarial_kind else "-"
        print(f"\n[{case.case_id}] answerable={case.answerable} adversarial={kind}")
        print(f"  Q: {case.question}")
        for fact in case.required_facts:
            print(f"  must: {fact}")
        for claim in case.forbidden_claims:
            print(f"  must not: {claim}")
        for e in case.evidence:
            print(f"  evidence {e.passage_id} grade {e.grade}: {e.quote!r}")
            print(f"    passage: {corpus.passages[e.passage_id].text}")
        print(f"  checked: {', '.join(case.checked_documents)}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", type=Path, default=COURSE_CASES)
    parser.add_argument("--corpus", type=Path, default=COURSE_NOTES)
    parser.add_argument("--min-run", type=int, default=8)
    parser.add_argument("--sample", type=int, default=0)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    failures: list[str] = []

    checked = check_cases(args.cases, args.corpus)
    corpus, cases = checked.corpus, [case for _, case in checked.cases]
    print(f"validation: {len(checked.problems)} problems")
    for line in checked.problems:
        print(f"  {line}")
    failures += checked.problems

    print(f"corpus {corpus.version}: {len(corpus)} passages, {len(corpus.documents)} documents")
    table("passages per document", Counter(p.doc_id for p in corpus.passages.values()))
    table("passages per topic", Counter(p.topic or "-" for p in corpus.passages.values()))
    table("cases per topic", Counter(c.topic or "-" for c in cases))
    kinds = kind_counts(cases)
    for kind in AdversarialKind:
        kinds[kind.value] += 0  # listed even when absent
        kinds[f"{kind.value} (answerable)"] = sum(
            c.answerable for c in cases if c.adversarial_kind == kind
        )
    table(f"cases per kind ({len(cases)} in all)", kinds)

    flagged, runs, shares = [], [], []
    for case in cases:
        run, pid, share = overlap(case, corpus)
        runs.append(run)
        shares.append(share)
        if run >= args.min_run:
            flagged.append(f"{case.case_id}: {run} consecutive words of {pid}")
    print(
        f"question/passage overlap: longest shared run median {statistics.median(runs)}, "
        f"max {max(runs)} words; share of question words in the evidence passage median "
        f"{statistics.median(shares):.2f}, max {max(shares):.2f}"
    )
    print(f"questions copying >= {args.min_run} consecutive words: {len(flagged)}")
    for line in flagged:
        print(f"  {line}")
    failures += flagged

    documents = corpus.documents
    unanswerable = [c for c in cases if not c.answerable]
    unsound = []
    for case in unanswerable:
        if not case.checked_documents:
            unsound.append(f"{case.case_id}: unanswerable but names no checked_documents")
        missing = [d for d in case.checked_documents if d not in documents]
        if missing:
            unsound.append(f"{case.case_id}: checked_documents not in the corpus: {missing}")
        if any(e.grade > 0 for e in case.evidence):
            unsound.append(f"{case.case_id}: unanswerable but has evidence graded above 0")
    print(
        f"unanswerable cases: {len(unanswerable)}; without checked documents, with unknown "
        f"ones or with graded evidence: {len(unsound)}"
    )
    for line in unsound:
        print(f"  {line}")
    failures += unsound

    if args.sample:
        print_sample(cases, corpus, args.sample, args.seed)

    print(f"\n{'FAILED' if failures else 'ok'}: {len(failures)} failed checks")
    return 1 if failures else 0


if __name__ == "__main__":
    raise SystemExit(main())
