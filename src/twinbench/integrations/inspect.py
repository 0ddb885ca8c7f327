"""inspect_ai: any twinbench benchmark as an inspect task, and inspect logs as twinbench runs.

    inspect eval twinbench/abstention -T benchmark=bench --model mockllm/model
    twinbench import inspect logs/....eval --out bench/runs/inspect
    twinbench report bench

A sample is one item as `request_for` shows it (never the family or the answer): the user
message of twinbench's lettered prompt (`systems/prompt.py`, the one `smollm2` sees) with
the answer letters A, B, ... and the abstain letters X, Y, Z. The solver asks for one letter;
the scorer reads the reply into a twinbench Response (a reply that is not one listed letter is
`invalid`, never an abstention) and grades it with the grader's exact rule. `import_inspect`
reads the completions of a log again into a responses.jsonl that `report` and `compare` grade
like any run. The target is every letter the rule grades correct.

The system prompt and that message are all inspect sends the model: a sample's id (the item
id) and metadata (family, pair, the item) are the scorer's and the log's, and the samples are
in `twinbench run`'s blind order (`blinding.py`), not items.jsonl's item-then-twin order.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from twinbench.blinding import order_key
from twinbench.grader import FIRST_FAILURE, ExpectedTable, Outcome, expected_table, grade_rows
from twinbench.integrations import require, write_imported_run
from twinbench.jsonl import InputError, record_dict
from twinbench.normalize import normalize_option
from twinbench.records import FAMILIES, Item, Response
from twinbench.runner import items_digest, load_benchmark, request_for
from twinbench.runrecord import RunRecord
from twinbench.systems.base import Request, SystemCard, failure, response
from twinbench.systems.prompt import (
    MAX_ANSWER_OPTIONS,
    SYSTEM_PROMPT,
    Choice,
    choice_fields,
    fits_letters,
    lettered,
    too_many_letters,
    user_message,
)
from twinbench.systems.wire import OffContract

try:
    from inspect_ai import Task, task
    from inspect_ai.dataset import MemoryDataset, Sample
    from inspect_ai.log import EvalLog, EvalSample, read_eval_log
    from inspect_ai.model import ChatMessageSystem, GenerateConfig
    from inspect_ai.scorer import (
        CORRECT,
        INCORRECT,
        Score,
        Scorer,
        Target,
        accuracy,
        grouped,
        scorer,
        stderr,
    )
    from inspect_ai.solver import Generate, Solver, TaskState, solver
except ImportError:  # pragma: no cover - the core install has no inspect_ai
    require("inspect_ai", "inspect-ai==0.3.285")
    raise

TASK_NAME = "twinbench/abstention"
#: the version of the sample, prompt and reply contract (inspect's task_version)
TASK_VERSION = 1
#: a reply: one listed letter, alone ("B", "B.", "(B)") or followed by its choice's text
_REPLY = re.compile(r"\(?([A-Z])[.):]?\)?(?:\s+(.+))?", re.DOTALL)


def declared_languages(languages: str | Sequence[str]) -> tuple[str, ...]:
    """The declared languages of `-T languages=en,es` (or a YAML list), sorted."""
    codes = languages.split(",") if isinstance(languages, str) else list(languages)
    found = tuple(sorted({str(code).strip() for code in codes if str(code).strip()}))
    if not found:
        raise InputError(f"languages {languages!r}: give at least one language code")
    return found


def read_letter(choices: list[Choice], reply: str) -> Choice:
    """The choice a reply names; OffContract unless it is one listed letter, alone or
    followed by that choice's text ("B. technical support")."""
    text = reply.strip()
    found = _REPLY.fullmatch(text)
    if found is None:
        raise OffContract(f"reply {text[:80]!r} is not one of the listed letters")
    by_letter = {c.letter: c for c in choices}
    letter, rest = found.group(1), found.group(2)
    choice = by_letter.get(letter)
    if choice is None:
        raise OffContract(f"letter {letter} is not listed (listed: {''.join(by_letter)})")
    if rest is not None and normalize_option(rest) != normalize_option(choice.text):
        raise OffContract(f"reply names {letter} but then {rest[:80]!r}, not {choice.text!r}")
    return choice


def chosen(request: Request, choice: Choice, system: str, **fields: Any) -> Response:
    """The Response of picking `choice` (`prompt.choice_fields`)."""
    return response(request, system, **choice_fields(request.question, choice), **fields)


def decision(request: Request, reply: str, system: str, **fields: Any) -> Response:
    """A model's reply as a Response: `rejected` past the letters, `invalid` off contract."""
    if not fits_letters(request.question):
        error = too_many_letters(request.question)
        return failure(request, system, "rejected", error)
    try:
        choice = read_letter(lettered(request.question), reply)
    except OffContract as exc:
        error = f"reply off contract: {exc}"
        return response(request, system, "invalid", error=error, raw=reply, **fields)
    return chosen(request, choice, system, raw=reply, **fields)


def grade_one(table: ExpectedTable, row: Response) -> Outcome:
    """The grader's outcome of one response (the rule of `twinbench grade`)."""
    graded = grade_rows([("inspect", 1, record_dict(row))], table)
    return Outcome(int(graded.outcome[0]))


def make_sample(item: Item, table: ExpectedTable) -> Sample:
    """One item as an inspect sample: the user message, the right letters as the target,
    and the item (for the scorer) with its letters in the metadata."""
    request = request_for(item, 0, 0, item.id)
    choices = lettered(request.question)
    i = table.index[item.id]
    too_many = not fits_letters(request.question)
    right = [] if too_many else [c.letter for c in choices if _right(table, request, c)]
    return Sample(
        id=item.id,
        input=user_message(request.state, request.question, choices),
        target=right,
        metadata={
            "item_id": item.id,
            "pair_id": item.pair_id,
            # the family the rule grades it under (an undeclared language: out_of_language)
            "family": FAMILIES[int(table.family[i])],
            "answerable": bool(table.answerable[i]),
            "generator": f"{item.generator.name}/{item.generator.version}",
            "language": item.language,
            "options": {c.letter: c.text for c in choices if c.reason is None},
            "abstain": {c.letter: c.reason.value for c in choices if c.reason is not None},
            "rejected": too_many,
            "item": record_dict(item),
        },
    )


def _right(table: ExpectedTable, request: Request, choice: Choice) -> bool:
    outcome = grade_one(table, chosen(request, choice, "target"))
    return outcome in (Outcome.CORRECT_ABSTAIN, Outcome.CORRECT_ANSWER)


def letter_grammar(letters: Sequence[str]) -> str:
    """A llama.cpp GBNF grammar that allows exactly one of `letters`."""
    return "root ::= " + " | ".join(f'"{letter}"' for letter in letters)


@solver
def lettered_decision(grammar: bool = False) -> Solver:
    """twinbench's system prompt, then one generation: the model's letter.

    With `grammar`, the request carries a llama.cpp `grammar` (extra body) that allows only
    the sample's listed letters, as the `openai` system constrains its JSON on llama.cpp."""

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        if state.metadata.get("rejected"):
            return state  # more options than letters: the scorer records `rejected`
        state.messages.insert(0, ChatMessageSystem(content=SYSTEM_PROMPT))
        if not grammar:
            return await generate(state)
        letters = [*state.metadata["options"], *state.metadata["abstain"]]
        return await generate(state, extra_body={"grammar": letter_grammar(letters)})

    return solve


@scorer(metrics=[accuracy(), stderr(), grouped(accuracy(), "family", all=False)])
def exact_rule(languages: str | list[str] = "en") -> Scorer:
    """twinbench's exact rule: the reply read as a Response and graded by the grader.

    Invalid and rejected replies are unscored (left out of inspect's metrics, as twinbench
    leaves them out of every rate); `Score.metadata` holds the outcome, family, pair, item
    and the Response."""
    declared = declared_languages(languages)

    async def score(state: TaskState, target: Target) -> Score:
        item = Item.model_validate(state.metadata["item"])
        request = request_for(item, state.epoch - 1, 0, item.id)
        row = decision(request, state.output.completion, f"inspect:{state.model}")
        outcome = grade_one(expected_table([item], declared), row)
        metadata = {
            "outcome": outcome.label,
            "family": state.metadata["family"],
            "pair_id": item.pair_id,
            "item_id": item.id,
            "response": record_dict(row),
        }
        answer = state.output.completion.strip()[:80]
        if outcome >= FIRST_FAILURE:
            reason = "invalid_response_format" if row.status == "invalid" else row.status
            return Score.unscored(
                reason=reason, answer=answer, explanation=row.error, metadata=metadata
            )
        right = outcome in (Outcome.CORRECT_ABSTAIN, Outcome.CORRECT_ANSWER)
        kind = "twin" if state.metadata["answerable"] else "unanswerable item"
        return Score(
            value=CORRECT if right else INCORRECT,
            answer=answer,
            explanation=f"{outcome.label} ({kind}, {state.metadata['family']})",
            metadata=metadata,
        )

    return score


@task
def abstention(
    benchmark: str,
    limit: int | None = None,
    languages: str | list[str] = "en",
    grammar: bool = False,
) -> Task:
    """The public items of a twinbench benchmark folder (the first `limit`), one letter each,
    graded by twinbench's rule under the declared `languages` (comma-separated); `grammar`
    constrains a llama.cpp server to the listed letters."""
    folder = Path(benchmark).resolve()
    items = load_benchmark(folder, limit)
    declared = declared_languages(languages)
    table = expected_table(items, declared)
    digest = items_digest(items)
    # in the blind order of `twinbench run`: inspect calls the model in dataset order
    shown = sorted(items, key=lambda item: order_key(digest, item.id))
    return Task(
        dataset=MemoryDataset([make_sample(item, table) for item in shown], name=folder.name),
        solver=lettered_decision(grammar),
        scorer=exact_rule(",".join(declared)),
        config=GenerateConfig(temperature=0.0, max_tokens=32),
        version=TASK_VERSION,
        metadata={
            "twinbench_benchmark": str(folder),
            "twinbench_items": len(items),
            "twinbench_items_sha256": digest,
            "twinbench_languages": list(declared),
        },
    )


def _read(log: Path) -> EvalLog:
    if not log.is_file():
        raise InputError(f"{log}: no such file")
    try:
        found = read_eval_log(str(log))
    except Exception as exc:  # inspect raises many kinds on a file that is not its log
        reason = str(exc).splitlines()[0][:120] if str(exc) else type(exc).__name__
        raise InputError(f"{log}: not an inspect eval log ({reason})") from None
    if found.eval.task != TASK_NAME:
        raise InputError(
            f"{log}: an eval log of task {found.eval.task!r}, not {TASK_NAME} (only logs of "
            "`inspect eval twinbench/abstention` import as twinbench runs)"
        )
    if found.eval.task_version != TASK_VERSION:
        raise InputError(
            f"{log}: task version {found.eval.task_version!r}; this twinbench reads version "
            f"{TASK_VERSION} (import it with the twinbench that wrote it)"
        )
    if not found.samples:
        raise InputError(f"{log}: the log holds no samples")
    return found


def _items(log: Path, found: EvalLog, benchmark: Path | None) -> tuple[Path, list[Item]]:
    """The benchmark and the items the log's task answered, checked against its digest."""
    meta = found.eval.metadata or {}
    named = meta.get("twinbench_benchmark")
    if benchmark is None and not isinstance(named, str):
        raise InputError(f"{log}: names no twinbench benchmark; pass --benchmark DIR")
    folder = benchmark if benchmark is not None else Path(str(named))
    count = meta.get("twinbench_items")
    items = load_benchmark(folder, count if isinstance(count, int) else None)
    if items_digest(items) != meta.get("twinbench_items_sha256"):
        raise InputError(
            f"{log}: its items are not the first {len(items)} items of {folder} (another "
            "build, or an edited benchmark); pass the benchmark it ran with --benchmark"
        )
    return folder, items


def _response(request: Request, sample: EvalSample, system: str) -> Response:
    """A logged sample read again into a Response (an inspect error is status `error`)."""
    if sample.error is not None:
        return failure(request, system, "error", f"inspect: {sample.error.message}")
    usage = sample.output.usage
    fields: dict[str, Any] = {
        # the sample's working time (model calls), not its time waiting in inspect's queue
        "latency_ms": None if sample.working_time is None else round(sample.working_time * 1e3, 3),
        "usage": None if usage is None else usage.model_dump(exclude_none=True),
    }
    return decision(request, sample.output.completion, system, **fields)


def import_inspect(log: Path, out: Path, benchmark: Path | None = None) -> RunRecord:
    """An inspect eval log of `twinbench/abstention` as a twinbench run in `out`.

    Each sample's completion is read again with the scorer's reader (epoch e is trial
    e - 1); a sample of an unknown item or a repeated (item, epoch) is refused, and so is a
    decision that differs from the one the scorer logged."""
    found = _read(log)
    folder, items = _items(log, found, benchmark)
    by_id = {item.id: (position, item) for position, item in enumerate(items)}
    system = f"inspect:{found.eval.model}"
    rows: dict[tuple[int, int], Response] = {}
    for sample in found.samples or []:
        known = by_id.get(str(sample.id))
        if known is None:
            raise InputError(f"{log}: sample {sample.id!r} is not an item of {folder}")
        if isinstance(sample.epoch, bool) or not isinstance(sample.epoch, int) or sample.epoch < 1:
            raise InputError(
                f"{log}: sample {sample.id!r}: epoch {sample.epoch!r} (inspect counts epochs "
                "from 1; epoch e is trial e - 1)"
            )
        key = (sample.epoch, known[0])
        if key in rows:
            raise InputError(f"{log}: sample {sample.id!r}, epoch {sample.epoch}, twice")
        row = _response(request_for(known[1], sample.epoch - 1, 0, known[1].id), sample, system)
        _check_logged(log, sample, row)
        rows[key] = row
    meta = found.eval.metadata or {}
    card = SystemCard(
        name=system,
        version=found.eval.model,
        languages=declared_languages(meta.get("twinbench_languages") or "en"),
        max_options=MAX_ANSWER_OPTIONS,
        abstains=True,
        notes=f"inspect_ai {found.eval.packages.get('inspect_ai', '?')}, eval "
        f"{found.eval.eval_id}: one letter per item (answers A.., abstain X/Y/Z)",
    )
    ordered = [rows[key] for key in sorted(rows)]  # trial by trial, in benchmark order
    trials = max((epoch for epoch, _ in rows), default=1)
    return write_imported_run(
        out, card, ordered, items, source=str(log), benchmark=folder, trials=trials
    )


_DECISION = ("status", "abstain", "reason", "answer")


def _check_logged(log: Path, sample: EvalSample, row: Response) -> None:
    """Refuse a sample whose logged decision differs from reading its completion again."""
    score = (sample.scores or {}).get("exact_rule")
    logged = (score.metadata or {}).get("response") if score is not None else None
    if not isinstance(logged, dict):
        return  # scored by another scorer, or not scored: the completion alone decides
    mine = record_dict(row)
    if any(logged.get(key) != mine.get(key) for key in _DECISION):
        raise InputError(
            f"{log}: sample {sample.id!r}, epoch {sample.epoch}: the logged decision "
            f"{ {k: logged.get(k) for k in _DECISION} } is not what its completion reads "
            f"{ {k: mine.get(k) for k in _DECISION} }"
        )
