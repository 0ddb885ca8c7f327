"""Checks on item and response files beyond what the record schema can express."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

from pydantic import ValidationError

from twinbench.jsonl import InputError, describe_validation_error, iter_json_lines
from twinbench.normalize import normalize_option
from twinbench.records import Answer, ChoiceQuestion, Item, NoulQuestion, ReasonCode


def _answer_problem(item: Item, answer: Answer | None, what: str) -> str | None:
    question = item.question
    if isinstance(question, ChoiceQuestion):
        if answer not in question.options:
            return f"{what} {answer!r} is not one of the options"
    elif isinstance(question, NoulQuestion):
        if not isinstance(answer, bool):
            return f"{what} {answer!r} must be true or false for a noul question"
    elif (
        isinstance(answer, bool)
        or not isinstance(answer, int | float)
        or float(answer) not in question.legend.values()
    ):
        return f"{what} {answer!r} is not one of the legend values"
    return None


def item_problems(item: Item) -> list[str]:
    """Return what is wrong with one item on its own (empty when it is sound)."""
    problems: list[str] = []
    expected = item.expected
    if item.answerable == expected.abstain:
        problems.append("answerable must be the opposite of expected.abstain")
    if not item.answerable and expected.reason != item.family:
        problems.append(f"reason code {expected.reason} does not match family {item.family}")
    if item.twin_id == item.id:
        problems.append("twin_id points to the item itself")
    if not expected.abstain:
        problem = _answer_problem(item, expected.answer, "expected answer")
        if problem:
            problems.append(problem)
    if not item.answerable and item.family == ReasonCode.OUT_OF_LANGUAGE:
        if item.answer_if_supported is None:
            problems.append("an out_of_language item needs answer_if_supported")
        else:
            problem = _answer_problem(item, item.answer_if_supported, "answer_if_supported")
            if problem:
                problems.append(problem)
    if isinstance(item.question, ChoiceQuestion):
        counts = Counter(normalize_option(option) for option in item.question.options)
        clashes = sorted(text for text, n in counts.items() if n > 1)
        if item.answerable and isinstance(expected.answer, str):
            # an answerable item may repeat a distractor (exact_duplicate's twins do), never
            # its answer: the answer must stay one option
            if normalize_option(expected.answer) in clashes:
                problems.append(
                    "the expected answer and another option collide after normalisation "
                    f"({normalize_option(expected.answer)!r})"
                )
        elif clashes and item.family != ReasonCode.CONTRADICTORY_OPTIONS:
            problems.append(
                f"options collide after normalisation ({clashes[0]!r}); only "
                "contradictory_options items and answerable items (on a distractor) may "
                "have duplicate options"
            )
    return problems


def _is_mutual(items: dict[str, tuple[int, Item]], item_id: str) -> bool:
    twin_id = items[item_id][1].twin_id
    twin = items.get(twin_id) if twin_id is not None else None
    return twin is not None and twin[1].twin_id == item_id


def link_problems(
    items: dict[str, tuple[int, Item]], unreadable: frozenset[str] | set[str] = frozenset()
) -> list[tuple[int, str]]:
    """Return (line, problem) for broken twin links: missing, one-way, or not a pair.

    Ids in `unreadable` belong to lines already reported as bad; links to them are not
    reported a second time.
    """
    problems: list[tuple[int, str]] = []
    for item_id, (lineno, item) in items.items():
        if item.twin_id is None:
            if not item.answerable:
                problems.append((lineno, f"unanswerable item {item_id!r} has no twin"))
            continue
        found = items.get(item.twin_id)
        if found is None and item.twin_id in unreadable:
            continue
        if found is None:
            problems.append((lineno, f"twin {item.twin_id!r} of {item_id!r} is missing"))
            continue
        twin = found[1]
        if twin.twin_id != item_id:
            if _is_mutual(items, item.twin_id):
                problems.append(
                    (
                        lineno,
                        f"twin {item.twin_id!r} of {item_id!r} is already "
                        f"paired with {twin.twin_id!r}",
                    )
                )
            elif not (twin.twin_id in items and _is_mutual(items, twin.twin_id)):
                # when the twin's own link is the stray one, it is reported on its line
                problems.append(
                    (
                        lineno,
                        f"twin link is not mutual: {item.twin_id!r} points to {twin.twin_id!r}",
                    )
                )
        elif item.answerable == twin.answerable:
            kind = "answerable" if item.answerable else "unanswerable"
            problems.append((lineno, f"{item_id!r} and its twin are both {kind}"))
        elif twin.pair_id != item.pair_id or twin.family != item.family:
            problems.append((lineno, f"{item_id!r} and its twin differ in pair_id or family"))
    return problems


def _load_items(path: Path, problems: list[str], unreadable: set[str]) -> list[tuple[int, Item]]:
    """Validate each line as an Item; note the ids of lines that fail the schema."""
    items: list[tuple[int, Item]] = []
    try:
        for lineno, obj in iter_json_lines(path):
            try:
                items.append((lineno, Item.model_validate(obj)))
            except ValidationError as exc:
                problems.append(f"{path}:{lineno}: {describe_validation_error(exc)}")
                if isinstance(obj.get("id"), str):
                    unreadable.add(obj["id"])
    except InputError as exc:  # unreadable JSON: the rest of the file cannot be trusted
        problems.append(str(exc))
        unreadable.add("*")
    return items


def validate_files(items_path: Path, responses_path: Path | None = None) -> list[str]:
    """Validate an item file (and optionally a response file); return `FILE:LINE: …` problems."""
    problems: list[str] = []
    items: dict[str, tuple[int, Item]] = {}
    unreadable: set[str] = set()
    for lineno, item in _load_items(items_path, problems, unreadable):
        if item.id in items:
            first = items[item.id][0]
            problems.append(
                f"{items_path}:{lineno}: duplicate id {item.id!r} (first on line {first})"
            )
            continue
        items[item.id] = (lineno, item)
        problems.extend(f"{items_path}:{lineno}: {p}" for p in item_problems(item))
    if "*" not in unreadable:
        links = link_problems(items, unreadable)
        problems.extend(f"{items_path}:{line}: {p}" for line, p in links)
    if responses_path is not None:
        problems.extend(response_problems(responses_path, [item for _, item in items.values()]))
    return problems


def response_problems(path: Path, items: list[Item]) -> list[str]:
    """Every `FILE:LINE: problem` of a responses file under the grader's response rule."""
    from twinbench.grader import ResponseRule, expected_table

    rule = ResponseRule(expected_table(items))
    problems: list[str] = []
    try:
        for lineno, obj in iter_json_lines(path):
            try:
                rule.check(str(path), lineno, obj)
            except InputError as exc:
                problems.append(str(exc))
    except InputError as exc:  # unreadable JSON: the rest of the file cannot be trusted
        problems.append(str(exc))
    return problems
