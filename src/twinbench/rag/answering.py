"""The assistant path: retrieve, assemble the context within a budget, generate, verify.

A **variant** fixes the retriever, the instruction and whether a verifier pass runs; the
cases, corpus, generator (and its revision), passage count and word budget are the same for
every variant of one ablation.

* Context assembly: the retriever's top `passages` in rank order, numbered [1], [2], ...,
  each added whole while the running word count (whitespace-separated words of the passage
  texts, the same count for every generator) stays within `budget_words`; a passage that would
  pass it is left out and counted (`stage.dropped`). The ids that reached the prompt are
  recorded in order, so [n] in an answer resolves to the n-th of them.
* Abstention: the instruction asks for the exact marker `INSUFFICIENT EVIDENCE`; an answer that
  opens with it (case and leading punctuation ignored) is an abstention. Sentences that are only
  the marker are not claims, nor is an unfinished last sentence of an output the token budget
  cut off (`request_cost.truncated`). An output with no claim and no abstention is `invalid`.
* Verifier: each claim is put to the generator with the passages it cites (all prompt
  passages when it cites none): "does the passage state the claim? yes or no". A reply that is
  not yes or no is asked once more (both calls are counted in request_cost and elapsed_ms);
  a second bad reply makes the answer `invalid`, a verifier timeout makes it `timeout` — never
  an abstention. Claims answered "no" are removed; an answer left with no claims becomes an
  abstention (the draft is kept in `raw`).
* elapsed_ms is the whole path of one case: its retrieval, its share of each batched
  generation call (a batch's time split equally among its prompts) and of the verifier calls.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

from twinbench.jsonl import InputError, dumps_line, iter_json_lines, record_dict
from twinbench.rag.answers import Answer, AnswerStatus, CitationScope, Claim
from twinbench.rag.claims import CLAIM_RULE, sentences, split_claims
from twinbench.rag.factcheck import checks_record
from twinbench.rag.generation import Generation, Generator, Prompt, StageProgress, tracker
from twinbench.rag.records import Case, Passage

ABSTAIN_MARKER: Final = "INSUFFICIENT EVIDENCE"

BASE_INSTRUCTION: Final = (
    "You answer a student's question about the course notes, using the numbered passages. "
    "End each sentence with the number of the passage it comes from, like [1]. "
    f"If the passages do not answer the question, reply {ABSTAIN_MARKER}."
)
EVIDENCE_ONLY_INSTRUCTION: Final = (
    "Answer only from the numbered passages; do not use anything you know besides them. "
    "Write one or two short sentences, each ending with the number of the passage that states "
    "it, like [1]. If the passages do not state the answer, reply exactly "
    f"{ABSTAIN_MARKER} and nothing else. Do not guess."
)
VERIFIER_INSTRUCTION: Final = (
    "You check a claim against passages. Reply with one word: yes if the passages state the "
    "claim, no if they do not."
)
INSTRUCTIONS: Final = {"base": BASE_INSTRUCTION, "evidence-only": EVIDENCE_ONLY_INSTRUCTION}


@dataclass(frozen=True)
class Variant:
    """One arm of an ablation: retriever, instruction, verifier."""

    name: str
    retriever: str
    instruction: str = "base"
    verifier: bool = False

    def as_dict(self) -> dict[str, Any]:
        """JSON-ready form."""
        return dict(self.__dict__)


VARIANTS: Final = {
    v.name: v
    for v in (
        Variant("lexical", "bm25"),
        Variant("dense", "dense"),
        Variant("fused", "hybrid"),
        Variant("fused+rerank", "hybrid+rerank"),
        Variant("instruction-only", "hybrid", "evidence-only"),
        Variant("verifier", "hybrid", "evidence-only", verifier=True),
    )
}


@dataclass(frozen=True)
class Budget:
    """What every variant of one ablation shares."""

    passages: int = 3
    budget_words: int = 220
    max_tokens: int = 48
    temperature: float = 0.0
    scope: CitationScope = CitationScope.SENTENCE

    def as_dict(self) -> dict[str, Any]:
        """JSON-ready form."""
        return {**self.__dict__, "scope": self.scope.value}


@dataclass(frozen=True)
class Context:
    """The passages that reached one prompt, and those the budget left out."""

    passages: list[Passage]
    dropped: list[str]


def assemble(ranked: Sequence[str], passages: Mapping[str, Passage], budget: Budget) -> Context:
    """The top `budget.passages` of `ranked` that fit within `budget.budget_words`."""
    kept: list[Passage] = []
    dropped: list[str] = []
    words = 0
    for pid in ranked[: budget.passages]:
        size = len(passages[pid].text.split())
        if words + size > budget.budget_words:
            dropped.append(pid)
            continue
        kept.append(passages[pid])
        words += size
    return Context(kept, dropped)


def numbered(passages: Sequence[Passage]) -> str:
    """The passages as the prompt shows them: `[n] title: text`."""
    return "\n".join(
        f"[{n}] {p.title + ': ' if p.title else ''}{p.text}" for n, p in enumerate(passages, 1)
    )


def answer_prompt(
    case: Case, context: Context, instruction: str, budget: Budget, seed: int
) -> Prompt:
    """The chat prompt for one case."""
    user = f"Passages:\n{numbered(context.passages)}\n\nQuestion: {case.question}"
    return Prompt(
        [
            {"role": "system", "content": INSTRUCTIONS[instruction]},
            {"role": "user", "content": user},
        ],
        max_tokens=budget.max_tokens,
        temperature=budget.temperature,
        seed=seed,
    )


_LEAD = re.compile(r"^[\s\"'*_:>#-]*")
#: a finished sentence: end punctuation, then only citation markers or closing quotes
_END = re.compile(r"[.!?][\"')\]]*(?:\s*\[[^\[\]]*\])*\s*$")


def is_abstention(text: str) -> bool:
    """Whether `text` opens with the abstention marker."""
    return _LEAD.sub("", text).upper().startswith(ABSTAIN_MARKER)


def read_generation(
    case: Case,
    variant: str,
    trial: int,
    generation: Generation,
    shown: Sequence[str],
    scope: CitationScope,
    generator: str | None,
) -> Answer:
    """An Answer (claims unlabelled) from one generation (`generator`: what produced it)."""
    common: dict[str, Any] = {
        "case_id": case.case_id,
        "variant": variant,
        "trial": trial,
        "passages": list(shown),
        "citation_scope": scope,
        "claim_rule": CLAIM_RULE,
        "generator": generator,
    }
    if generation.status != "ok" or generation.text is None:
        return Answer(status=generation.status, error=generation.error or "no text", **common)
    text = generation.text
    if is_abstention(text):
        return Answer(status=AnswerStatus.OK, answer=text, abstained=True, **common)
    pieces = [s for s in sentences(text) if ABSTAIN_MARKER not in s.upper()]
    if generation.truncated and pieces and not _END.search(pieces[-1]):
        pieces = pieces[:-1]  # cut off by the token budget mid-sentence: not a claim
    kept = " ".join(pieces)
    split = split_claims(kept, shown, scope)
    if not split.claims:
        return Answer(
            status=AnswerStatus.INVALID, error="no claim and no abstention", raw=text, **common
        )
    return Answer(
        status=AnswerStatus.OK,
        answer=text,
        claims=split.claims,
        citation_not_found=split.citation_not_found,
        **common,
    )


def verifier_prompt(claim: Claim, context: Sequence[Passage], shown: Sequence[str]) -> Prompt:
    """Ask whether the claim's cited passages (all shown passages if none) state it."""
    cited = [p for p in context if p.passage_id in claim.cited_ids] or list(context)
    body = "\n".join(p.text for p in cited)
    user = f"Passages:\n{body}\n\nClaim: {claim.text}\n\nDo the passages state the claim? yes or no"
    return Prompt(
        [{"role": "system", "content": VERIFIER_INSTRUCTION}, {"role": "user", "content": user}],
        max_tokens=3,
        choices=("yes", "no"),
    )


def yes_no(text: str | None) -> bool | None:
    """True for a yes, False for a no, None for anything else."""
    word = re.sub(r"[^a-z]", "", (text or "").strip().split(" ")[0].lower()) if text else ""
    return {"yes": True, "no": False}.get(word)


def verify(
    answers: list[Answer],
    contexts: list[Context],
    generator: Generator,
    progress: StageProgress | None = None,
) -> tuple[list[Answer], list[float], list[int]]:
    """The verifier pass over `answers`: (revised answers, each one's ms, each one's calls)."""
    asks: list[tuple[int, int]] = [
        (a, c)
        for a, answer in enumerate(answers)
        if answer.status == AnswerStatus.OK and not answer.abstained
        for c in range(len(answer.claims))
    ]
    replies: dict[tuple[int, int], Generation] = {}
    calls = [0] * len(answers)
    spent = [0.0] * len(answers)
    pending = asks
    for attempt in range(2):
        if not pending:
            break
        prompts = [
            verifier_prompt(answers[a].claims[c], contexts[a].passages, answers[a].passages)
            for a, c in pending
        ]
        stage = "verifying claims" if attempt == 0 else "verifying claims (asked again)"
        got = generator.generate(prompts, tracker(stage, len(prompts), progress))
        for (a, c), reply in zip(pending, got, strict=True):
            replies[(a, c)] = reply
            calls[a] += 1
            spent[a] += reply.elapsed_ms
        pending = [
            k for k in pending if replies[k].status == "ok" and yes_no(replies[k].text) is None
        ]
    revised = []
    for a, answer in enumerate(answers):
        if answer.status != AnswerStatus.OK or answer.abstained:
            revised.append(answer)
            continue
        got = [replies[(a, c)] for c in range(len(answer.claims))]
        base = answer.model_dump(by_alias=True, exclude={"claims", "status", "error"})
        trace = [
            {"claim": c.text, "reply": g.text, "status": g.status}
            for c, g in zip(answer.claims, got, strict=True)
        ]
        base["raw"] = {"draft": answer.answer, "verifier": trace}
        failed = next((g for g in got if g.status != "ok"), None)
        if failed is not None:
            status = AnswerStatus.TIMEOUT if failed.status == "timeout" else AnswerStatus.ERROR
            if failed.status == "invalid":
                status = AnswerStatus.INVALID
            base.update(abstained=False, citation_not_found=[])
            revised.append(Answer(status=status, error=f"verifier: {failed.error}", **base))
            continue
        if any(yes_no(g.text) is None for g in got):
            bad = next(g.text for g in got if yes_no(g.text) is None)
            base.update(abstained=False, citation_not_found=[])
            revised.append(
                Answer(
                    status=AnswerStatus.INVALID,
                    error=f"verifier: reply {bad!r} is not yes or no (asked twice)",
                    **base,
                )
            )
            continue
        kept = [c for c, g in zip(answer.claims, got, strict=True) if yes_no(g.text)]
        if not kept:
            base.update(answer=ABSTAIN_MARKER, abstained=True, citation_not_found=[])
            revised.append(Answer(status=AnswerStatus.OK, **base))
            continue
        cited = {pid for c in kept for pid in c.cited_ids}
        base.update(
            answer=" ".join(c.text for c in kept),
            citation_not_found=[pid for pid in answer.citation_not_found if pid in cited],
        )
        revised.append(Answer(status=AnswerStatus.OK, claims=kept, **base))
    return revised, spent, calls


Hook = Callable[[str], None]


def answer_cases(
    cases: Sequence[Case],
    rankings: Mapping[str, Sequence[str]],
    retrieval_ms: Mapping[str, float],
    passages: Mapping[str, Passage],
    variant: Variant,
    generator: Generator,
    budget: Budget,
    trial: int = 0,
    seed: int = 0,
    progress: StageProgress | None = None,
) -> list[Answer]:
    """Run the path for every case of one variant (one trial): unlabelled Answers.

    `progress(stage, done, total)` follows the generation and verifier calls."""
    began = time.perf_counter()
    contexts = [assemble(rankings.get(c.case_id, []), passages, budget) for c in cases]
    assembly_ms = (time.perf_counter() - began) * 1000 / max(1, len(cases))
    prompts = [
        answer_prompt(c, ctx, variant.instruction, budget, seed * 100003 + trial * 1009 + i)
        for i, (c, ctx) in enumerate(zip(cases, contexts, strict=True))
    ]
    generations = generator.generate(prompts, tracker("answering", len(prompts), progress))
    answers = [
        read_generation(
            c,
            variant.name,
            trial,
            g,
            [p.passage_id for p in ctx.passages],
            budget.scope,
            f"{generator.name}@{generator.version}",
        )
        for c, g, ctx in zip(cases, generations, contexts, strict=True)
    ]
    verify_ms = [0.0] * len(cases)
    verify_calls = [0] * len(cases)
    if variant.verifier:
        answers, verify_ms, verify_calls = verify(answers, contexts, generator, progress)
    out = []
    for i, (case, answer) in enumerate(zip(cases, answers, strict=True)):
        stages = {
            "retrieval": round(retrieval_ms.get(case.case_id, 0.0), 3),
            "assembly": round(assembly_ms, 3),
            "generation": round(generations[i].elapsed_ms, 3),
        }
        if variant.verifier:
            stages["verification"] = round(verify_ms[i], 3)
        cost: dict[str, Any] = {
            "calls": generations[i].calls + verify_calls[i],
            "generation_calls": generations[i].calls,
            "verifier_calls": verify_calls[i],
            **{f"{k}_tokens": v for k, v in generations[i].tokens.items()},
            "dropped_passages": len(contexts[i].dropped),
            "truncated": generations[i].truncated,
        }
        data = answer.model_dump(by_alias=True)
        if answer.status == AnswerStatus.OK:
            data["checks"] = checks_record(answer, case)
        data.update(elapsed_ms=round(sum(stages.values()), 3), stage_ms=stages, request_cost=cost)
        out.append(Answer.model_validate(data))
    return out


def read_answers(path: Path) -> list[Answer]:
    """Answers from a JSONL file; a bad row is an InputError naming FILE:LINE."""
    from pydantic import ValidationError

    out: list[Answer] = []
    seen: dict[tuple[str, str, int], int] = {}
    for line, row in iter_json_lines(path):
        try:
            answer = Answer.model_validate(row)
        except ValidationError as exc:
            first = exc.errors()[0]
            where = ".".join(str(p) for p in first["loc"])
            raise InputError(
                f"{path}:{line}: {where + ': ' if where else ''}{first['msg']}"
            ) from None
        if answer.key in seen:
            raise InputError(f"{path}:{line}: answer {answer.key} repeats line {seen[answer.key]}")
        seen[answer.key] = line
        out.append(answer)
    return out


def answer_lines(answers: Sequence[Answer]) -> str:
    """Answers as JSONL text (record field order, no nulls, one object per line)."""
    return b"".join(dumps_line(record_dict(a)) for a in answers).decode("utf-8")
