"""`twinbench rag ablate`: variants over the same frozen cases, corpus, generator and budget.

Per variant: supported / unsupported / abstained / error / unlabelled answers, the useful count
and rate (a supported answer of relevance 2 to an answerable case, over answerable answers;
unsupported answers are counted over all cases), mean and p95 elapsed_ms of the whole path,
and the claim-level metrics. Per pair of variants, matched by case and trial: the transition
table of outcome classes (useful, supported, unsupported, abstained, error, unlabelled), the
named changes (fixed, fixed → abstained, useful → abstained, broke, ...), and a paired
sign-flip test with a case-bootstrap interval on the per-case difference in the useful rate and
in the unsupported rate (trials of one case averaged first: the case is the unit).
"""

from __future__ import annotations

import itertools
import time
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any, Final

import numpy as np

from twinbench.jsonl import InputError, dumps_json, dumps_line, record_dict
from twinbench.outputs import write_set
from twinbench.rag.answer_metrics import answer_metrics, outcome, useful
from twinbench.rag.answering import VARIANTS, Budget, Variant, answer_cases, answer_lines
from twinbench.rag.answers import Answer, Judgement
from twinbench.rag.factcheck import RULES_LABELLER
from twinbench.rag.generation import StageProgress
from twinbench.rag.records import Case
from twinbench.rag.scoring import label_answers
from twinbench.stats.bootstrap import percentile_interval
from twinbench.stats.signflip import sign_flip_test

ABLATION_SCHEMA: Final = "twinbench.rag.ablation/1"
CLASSES: Final = ("useful", "supported", "unsupported", "abstained", "error", "unlabelled")
#: the comparisons that isolate one component each (kept when both variants ran)
PAIRS: Final = (
    ("lexical", "fused"),
    ("dense", "fused"),
    ("fused", "fused+rerank"),
    ("fused", "instruction-only"),
    ("instruction-only", "verifier"),
)
DRAWS: Final = 10000
RESAMPLES: Final = 2000
#: a change from the first variant's class to the second's that has a name
NAMED: Final = {
    ("unsupported", "useful"): "fixed",
    ("unsupported", "supported"): "fixed",
    ("unsupported", "abstained"): "fixed → abstained",
    ("useful", "abstained"): "useful → abstained",
    ("supported", "abstained"): "supported → abstained",
    ("useful", "unsupported"): "broke",
    ("supported", "unsupported"): "broke",
    ("abstained", "useful"): "abstained → useful",
    ("abstained", "unsupported"): "abstained → unsupported",
}


def answer_class(answer: Answer, case: Case) -> str:
    """The outcome class of one answer: useful splits off from supported."""
    found = outcome(answer)
    return "useful" if found == "supported" and useful(answer, case) else found


def stratified(cases: Sequence[Case], n: int, seed: int) -> list[Case]:
    """`n` cases drawn evenly across slices (answerable, unanswerable, adversarial), in file
    order; all of them when n is 0 or at least their number."""
    if n <= 0 or n >= len(cases):
        return list(cases)
    slices: dict[str, list[int]] = {}
    for i, case in enumerate(cases):
        key = "adversarial" if case.adversarial else str(case.answerable)
        slices.setdefault(key, []).append(i)
    rng = np.random.default_rng(seed)
    for members in slices.values():
        rng.shuffle(members)
    chosen: list[int] = []
    for row in itertools.zip_longest(*(slices[k] for k in sorted(slices))):
        chosen.extend(m for m in row if m is not None)
    return [cases[i] for i in sorted(chosen[:n])]


def _percentile(values: Sequence[float], q: float) -> float | None:
    return round(float(np.percentile(values, q)), 3) if values else None


def variant_row(
    name: str, answers: Sequence[Answer], cases: Mapping[str, Case], seed: int
) -> dict[str, Any]:
    """One variant's line: counts, useful rate, latency, claim metrics."""
    classes = Counter(answer_class(a, cases[a.case_id]) for a in answers)
    elapsed = [a.elapsed_ms for a in answers if a.elapsed_ms is not None]
    answerable = sum(cases[a.case_id].answerable for a in answers)
    metrics = answer_metrics(answers, cases, seed)
    return {
        "variant": name,
        "answers": len(answers),
        "classes": {c: classes.get(c, 0) for c in CLASSES},
        "supported": classes["useful"] + classes["supported"],
        "unsupported": classes["unsupported"],
        "abstained": classes["abstained"],
        "error": classes["error"],
        "unlabelled": classes["unlabelled"],
        "useful": classes["useful"],
        "answerable_answers": answerable,
        "useful_rate": metrics["metrics"]["useful_rate"],
        "latency_ms": {
            "mean": round(float(np.mean(elapsed)), 3) if elapsed else None,
            "p95": _percentile(elapsed, 95),
        },
        "metrics": metrics,
    }


def _per_case(answers: Sequence[Answer], cases: Mapping[str, Case]) -> dict[str, dict[int, str]]:
    out: dict[str, dict[int, str]] = {}
    for a in answers:
        out.setdefault(a.case_id, {})[a.trial] = answer_class(a, cases[a.case_id])
    return out


def compare(
    a: str,
    b: str,
    answers: Mapping[str, Sequence[Answer]],
    cases: Mapping[str, Case],
    seed: int,
) -> dict[str, Any]:
    """Transitions and paired tests from variant `a` to variant `b`."""
    first, second = _per_case(answers[a], cases), _per_case(answers[b], cases)
    shared = sorted(set(first) & set(second))
    table: Counter[tuple[str, str]] = Counter()
    named: Counter[str] = Counter()
    examples: dict[str, list[str]] = {}
    useful_diff, unsupported_diff = [], []
    for cid in shared:
        trials = sorted(set(first[cid]) & set(second[cid]))
        if not trials:
            continue
        for t in trials:
            pair = (first[cid][t], second[cid][t])
            table[pair] += 1
            if pair in NAMED:
                named[NAMED[pair]] += 1
                examples.setdefault(NAMED[pair], []).append(cid)
        useful_diff.append(
            np.mean([(second[cid][t] == "useful") - (first[cid][t] == "useful") for t in trials])
        )
        unsupported_diff.append(
            np.mean(
                [
                    (second[cid][t] == "unsupported") - (first[cid][t] == "unsupported")
                    for t in trials
                ]
            )
        )
    rng = np.random.default_rng(seed)
    tests: dict[str, dict[str, Any] | None] = {}
    for label, diffs in (("useful", useful_diff), ("unsupported", unsupported_diff)):
        d = np.asarray(diffs, dtype=np.float64)
        if not d.size:
            tests[label] = None
            continue
        test = sign_flip_test(d, DRAWS, rng, seed).as_dict()
        idx = rng.integers(0, d.size, size=(RESAMPLES, d.size))
        interval = percentile_interval(float(d.mean()), d[idx].mean(axis=1), RESAMPLES, seed)
        tests[label] = {
            "sign_flip": test,
            "interval": {**interval.as_dict(), "method": "case bootstrap, percentile"},
        }
    return {
        "a": a,
        "b": b,
        "cases": len(shared),
        "transitions": {f"{x} → {y}": n for (x, y), n in sorted(table.items())},
        "matrix": {x: {y: table.get((x, y), 0) for y in CLASSES} for x in CLASSES},
        "named": dict(sorted(named.items())),
        "examples": {k: v[:10] for k, v in sorted(examples.items())},
        "tests": tests,
    }


def default_pairs(names: Sequence[str]) -> list[tuple[str, str]]:
    """The declared one-component pairs among `names`, else each variant with the next."""
    pairs = [(a, b) for a, b in PAIRS if a in names and b in names]
    return pairs or list(itertools.pairwise(names))


def summarise(
    answers: Mapping[str, Sequence[Answer]],
    cases: Mapping[str, Case],
    pairs: Sequence[tuple[str, str]] | None = None,
    seed: int = 0,
) -> dict[str, Any]:
    """The ablation document of labelled answers per variant (in the mapping's order)."""
    names = list(answers)
    chosen = list(pairs) if pairs is not None else default_pairs(names)
    return {
        "schema": ABLATION_SCHEMA,
        "variants": [variant_row(n, answers[n], cases, seed) for n in names],
        "pairs": [compare(a, b, answers, cases, seed) for a, b in chosen],
        "seed": seed,
    }


def labelling(answers: Sequence[Answer]) -> dict[tuple[str, str, int], Any]:
    """Labelled answers as one side of `agreement` (claims numbered from 1)."""
    from twinbench.rag.answers import ClaimLabel
    from twinbench.rag.labels import ItemLabels

    out = {}
    for a in answers:
        if outcome(a) not in ("supported", "unsupported"):
            continue
        claims = tuple(
            ClaimLabel(
                claim=n,
                **c.model_dump(
                    include={"support_label", "evidence_ids", "evidence_quote", "severity"}
                ),
            )
            for n, c in enumerate(a.claims, 1)
        )
        out[a.key] = ItemLabels(claims, a.relevance, None, a.labelled_by)
    return out


def human_agreement(
    folder: Path, answers: Sequence[Answer], reviews: Sequence[Judgement] | None
) -> dict[str, Any]:
    """Agreement of this run's labeller (the rules, or the judge's judgements) with every
    annotator's labels in a blind package folder (`labels/*.jsonl`)."""
    from twinbench.rag.agreement import agreement
    from twinbench.rag.annotation import open_package
    from twinbench.rag.labels import read_labels

    blind = open_package(folder)
    files = sorted((folder / "labels").glob("*.jsonl"))
    if not files:
        raise InputError(f"{folder}/labels: no annotator's labels (*.jsonl) to compare with")
    ours: Any = list(reviews) if reviews is not None else labelling(answers)
    return {f.stem: agreement(read_labels(f, blind), ours) for f in files}


def _stages(progress: StageProgress | None, prefix: str) -> StageProgress | None:
    """`progress` with each stage named after its variant."""
    if progress is None:
        return None
    report = progress
    return lambda stage, done, total: report(f"{prefix}: {stage}", done, total)


def _searched(stage: StageProgress, retriever: str, queries: int) -> Callable[[int, int], None]:
    """A retrieval progress hook (reporting 0 done first, while the retriever indexes)."""
    label = f"retrieving ({retriever})"
    stage(label, 0, queries)
    return lambda done, total: stage(label, done, total)


def run_ablation(
    folder: Path,
    out: Path,
    *,
    variants: Sequence[str] = tuple(VARIANTS),
    generator: Any,
    budget: Budget = Budget(),
    sample: int = 24,
    repeats: int = 1,
    seed: int = 0,
    judge: Any = None,
    k: int = 10,
    cache: Path | None = None,
    human_labels: Path | None = None,
    on_step: Callable[[str], None] | None = None,
    progress: StageProgress | None = None,
) -> dict[str, Any]:
    """Run every variant over the same cases and write answers, judgements and the tables.

    With `human_labels` (a `rag package` folder whose labels/ holds annotators' files), the
    labeller's agreement with each annotator is measured and shown before any figure.
    `progress(stage, done, total)` follows each stage (retrieval, answering, verification,
    labelling) of each variant, for a progress bar; `on_step` gets a line per stage."""
    from twinbench.rag.retrievers import RetrieverOptions
    from twinbench.rag.retrievers.run import retrieve_corpus
    from twinbench.rag.validate import check_cases

    say = on_step or (lambda _: None)
    unknown = [v for v in variants if v not in VARIANTS]
    if unknown:
        raise InputError(f"unknown variant {unknown[0]!r} (known: {', '.join(VARIANTS)})")
    if repeats > 1 and budget.temperature == 0:
        raise InputError(
            "--repeats above 1 needs --temperature above 0 (greedy runs repeat exactly)"
        )
    check = check_cases(folder / "cases.jsonl", folder)
    if check.problems:
        raise InputError(f"{check.problems[0]} (and {len(check.problems) - 1} more problems)")
    chosen = stratified([c for _, c in check.cases], sample, seed)
    cases = {c.case_id: c for c in chosen}
    passages = check.corpus.passages
    queries = {c.case_id: c.question for c in chosen}
    say(
        f"{len(chosen)} cases ({sum(c.answerable for c in chosen)} answerable), "
        f"{len(variants)} variants"
    )
    options = RetrieverOptions(cache=cache)
    rankings: dict[str, tuple[dict[str, list[str]], dict[str, float]]] = {}
    answers: dict[str, list[Answer]] = {}
    reviews: dict[str, list[Judgement]] = {}
    seconds: dict[str, float] = {}
    for number, name in enumerate(variants, 1):
        began = time.perf_counter()
        variant: Variant = VARIANTS[name]
        stage = _stages(progress, f"{name} ({number}/{len(variants)})")
        if variant.retriever not in rankings:
            say(f"retrieving with {variant.retriever}")
            searched = None if stage is None else _searched(stage, variant.retriever, len(queries))
            got = retrieve_corpus(
                check.corpus, queries, variant.retriever, k=k, options=options, on_query=searched
            )
            ranked = {q: [pid for pid, _ in hits] for q, hits in got.hits.items()}
            rankings[variant.retriever] = (ranked, got.record.latency_ms["per_query"])
        ranked, latency = rankings[variant.retriever]
        produced: list[Answer] = []
        for trial in range(repeats):
            say(
                f"answering with {name}"
                + (f" (trial {trial + 1}/{repeats})" if repeats > 1 else "")
            )
            trial_stage = stage if repeats == 1 else _stages(stage, f"trial {trial + 1}")
            produced += answer_cases(
                chosen,
                ranked,
                latency,
                passages,
                variant,
                generator,
                budget,
                trial,
                seed,
                progress=trial_stage,
            )
        if judge is not None:
            say(f"judging {name}")
        produced, judged = label_answers(produced, cases, passages, judge, stage)
        if judged is not None:
            reviews[name] = judged
        answers[name] = produced
        seconds[name] = round(time.perf_counter() - began, 3)
    document = summarise(answers, cases, seed=seed)
    document["human_agreement"] = None
    if human_labels is not None:
        every = [a for rows in answers.values() for a in rows]
        judged = [j for rows in reviews.values() for j in rows] if judge is not None else None
        document["human_agreement"] = human_agreement(human_labels, every, judged)
    for row in document["variants"]:
        # wall time of the variant's stage: retrieval (unless shared), answering, labelling
        row["seconds"] = seconds[row["variant"]]
        row["seconds_per_case"] = round(seconds[row["variant"]] / max(1, len(chosen)), 3)
    document.update(
        {
            "corpus": {"version": check.corpus.version, "passages": len(passages)},
            "cases": {
                "total": len(chosen),
                "answerable": sum(c.answerable for c in chosen),
                "unanswerable": sum(not c.answerable for c in chosen),
                "adversarial": sum(c.adversarial for c in chosen),
                "sample": sample,
                "ids": sorted(cases),
            },
            "generator": f"{generator.name}@{generator.version}",
            "labelled_by": RULES_LABELLER
            if judge is None
            else f"judge:{judge.name}@{judge.version}",
            "budget": budget.as_dict(),
            "repeats": repeats,
            "retrieval_k": k,
            "definitions": [VARIANTS[v].as_dict() for v in variants],
        }
    )
    files = {f"answers-{n.replace('+', '-')}.jsonl": answer_lines(a) for n, a in answers.items()}
    for n, r in reviews.items():
        lines = b"".join(dumps_line(record_dict(j)) for j in r)
        files[f"judgements-{n.replace('+', '-')}.jsonl"] = lines.decode("utf-8")
    from twinbench.rag.ablation_report import ablation_html, ablation_markdown

    files["ablation.json"] = dumps_json(document)
    files["ablation.md"] = ablation_markdown(document)
    files["ablation.html"] = ablation_html(document)
    write_set(out, files)
    return document
