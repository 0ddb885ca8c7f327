"""`twinbench rag score` on the committed own-answers fixture (eight answers to shipped
course-notes cases, every check and citation count worked out by hand below), its bad inputs,
a judge over a loopback server, and agreement with `rag ablate` on the same answers."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from tests.systems.servers import chat_reply, serve
from typer.testing import CliRunner

from twinbench.cli import app
from twinbench.rag.answers import Answer
from twinbench.rag.corpus import COURSE_CASES, COURSE_NOTES
from twinbench.rag.scoring import score_answers

FIXTURE = Path(__file__).resolve().parents[1] / "data" / "rag" / "own-answers.jsonl"
ROOT = Path(__file__).resolve().parents[2]

#: case -> (outcome, facts stated, forbidden made (forbidden, claim), evidence among the
#: answer's passages, links, supporting links, covered claims, citations not found,
#: failure labels), each worked out from the case and the passages:
EXPECTED: dict[str, tuple[Any, ...]] = {
    # [1] is the first cited id, syllabus:p3; both claims are the case's two required facts
    # (the second without its comma), whose evidence syllabus:p3 is cited: both supported,
    # both links supporting; relevance 2 on an answerable case: useful
    "a2-due-late": ("useful", [True, True], [], True, 2, 2, 2, [], []),
    # no marker, so the one claim cites syllabus:p4; it is forbidden claim 0 word for word and
    # lacks the fact's key value 20%: contradicted, its link supports nothing
    "a2-weight": (
        "unsupported",
        [False],
        [(0, 0)],
        True,
        1,
        0,
        0,
        [],
        ["unsupported_claim", "wrong_citation"],
    ),
    # the required fact word for word, but 64 is a key value lab-note:p1 does not hold, so the
    # rules call the claim insufficient (the fact is still stated)
    "batch-premise": (
        "unsupported",
        [True],
        [],
        True,
        1,
        0,
        0,
        [],
        ["unsupported_claim", "wrong_citation"],
    ),
    # claim 1 states the fact (18 September) citing lab-note:p1: supported; claim 2 cites [2]
    # of a one-passage list: not found, and 10 is in no passage: insufficient
    "lab1-deadline": (
        "unsupported",
        [True],
        [],
        True,
        2,
        1,
        1,
        ["2"],
        ["unsupported_claim", "wrong_citation"],
    ),
    # "abstained": true, shown db-notes:p7 (its evidence): a false abstention; no claims
    "bcnf-rule": ("abstained", [False], [], True, 0, 0, 0, [], ["false_abstention"]),
    # opens with INSUFFICIENT EVIDENCE on an unanswerable case, which has no evidence
    "missing-rate": ("abstained", [False], [], False, 0, 0, 0, [], ["correct_abstention"]),
    # forbidden claim 0 word for word; no evidence to contradict it with: insufficient
    "exam-date": (
        "unsupported",
        [False],
        [(0, 0)],
        False,
        1,
        0,
        0,
        [],
        ["unsupported_claim", "wrong_citation"],
    ),
    # an empty answer: no claim and no abstention, status invalid, nothing checked
    "deadlock-definition": ("error", None, None, None, 0, 0, 0, [], []),
}
ABSTENTIONS = {
    "bcnf-rule": {"right_for_context": False, "right_for_case": False},
    "missing-rate": {"right_for_context": True, "right_for_case": True},
}


def _observed(row: dict[str, Any]) -> tuple[Any, ...]:
    checks, cites = row["checks"], row["citations"]
    made = [(m["forbidden"], m["claim"]) for m in checks.get("forbidden_claims_made", [])]
    return (
        "useful" if row["useful"] else row["outcome"],
        checks.get("required_facts_stated"),
        made if checks else None,
        checks.get("evidence_reached"),
        cites["links"],
        cites["supporting_links"],
        cites["covered_claims"],
        cites["not_found"],
        row["failure_labels"],
    )


def test_the_fixture_scores_as_worked_out_by_hand() -> None:
    scored = score_answers(FIXTURE, COURSE_CASES, COURSE_NOTES)
    rows = {row["case_id"]: row for row in scored.document["answers"]}
    assert list(rows) == list(EXPECTED)  # file order
    assert [row["line"] for row in rows.values()] == list(range(1, 9))
    for case_id, expected in EXPECTED.items():
        assert _observed(rows[case_id]) == expected, case_id
        assert rows[case_id]["checks"].get("abstention") == ABSTENTIONS.get(case_id)
    assert rows["deadlock-definition"]["status"] == "invalid"
    assert rows["a2-weight"]["contradicted"] == 1 and rows["exam-date"]["insufficient"] == 1
    summary = scored.document["summary"]
    # facts: 2 + 1 + 1 + 1 + 1 + 1 + 1 checked (the invalid answer has none), 2+0+1+1 stated
    assert summary["exact_checks"] == {
        "required_facts_stated": 4,
        "required_facts_checked": 8,
        "forbidden_claims_made": 2,
        "answers_checked": 7,
    }
    assert summary["outcomes"] == {
        "supported": 1,
        "unsupported": 4,
        "abstained": 2,
        "error": 1,
        "unlabelled": 0,
    }
    metrics = summary["metrics"]
    # claims 2 + 1 + 1 + 2 + 1 = 7, links the same, supporting 2 + 1 = 3, covered 2 + 1 = 3
    assert (
        metrics["citation_precision"]["numerator"],
        metrics["citation_precision"]["denominator"],
    ) == (3, 7)
    assert (
        metrics["citation_coverage"]["numerator"],
        metrics["citation_coverage"]["denominator"],
    ) == (3, 7)
    assert metrics["citation_precision"]["estimate"] == pytest.approx(3 / 7)
    # faithfulness: the mean of 2/2, 0/1, 0/1, 1/2, 0/1 over the five answers with claims
    assert metrics["faithfulness"]["estimate"] == pytest.approx(1.5 / 5)
    # useful: a2-due-late of the six answerable answers
    assert (metrics["useful_rate"]["numerator"], metrics["useful_rate"]["denominator"]) == (1, 6)
    assert summary["citation_not_found"] == 1
    assert scored.document["cases"] == {"total": 103, "answered": 8, "unanswered": 95}
    assert scored.document["labelled_by"] == "rules:lexical/1"


def test_rag_score_writes_its_files_and_json(tmp_path: Path) -> None:
    runner = CliRunner()
    out = tmp_path / "score"
    shown = runner.invoke(app, ["rag", "score", str(FIXTURE), "--out", str(out)])
    assert shown.exit_code == 0, shown.output
    assert "8 answers to 8 of 103 cases: supported 1, unsupported 4" in shown.stdout
    assert re.search(r"a2-due-late\s+useful\s+2/2\s+0\s+yes\s+2/2\s+-", shown.stdout)
    assert sorted(p.name for p in out.iterdir()) == ["answers.jsonl", "score.json", "score.md"]
    document = json.loads((out / "score.json").read_text("utf-8"))
    assert document["schema"] == "twinbench.rag.score/1"
    assert document == json.loads(
        json.dumps(score_answers(FIXTURE, COURSE_CASES, COURSE_NOTES).document)
    )
    records = [
        Answer.model_validate_json(line)
        for line in (out / "answers.jsonl").read_text().splitlines()
    ]
    assert [a.case_id for a in records] == list(EXPECTED)
    lab1 = records[3]
    assert [c.cited_ids for c in lab1.claims] == [["lab-note:p1"], ["2"]]
    assert [c.support_label for c in lab1.claims] == ["supported", "insufficient"]
    assert records[1].claims[0].cited_ids == ["syllabus:p4"]  # no marker: every cited id
    markdown = (out / "score.md").read_text("utf-8")
    assert markdown.startswith("# twinbench rag score\n")
    assert (
        "| a2-weight | unsupported | 0/1 | 1 | yes | 0/1 | unsupported_claim, wrong_citation |"
        in markdown
    )
    assert "| citation precision | 0.43 [" in markdown
    as_json = runner.invoke(
        app, ["rag", "score", str(FIXTURE), "--out", str(tmp_path / "again"), "--json"]
    )
    assert as_json.exit_code == 0, as_json.output
    assert json.loads(as_json.stdout) == document
    for name in ("answers.jsonl", "score.json", "score.md"):  # same inputs, same bytes
        assert (tmp_path / "again" / name).read_bytes() == (out / name).read_bytes()


def test_the_progress_bar_follows_the_labelling(tmp_path: Path) -> None:
    """A real process on a terminal-like stderr draws the bar; --json keeps stdout clean."""
    env = {
        **os.environ,
        "PYTHONPATH": str(ROOT / "src"),
        "TTY_COMPATIBLE": "1",
        "TTY_INTERACTIVE": "1",
    }
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "twinbench",
            "rag",
            "score",
            str(FIXTURE),
            "--out",
            str(tmp_path / "o"),
            "--json",
        ],
        capture_output=True,
        text=True,
        env=env,
        cwd=tmp_path,
    )
    assert done.returncode == 0, done.stderr
    assert "labelling claims (rules)" in done.stderr and "8/8" in done.stderr
    assert json.loads(done.stdout)["summary"]["answers"] == 8


def _row(**fields: Any) -> dict[str, Any]:
    return {
        "case_id": "a2-weight",
        "answer": "It counts for 20% [1].",
        "cited_ids": ["syllabus:p4"],
    } | fields


BAD = {
    "unknown-case": (
        [_row(case_id="a9-weight")],
        "1: case_id 'a9-weight' is not a case of {cases}",
    ),
    "cited-not-in-corpus": (
        [_row(), _row(case_id="a2-due-late", cited_ids=["syllabus:p3", "syllabus:p99"])],
        "2: cited_ids.1: 'syllabus:p99' is not a passage of corpus course-notes-v1",
    ),
    "shown-not-in-corpus": (
        [_row(passages=["syllabus:p4", "notes-17"])],
        "1: passages.1: 'notes-17' is not a passage of corpus course-notes-v1",
    ),
    "missing-field": (
        [{"case_id": "a2-weight", "answer": "20%."}],
        "1: cited_ids: Field required",
    ),
    "unknown-field": ([_row(citations=[])], "1: citations: Extra inputs are not permitted"),
    "answered-twice": (
        [_row(), _row(answer="25%.")],
        "2: case_id 'a2-weight' is answered twice (first on line 1)",
    ),
    "not-text": ([_row(answer=20)], "1: answer: Input should be a valid string"),
}


@pytest.mark.parametrize("name", sorted(BAD))
def test_bad_rows_exit_2_naming_file_and_line_and_write_nothing(tmp_path: Path, name: str) -> None:
    rows, problem = BAD[name]
    path = tmp_path / f"{name}.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), "utf-8")
    out = tmp_path / "out"
    result = CliRunner().invoke(app, ["rag", "score", str(path), "--out", str(out)])
    assert result.exit_code == 2
    assert result.stderr == f"error: {path}:{problem.format(cases=COURSE_CASES)}\n"
    assert not out.exists()


def test_invalid_json_exits_2_and_leaves_the_old_files(tmp_path: Path) -> None:
    out = tmp_path / "out"
    runner = CliRunner()
    assert runner.invoke(app, ["rag", "score", str(FIXTURE), "--out", str(out)]).exit_code == 0
    before = {p.name: p.read_bytes() for p in out.iterdir()}
    path = tmp_path / "torn.jsonl"
    path.write_text(json.dumps(_row()) + '\n{"case_id": "a2-due-late", "answer": \n', "utf-8")
    result = runner.invoke(app, ["rag", "score", str(path), "--out", str(out)])
    assert result.exit_code == 2
    assert result.stderr.startswith(f"error: {path}:2: invalid JSON (")
    assert len(result.stderr.splitlines()) == 1
    assert {p.name: p.read_bytes() for p in out.iterdir()} == before
    scope = runner.invoke(
        app, ["rag", "score", str(FIXTURE), "--scope", "para", "--out", str(tmp_path / "x")]
    )
    assert scope.exit_code == 2
    assert scope.stderr == "error: --scope 'para': expected sentence or answer\n"
    assert not (tmp_path / "x").exists()


def _claim_count(prompt: str) -> int:
    claims = prompt.split("\n\nClaims:\n", 1)[1].split("\n\nReply", 1)[0]
    return len(re.findall(r"^\d+\. ", claims, flags=re.M))


def test_a_judge_labels_the_claims_and_a_bad_reply_stays_unlabelled(tmp_path: Path) -> None:
    def handle(path: str, body: Any) -> tuple[int, Any]:
        user = body["messages"][1]["content"]
        if user.startswith("Question: When is Assignment 2 due"):
            return 200, chat_reply("Both claims look right to me.")  # not JSON
        labels = [
            {"claim": n, "support_label": "insufficient", "severity": "minor"}
            for n in range(1, _claim_count(user) + 1)
        ]
        return 200, chat_reply(json.dumps({"claims": labels, "relevance": 1}))

    out = tmp_path / "judged"
    with serve(handle) as (url, log):
        result = CliRunner().invoke(
            app,
            [
                "rag",
                "score",
                str(FIXTURE),
                "--judge",
                "openai:judge-1",
                "--base-url",
                url,
                "--out",
                str(out),
                "--json",
            ],
        )
    assert result.exit_code == 0, result.output
    assert len(log) == 5  # the five answers that make claims
    document = json.loads(result.stdout)
    assert document["labelled_by"] == "judge:openai:judge-1@judge-1"
    assert document["summary"]["outcomes"] == {
        "supported": 0,
        "unsupported": 4,
        "abstained": 2,
        "error": 1,
        "unlabelled": 1,
    }
    # the exact checks do not depend on the labeller
    assert document["summary"]["exact_checks"]["required_facts_stated"] == 4
    precision = document["summary"]["metrics"]["citation_precision"]
    assert (precision["numerator"], precision["denominator"]) == (0, 5)  # a2-due-late left out
    unlabelled = document["answers"][0]
    assert (unlabelled["case_id"], unlabelled["outcome"]) == ("a2-due-late", "unlabelled")
    assert unlabelled["failure_labels"] == []  # no claim label, so no unsupported_claim
    judgements = [json.loads(line) for line in (out / "judgements.jsonl").read_text().splitlines()]
    assert [(j["case_id"], j["status"], j.get("problem")) for j in judgements] == [
        ("a2-due-late", "judge_invalid", "not_json"),
        ("a2-weight", "ok", None),
        ("batch-premise", "ok", None),
        ("lab1-deadline", "ok", None),
        ("exam-date", "ok", None),
    ]


#: scripted replies by case (the rest state their first required fact citing [1])
SCRIPT = {
    "exam-date": "The final examination is on 14 March [1].",
    "missing-rate": "INSUFFICIENT EVIDENCE",
    "a2-weight": "",
    "lab1-deadline": (
        "The submission deadline is 18 September [1][2]. Late write-ups lose 10 marks [7]."
    ),
    "bcnf-rule": "For every non-trivial dependency X → Y, X must be a superkey [db-notes:p7].",
    "batch-premise": "Lab 1 uses batch size 32. The notes never ask for 64.",
}


def test_rag_score_agrees_with_rag_ablate_on_the_same_answers(tmp_path: Path) -> None:
    """`rag ablate` (lexical, every case, a scripted generator on 127.0.0.1) writes answers
    with checks and rule labels; the same texts and passages in the own-answers format score
    to the same claims, checks, labels and metrics."""
    cases = {c["case_id"]: c for c in map(json.loads, COURSE_CASES.read_text().splitlines())}
    by_question = {c["question"]: c for c in cases.values()}

    def handle(path: str, body: Any) -> tuple[int, Any]:
        case = by_question[body["messages"][1]["content"].rsplit("\n\nQuestion: ", 1)[1]]
        reply = SCRIPT.get(case["case_id"], f"{case['required_facts'][0]} [1]")
        return 200, chat_reply(reply)

    ablated = tmp_path / "ablate"
    with serve(handle) as (url, _):
        run = CliRunner().invoke(
            app,
            [
                "rag",
                "ablate",
                "--generator",
                "openai:scripted",
                "--base-url",
                url,
                "--variants",
                "lexical",
                "--sample",
                "0",
                "--out",
                str(ablated),
            ],
        )
    assert run.exit_code == 0, run.output
    theirs = [
        Answer.model_validate_json(line)
        for line in (ablated / "answers-lexical.jsonl").read_text().splitlines()
    ]
    assert len(theirs) == 103
    rows = []
    for a in theirs:
        cited = [pid for c in a.claims for pid in c.cited_ids if pid in a.passages]
        rows.append(
            {
                "case_id": a.case_id,
                "answer": a.answer if a.answer is not None else "",
                "cited_ids": list(dict.fromkeys(cited)),
                "passages": a.passages,
            }
        )
    own = tmp_path / "own.jsonl"
    own.write_text("".join(json.dumps(r) + "\n" for r in rows), "utf-8")
    scored = CliRunner().invoke(
        app, ["rag", "score", str(own), "--out", str(tmp_path / "score"), "--json"]
    )
    assert scored.exit_code == 0, scored.output
    ours = [
        Answer.model_validate_json(line)
        for line in (tmp_path / "score" / "answers.jsonl").read_text().splitlines()
    ]
    same = (
        "status",
        "abstained",
        "passages",
        "claims",
        "citation_not_found",
        "relevance",
        "checks",
        "labelled_by",
    )
    for a, b in zip(theirs, ours, strict=True):
        assert a.model_dump(include=set(same)) == b.model_dump(include=set(same)), a.case_id
    kinds = {a.case_id: a for a in ours}
    assert kinds["missing-rate"].abstained and kinds["a2-weight"].status == "invalid"
    assert kinds["lab1-deadline"].citation_not_found == ["7"]
    ablation = json.loads((ablated / "ablation.json").read_text("utf-8"))
    assert json.loads(scored.stdout)["summary"] == ablation["variants"][0]["metrics"]


def test_the_format_is_published_as_a_json_schema() -> None:
    result = CliRunner().invoke(app, ["schema", "rag-own-answer"])
    assert result.exit_code == 0, result.output
    schema = json.loads(result.stdout)
    assert schema["required"] == ["case_id", "answer", "cited_ids"]
    assert set(schema["properties"]) == {"case_id", "answer", "cited_ids", "passages", "abstained"}
    assert schema["additionalProperties"] is False


def test_shown_passages_and_another_corpus_folder(tmp_path: Path) -> None:
    """`passages` given, no marker: the claim cites the cited id, which the assistant was not
    shown (not found, a wrong citation), and the evidence syllabus:p4 was shown (reached).
    `--corpus FOLDER` reads FOLDER/cases.jsonl by default."""
    import shutil

    folder = tmp_path / "notes"
    shutil.copytree(COURSE_NOTES, folder)
    path = tmp_path / "shown.jsonl"
    row = _row(
        answer="Assignment 2 contributes 20% of the course grade.", cited_ids=["syllabus:p3"]
    )
    path.write_text(json.dumps(row | {"passages": ["syllabus:p4"]}) + "\n", "utf-8")
    result = CliRunner().invoke(
        app,
        [
            "rag",
            "score",
            str(path),
            "--corpus",
            str(folder),
            "--out",
            str(tmp_path / "o"),
            "--json",
        ],
    )
    assert result.exit_code == 0, result.output
    (answer,) = json.loads(result.stdout)["answers"]
    assert answer["checks"]["evidence_reached"] is True
    assert answer["checks"]["required_facts_stated"] == [True]
    assert answer["citations"] == {
        "links": 1,
        "supporting_links": 0,
        "covered_claims": 0,
        "not_found": ["syllabus:p3"],
    }
    assert answer["outcome"] == "supported"  # the rules find the fact in the shown passage
    assert answer["failure_labels"] == ["wrong_citation"]
