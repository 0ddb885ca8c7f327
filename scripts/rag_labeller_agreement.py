"""How far the lexical rule labels agree with hand labels of real SmolLM2 answers.

Usage: python scripts/rag_labeller_agreement.py [--labels FILE] [--judge smollm2|openai:M]
       [--base-url URL]

The labels file holds `twinbench.rag.answer/1` records: 20 answers of the embedded SmolLM2
(variants fused and instruction-only, drawn with seed 7 from a full `rag ablate --sample 0`
run), their claims labelled by hand against the passages that reached the prompt. The script
re-labels the same claims with `rules:lexical/1` and prints claim-level raw agreement, Cohen's
kappa and the confusion table (rows: hand labels), and relevance agreement. With --judge, the
judge labels the same claims too; its replies are validated (judge_invalid / judge_timeout
are counted apart, never as agreement or disagreement) and its agreement is printed beside.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from twinbench.rag.ablation import labelling
from twinbench.rag.agreement import agreement
from twinbench.rag.answering import read_answers
from twinbench.rag.corpus import COURSE_NOTES, load_corpus
from twinbench.rag.factcheck import label_by_rules
from twinbench.rag.judge import unlabel
from twinbench.rag.validate import load_cases

LABELS = Path(__file__).resolve().parents[1] / "docs" / "data" / "rag-author-labels.jsonl"


def measure(path: Path = LABELS) -> dict[str, object]:
    """The agreement report of the rules against the hand labels in `path`."""
    hand = read_answers(path)
    cases = {c.case_id: c for c in load_cases(COURSE_NOTES / "cases.jsonl", COURSE_NOTES)}
    passages = load_corpus(COURSE_NOTES).passages
    rules = [label_by_rules(unlabel(a), cases[a.case_id], passages) for a in hand]
    return agreement(labelling(hand), labelling(rules))


def measure_judge(spec: str, base_url: str | None, path: Path = LABELS) -> dict[str, object]:
    """The agreement report of a judge against the hand labels in `path`."""
    from collections import Counter

    from twinbench.rag.generation import make_generator
    from twinbench.rag.judge import judge_answers
    from twinbench.systems.base import SystemOptions

    hand = read_answers(path)
    cases = {c.case_id: c for c in load_cases(COURSE_NOTES / "cases.jsonl", COURSE_NOTES)}
    passages = load_corpus(COURSE_NOTES).passages
    judge = make_generator(spec, SystemOptions(base_url=base_url, timeout_s=120))
    _, reviews = judge_answers([unlabel(a) for a in hand], cases, passages, judge)
    report = agreement(labelling(hand), reviews)
    report["judge_statuses"] = dict(
        Counter(r.problem.value if r.problem else r.status.value for r in reviews)
    )
    report["judge_raw_examples"] = [r.raw for r in reviews[:3]]
    return report


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--labels", type=Path, default=LABELS)
    parser.add_argument("--judge", help="also measure this judge (smollm2, openai:MODEL)")
    parser.add_argument("--base-url", help="server for openai:MODEL")
    args = parser.parse_args()
    out = {"rules": measure(args.labels)}
    if args.judge:
        out["judge"] = measure_judge(args.judge, args.base_url, args.labels)
    print(json.dumps(out, indent=2))


if __name__ == "__main__":
    main()
