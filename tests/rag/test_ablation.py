"""The seed's invented ablation accounting, reproduced from records built to match it, and a
real `twinbench rag ablate` run with the embedded model."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from tests.systems.servers import chat_reply, serve
from typer.testing import CliRunner

from twinbench.cli import app
from twinbench.rag.ablation import stratified, summarise
from twinbench.rag.ablation_report import ablation_html, ablation_markdown
from twinbench.rag.answers import Answer, AnswerStatus, Claim, Severity, SupportLabel
from twinbench.rag.records import Case

SUPPORTED = Claim(
    text="It is due on 14 March.",
    cited_ids=["p1"],
    support_label=SupportLabel.SUPPORTED,
    evidence_ids=["p1"],
    evidence_quote="due on 14 March",
)
UNSUPPORTED = Claim(
    text="It is due on 20 June.",
    cited_ids=["p1"],
    support_label=SupportLabel.INSUFFICIENT,
    severity=Severity.MAJOR,
)


def _case(n: int) -> Case:
    answerable = n < 70
    return Case(
        case_id=f"q{n:03d}",
        question=f"Question {n}?",
        answerable=answerable,
        required_facts=["It is due on 14 March."],
        evidence=[{"passage_id": "p1", "grade": 3, "quote": "due on 14 March"}]
        if answerable
        else [],
        corpus_version="fixture",
    )


def _answer(case: Case, variant: str, kind: str, ms: float) -> Answer:
    common = {"case_id": case.case_id, "variant": variant, "passages": ["p1"], "elapsed_ms": ms}
    if kind == "abstained":
        return Answer(
            status=AnswerStatus.OK, answer="INSUFFICIENT EVIDENCE", abstained=True, **common
        )
    claim = SUPPORTED if kind == "useful" else UNSUPPORTED
    return Answer(
        status=AnswerStatus.OK,
        answer=claim.text,
        claims=[claim],
        relevance=2,
        labelled_by="human:fixture",
        **common,
    )


def seed_accounting() -> tuple[dict[str, list[Answer]], dict[str, Case]]:
    """100 questions, 70 answerable / 30 unanswerable. Instruction-only: 50 useful, 12
    unsupported (8 answerable + 4 unanswerable), 38 abstained, 2000 ms each. The verifier
    removes 3 unsupported answers (two answerable, one unanswerable: they become abstentions),
    loses 1 useful answer (it abstains) and adds 1,170 ms to every case."""
    cases = [_case(n) for n in range(100)]
    plan = {
        "instruction-only": ["useful"] * 50
        + ["unsupported"] * 8
        + ["abstained"] * 12
        + ["unsupported"] * 4
        + ["abstained"] * 26,
        "verifier": ["useful"] * 49
        + ["abstained"]
        + ["abstained"] * 2
        + ["unsupported"] * 6
        + ["abstained"] * 12
        + ["abstained"]
        + ["unsupported"] * 3
        + ["abstained"] * 26,
    }
    ms = {"instruction-only": 2000.0, "verifier": 3170.0}
    answers = {
        v: [_answer(c, v, kind, ms[v]) for c, kind in zip(cases, kinds, strict=True)]
        for v, kinds in plan.items()
    }
    return answers, {c.case_id: c for c in cases}


def test_the_seed_accounting_is_reproduced() -> None:
    answers, cases = seed_accounting()
    doc = summarise(answers, cases, seed=0)
    io, ver = doc["variants"]
    assert (io["useful"], io["unsupported"], io["abstained"], io["error"]) == (50, 12, 38, 0)
    assert (ver["useful"], ver["unsupported"], ver["abstained"], ver["error"]) == (49, 9, 42, 0)
    assert io["answerable_answers"] == ver["answerable_answers"] == 70
    assert io["useful_rate"]["estimate"] == pytest.approx(50 / 70)
    assert ver["useful_rate"]["estimate"] == pytest.approx(49 / 70)
    # "removes 3 unsupported answers ... loses 1 useful answer and adds 1,170 ms"
    assert io["unsupported"] - ver["unsupported"] == 3
    assert io["useful"] - ver["useful"] == 1
    assert ver["latency_ms"]["mean"] - io["latency_ms"]["mean"] == pytest.approx(1170.0)
    (pair,) = doc["pairs"]
    assert (pair["a"], pair["b"], pair["cases"]) == ("instruction-only", "verifier", 100)
    assert pair["named"] == {"fixed → abstained": 3, "useful → abstained": 1}
    assert pair["transitions"] == {
        "abstained → abstained": 38,
        "unsupported → abstained": 3,
        "unsupported → unsupported": 9,
        "useful → abstained": 1,
        "useful → useful": 49,
    }
    assert pair["matrix"]["unsupported"]["abstained"] == 3
    unsupported = pair["tests"]["unsupported"]["sign_flip"]
    assert unsupported["mean"] == pytest.approx(-0.03)
    assert (unsupported["negative"], unsupported["positive"], unsupported["zero"]) == (3, 0, 97)
    # exact two-sided p for three equal non-zero differences: P(|S| = 3) = 2/8 = 0.25
    assert 0.22 < unsupported["p_value"] < 0.28
    useful = pair["tests"]["useful"]["sign_flip"]
    assert useful["mean"] == pytest.approx(-0.01)
    # one non-zero difference: every flip reaches it, p = 1
    assert useful["p_value"] == 1.0
    interval = pair["tests"]["unsupported"]["interval"]
    assert interval["low"] <= -0.03 <= interval["high"] <= 0.0
    markdown = ablation_markdown(doc | _context())
    assert "| verifier | 49 | 9 | 42 | 0 | 0 | 49/70 |" in markdown
    assert "Labeller–human agreement: not measured" in markdown
    assert "fixed → abstained 3, useful → abstained 1" in markdown
    assert "<svg" in ablation_html(doc | _context())


def _context() -> dict[str, object]:
    return {
        "cases": {"total": 100, "answerable": 70, "unanswerable": 30, "adversarial": 0},
        "corpus": {"version": "fixture"},
        "generator": "fixture",
        "budget": {
            "passages": 3,
            "budget_words": 220,
            "max_tokens": 48,
            "temperature": 0.0,
            "scope": "sentence",
        },
        "repeats": 1,
        "labelled_by": "human:fixture",
    }


def test_stratified_sample_draws_every_slice() -> None:
    cases = [_case(n) for n in range(100)]
    chosen = stratified(cases, 10, seed=3)
    assert len(chosen) == 10
    assert sum(c.answerable for c in chosen) == 5  # alternating slices: 5 answerable, 5 not
    assert chosen == stratified(cases, 10, seed=3)
    assert [c.case_id for c in chosen] == sorted(c.case_id for c in chosen)
    assert stratified(cases, 0, seed=3) == cases


def test_rag_ablate_runs_the_embedded_model(tmp_path: Path) -> None:
    """Two variants on three cases with the real SmolLM2: every answer has a status, a
    whole-path latency and rule labels; the files are written and the table printed."""
    out = tmp_path / "ablate"
    result = CliRunner().invoke(
        app,
        [
            "rag",
            "ablate",
            "--sample",
            "3",
            "--variants",
            "lexical,verifier",
            "--max-tokens",
            "24",
            "--out",
            str(out),
        ],
    )
    assert result.exit_code == 0, result.output
    assert "lexical" in result.output and "lexical → verifier" in result.output
    doc = json.loads((out / "ablation.json").read_text())
    assert doc["cases"]["total"] == 3
    assert [v["variant"] for v in doc["variants"]] == ["lexical", "verifier"]
    for row in doc["variants"]:
        assert sum(row["classes"].values()) == 3
        assert row["latency_ms"]["mean"] > 0
    lines = (out / "answers-verifier.jsonl").read_text().splitlines()
    answers = [Answer.model_validate_json(line) for line in lines]
    assert len(answers) == 3
    for a in answers:
        assert a.generator and a.generator.startswith("smollm2@")
        assert set(a.stage_ms) == {"retrieval", "assembly", "generation", "verification"}
        assert a.elapsed_ms == pytest.approx(sum(a.stage_ms.values()), abs=0.01)
        trace = a.raw.get("verifier") if isinstance(a.raw, dict) else None
        if trace is None:  # nothing to verify: the draft abstained or failed
            assert a.request_cost["verifier_calls"] == 0
        else:  # one call per drafted claim, more when a reply had to be asked again
            assert a.request_cost["verifier_calls"] >= len(trace) >= 1
        if a.status == AnswerStatus.OK and not a.abstained:
            assert a.labelled_by == "rules:lexical/1"
        if a.status == AnswerStatus.OK:  # the exact checks ran on every answer there is
            case_facts = {c["case_id"]: len(c["required_facts"]) for c in _embedded_cases()}
            assert len(a.checks["required_facts_stated"]) == case_facts[a.case_id]
            assert isinstance(a.checks["evidence_reached"], bool)
    assert (out / "ablation.md").read_text().startswith("# twinbench rag ablate")
    assert "<svg" in (out / "ablation.html").read_text()


def _embedded_cases() -> list[dict[str, object]]:
    from twinbench.rag.corpus import COURSE_CASES

    return [json.loads(line) for line in COURSE_CASES.read_text().splitlines()]


def test_bad_variant_and_greedy_repeats_exit_2(tmp_path: Path) -> None:
    runner = CliRunner()
    bad = runner.invoke(
        app, ["rag", "ablate", "--variants", "lexical,magic", "--out", str(tmp_path)]
    )
    assert bad.exit_code == 2
    assert "unknown variant 'magic'" in bad.output
    greedy = runner.invoke(app, ["rag", "ablate", "--repeats", "2", "--out", str(tmp_path)])
    assert greedy.exit_code == 2
    assert "--repeats above 1 needs --temperature above 0" in greedy.output
    assert not list(tmp_path.iterdir())


def _scripted(path: str, body: Any) -> tuple[int, Any]:
    """A generator on 127.0.0.1: every answer quotes passage [1]'s first sentence."""
    passage = body["messages"][1]["content"].split("\n")[1]
    return 200, chat_reply(passage.split(": ", 1)[-1].split(". ")[0] + " [1].")


def test_ablation_reports_each_stage_of_each_variant(tmp_path: Path) -> None:
    from twinbench.rag.ablation import run_ablation
    from twinbench.rag.corpus import COURSE_NOTES
    from twinbench.rag.generation import OpenAIGenerator
    from twinbench.systems.base import SystemOptions

    seen: list[tuple[str, int, int]] = []
    with serve(_scripted) as (url, log):
        generator = OpenAIGenerator(SystemOptions(base_url=url, model="scripted", concurrency=1))
        run_ablation(
            COURSE_NOTES,
            tmp_path / "out",
            variants=["lexical"],
            generator=generator,
            sample=6,
            progress=lambda stage, done, total: seen.append((stage, done, total)),
        )
    assert len(log) == 6
    stages = list(dict.fromkeys(stage for stage, _, _ in seen))
    assert stages == [
        "lexical (1/1): retrieving (bm25)",
        "lexical (1/1): answering",
        "lexical (1/1): labelling claims (rules)",
    ]
    # retrieval per query; answering in rounds of 4 x concurrency 1; labelling per answer
    assert [(d, t) for s, d, t in seen if s.endswith("retrieving (bm25)")] == [
        (n, 6) for n in range(7)
    ]
    assert [(d, t) for s, d, t in seen if s.endswith("answering")] == [(0, 6), (4, 6), (6, 6)]
    assert [(d, t) for s, d, t in seen if s.endswith("(rules)")] == [(n, 6) for n in range(1, 7)]


def test_rag_ablate_draws_a_progress_bar_on_a_terminal(tmp_path: Path) -> None:
    import os
    import subprocess
    import sys

    root = Path(__file__).resolve().parents[2]
    env = {
        **os.environ,
        "PYTHONPATH": str(root / "src"),
        "TTY_COMPATIBLE": "1",
        "TTY_INTERACTIVE": "1",
    }
    with serve(_scripted) as (url, _):
        done = subprocess.run(
            [
                sys.executable,
                "-m",
                "twinbench",
                "rag",
                "ablate",
                *("--generator", "openai:scripted", "--base-url", url),
                *("--variants", "lexical", "--sample", "4", "--out", str(tmp_path / "o")),
            ],
            capture_output=True,
            text=True,
            env=env,
            cwd=tmp_path,
        )
    assert done.returncode == 0, done.stderr
    assert "lexical (1/1): answering" in done.stderr
    assert "lexical (1/1): labelling claims (rules)" in done.stderr and "4/4" in done.stderr
    assert "twinbench rag ablate" in done.stdout  # the tables still print after the bar
