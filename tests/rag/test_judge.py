"""Judges over a real loopback server speaking the OpenAI chat format: every bad reply has its
own status, none becomes a label; a valid reply labels the claims as given."""

from __future__ import annotations

import json
import threading
from typing import Any

from tests.rag.test_answer_claims import ANSWER, CASE, PASSAGES, fixture_answer
from tests.systems.servers import chat_reply, serve

from twinbench.rag.answer_metrics import answer_metrics, outcome
from twinbench.rag.answers import CitationScope, JudgeProblem, JudgeStatus, SupportLabel
from twinbench.rag.generation import OpenAIGenerator
from twinbench.rag.judge import judge_answers, unlabel
from twinbench.systems.base import SystemOptions

GOOD = {
    "claims": [
        {
            "claim": 1,
            "support_label": "supported",
            "evidence_ids": ["notes-17"],
            "evidence_quote": "Assignment 2 is due on 14 March.",
            "severity": None,
        },
        {
            "claim": 2,
            "support_label": "contradicted",
            "evidence_ids": ["notes-17"],
            "evidence_quote": "Late submissions are accepted within 48 hours with a penalty.",
            "severity": "major",
        },
    ],
    "relevance": 2,
}


def _with(**change: Any) -> dict[str, Any]:
    reply = json.loads(json.dumps(GOOD))
    for path, value in change.items():
        claim, key = path.split("__")
        reply["claims"][int(claim)][key] = value
    return reply


def _variants() -> dict[str, Any]:
    """variant name -> the judge's reply content (a string, or an object to dump)."""
    return {
        "good": GOOD,
        "fenced": "```json\n" + json.dumps(GOOD) + "\n```",
        "fabricated": _with(
            **{"1__evidence_quote": "Late submissions are accepted without penalty."}
        ),
        "unknown": _with(**{"0__evidence_ids": ["notes-99"]}),
        "prose": "The first claim is supported and the second is contradicted.",
        "merged": {"claims": GOOD["claims"][:1], "relevance": 2},
        "no-severity": _with(**{"1__severity": None}),
        "slow": GOOD,
    }


def _answers() -> list[Any]:
    base = unlabel(fixture_answer(CitationScope.SENTENCE))
    return [base.model_copy(update={"variant": name}) for name in _variants()]


def test_each_bad_judge_reply_gets_its_own_status_and_no_label() -> None:
    release = threading.Event()
    replies = _variants()

    def handle(path: str, body: Any) -> tuple[int, Any]:
        assert path == "/chat/completions"
        # which fixture answer this is: the variant is hidden from the judge, so the test
        # tells them apart by a marker it put in the question text
        question = body["messages"][1]["content"].split("\n", 1)[0]
        name = question.rsplit("#", 1)[1]
        if name == "slow":
            release.wait(30)  # held until the client has given up (its deadline is 1 s)
        content = replies[name]
        return 200, chat_reply(content if isinstance(content, str) else json.dumps(content))

    answers = _answers()
    cases = {
        f"a2#{a.variant}": CASE.model_copy(
            update={"case_id": f"a2#{a.variant}", "question": f"{CASE.question} #{a.variant}"}
        )
        for a in answers
    }
    answers = [a.model_copy(update={"case_id": f"a2#{a.variant}"}) for a in answers]
    with serve(handle) as (url, log):
        judge = OpenAIGenerator(
            SystemOptions(base_url=url, model="judge-1", timeout_s=1, retries=0)
        )
        try:
            labelled, reviews = judge_answers(answers, cases, PASSAGES, judge)
        finally:
            release.set()
    by = {r.variant: r for r in reviews}
    assert (by["good"].status, by["good"].problem) == (JudgeStatus.OK, None)
    assert (by["fenced"].status, by["fenced"].problem) == (JudgeStatus.OK, None)
    assert (by["fabricated"].status, by["fabricated"].problem) == (
        JudgeStatus.INVALID,
        JudgeProblem.QUOTE_NOT_IN_PASSAGE,
    )
    assert (by["unknown"].status, by["unknown"].problem) == (
        JudgeStatus.INVALID,
        JudgeProblem.UNKNOWN_ID,
    )
    assert (by["prose"].status, by["prose"].problem) == (JudgeStatus.INVALID, JudgeProblem.NOT_JSON)
    assert by["merged"].problem == JudgeProblem.CLAIM_BOUNDARIES
    assert by["no-severity"].problem == JudgeProblem.OFF_SCHEMA
    assert (by["slow"].status, by["slow"].problem) == (JudgeStatus.TIMEOUT, None)
    assert by["slow"].error == "timeout: no complete reply within the 1 s deadline"
    # the raw exchange is saved: the prompt as sent and the reply as received
    assert by["prose"].raw == "The first claim is supported and the second is contradicted."
    assert by["good"].prompt[1]["content"].count("[1] id=notes-17") == 1
    assert ANSWER in by["good"].prompt[1]["content"]
    assert len(log) == len(answers)
    # only the valid replies label their answers; the rest stay unlabelled, never zero
    states = {a.variant: outcome(a) for a in labelled}
    assert states == {
        "good": "unsupported",
        "fenced": "unsupported",
        "fabricated": "unlabelled",
        "unknown": "unlabelled",
        "prose": "unlabelled",
        "merged": "unlabelled",
        "no-severity": "unlabelled",
        "slow": "unlabelled",
    }
    good = next(a for a in labelled if a.variant == "good")
    assert [c.support_label for c in good.claims] == [
        SupportLabel.SUPPORTED,
        SupportLabel.CONTRADICTED,
    ]
    assert good.labelled_by == "judge:openai:judge-1@judge-1"
    assert good.relevance == 2
    doc = answer_metrics(labelled, cases)
    assert doc["outcomes"]["unlabelled"] == 6
    # faithfulness only over the two labelled answers: 1/2 each
    assert doc["metrics"]["faithfulness"]["estimate"] == 0.5
    assert doc["metrics"]["faithfulness"]["denominator"] == 2


def test_rag_judge_command_saves_prompts_replies_and_labels(tmp_path) -> None:
    from typer.testing import CliRunner

    from twinbench.cli import app
    from twinbench.jsonl import write_jsonl
    from twinbench.rag.answering import answer_lines, read_answers
    from twinbench.rag.corpus import write_corpus

    folder = tmp_path / "corpus"
    write_corpus(folder, PASSAGES.values(), version="fixture", cutting="by hand")
    write_jsonl(folder / "cases.jsonl", [CASE])
    answers = tmp_path / "answers.jsonl"
    answers.write_text(answer_lines([unlabel(fixture_answer(CitationScope.SENTENCE))]))

    def handle(path: str, body: Any) -> tuple[int, Any]:
        return 200, chat_reply(json.dumps(GOOD))

    with serve(handle) as (url, log):
        result = CliRunner().invoke(
            app,
            [
                "rag",
                "judge",
                str(answers),
                "--judge",
                "openai:judge-1",
                "--base-url",
                url,
                "--corpus",
                str(folder),
                "--out",
                str(tmp_path / "judged"),
            ],
        )
    assert result.exit_code == 0, result.output
    assert "judged 1 answers: ok 1" in result.output
    assert len(log) == 1
    (labelled,) = read_answers(tmp_path / "judged" / "answers.jsonl")
    assert [c.support_label for c in labelled.claims] == [
        SupportLabel.SUPPORTED,
        SupportLabel.CONTRADICTED,
    ]
    (row,) = [
        json.loads(x) for x in (tmp_path / "judged" / "judgements.jsonl").read_text().splitlines()
    ]
    assert row["status"] == "ok" and row["raw"] == json.dumps(GOOD)
    assert row["prompt"][0]["content"].startswith("You review an answer")
