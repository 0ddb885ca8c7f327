"""How far the lexical rule labels agree with hand labels of real SmolLM2 answers.

Usage: python scripts/rag_labeller_agreement.py [--labels docs/data/rag-author-labels.jsonl]

The labels file holds `twinbench.rag.answer/1` records: 20 answers of the embedded SmolLM2
(variants fused and instruction-only, drawn with seed 7 from a full `rag ablate --sample 0`
run), their claims labelled by hand against the passages that reached the prompt. The script
re-labels the same claims with `rules:lexical/1` and prints claim-level raw agreement, Cohen's
kappa and the confusion table (rows: hand labels), and relevance agreement.
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


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--labels", type=Path, default=LABELS)
    args = parser.parse_args()
    print(json.dumps(measure(args.labels), indent=2))


if __name__ == "__main__":
    main()
