"""The twinbench side of an exported lm-evaluation-harness task: one doc per item, the decision
its letters' log-likelihoods make, and the exact rule applied to that decision.

The task folder's `utils.py` imports `process_results` from here, and `twinbench import lm-eval`
reads a logged sample with the same `decision`, so the per-sample metrics lm-eval logs and the
grades of the imported run come from one computation. Nothing here imports lm_eval.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from twinbench.grader import Outcome, expected_table, grade_rows
from twinbench.jsonl import record_dict
from twinbench.records import Item, Response
from twinbench.runner import request_for
from twinbench.systems.prompt import fits_letters, lettered, user_message
from twinbench.systems.smollm2 import decide

#: the languages an lm-eval model is graded as declaring (the imported run's card says the same)
LANGUAGES: tuple[str, ...] = ("en",)
#: per-sample metrics (1.0 or 0.0; lm-eval averages them) and whether higher is better
METRICS: dict[str, bool] = {
    "correct": True,
    "abstained": False,
    "false_commit": False,
    "false_abstain": False,
}
_ABSTAINING = (Outcome.CORRECT_ABSTAIN, Outcome.WRONG_REASON, Outcome.FALSE_ABSTAIN)
_CORRECT = (Outcome.CORRECT_ABSTAIN, Outcome.CORRECT_ANSWER)


def fits(item: Item) -> bool:
    """Whether the item's answer choices (and its explicit abstain option) fit the letters
    A..W (X, Y, Z are the abstentions)."""
    return fits_letters(item.question)


def decision(item: Item, logliks: Sequence[float], system: str) -> Response:
    """The Response the letters' log-likelihoods make: argmax letter, softmax confidence.

    The same reading as the `smollm2` system (`systems/smollm2.decide`), without its timing.
    """
    choices = lettered(item.question)
    if len(logliks) != len(choices):
        raise ValueError(f"{len(logliks)} log-likelihoods for {len(choices)} letters")
    request = request_for(item, 0, 0, item.id)
    made = decide(request, choices, [float(v) for v in logliks], system, 0.0, 0)
    return made.model_copy(update={"latency_ms": None, "usage": None})


def outcome(item: Item, response: Response) -> Outcome:
    """The outcome twinbench's grader gives `response` on `item` (declared languages: en)."""
    table = expected_table([item], LANGUAGES)
    graded = grade_rows([("lm-eval", 1, record_dict(response))], table)
    return Outcome(int(graded.outcome[0]))


def target_index(item: Item) -> int:
    """The first letter whose choice the exact rule grades correct (lm-eval's doc_to_target)."""
    count = len(lettered(item.question))
    for index in range(count):
        onehot = [0.0 if i == index else -1000.0 for i in range(count)]
        if outcome(item, decision(item, onehot, "target")) in _CORRECT:
            return index
    raise ValueError(f"item {item.id!r}: no letter is graded correct")


def item_doc(item: Item) -> dict[str, Any]:
    """The item as an lm-eval doc: the user message twinbench's own systems see, the letters,
    the target letter's index, and the item itself (a JSON string) for grading."""
    choices = lettered(item.question)
    request = request_for(item, 0, 0, item.id)
    return {
        "item_id": item.id,
        "text": user_message(request.state, request.question, choices),
        "letters": [c.letter for c in choices],
        "target": target_index(item),
        "item": item.model_dump_json(by_alias=True, exclude_none=True),
    }


def doc_item(doc: dict[str, Any]) -> Item:
    """The item a doc carries."""
    return Item.model_validate_json(doc["item"])


def sample_metrics(item: Item, response: Response) -> dict[str, float]:
    """The per-sample metrics of one graded decision (each 1.0 or 0.0)."""
    graded = outcome(item, response)
    return {
        "correct": float(graded in _CORRECT),
        "abstained": float(graded in _ABSTAINING),
        "false_commit": float(graded == Outcome.FALSE_COMMIT),
        "false_abstain": float(graded == Outcome.FALSE_ABSTAIN),
    }


def process_results(doc: dict[str, Any], results: Sequence[Any]) -> dict[str, float]:
    """lm-eval's hook: `results` holds one (log-likelihood, is_greedy) per letter."""
    item = doc_item(doc)
    logliks = [float(result[0]) for result in results]
    return sample_metrics(item, decision(item, logliks, "lm-eval"))
