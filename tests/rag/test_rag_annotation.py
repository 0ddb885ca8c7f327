"""Human labels of RAG answers: the blind package, labels read back and applied, agreement
(kappa worked by hand), the labelling page on a real 127.0.0.1 server, and the CLI."""

from __future__ import annotations

import json
import re
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx
import pytest
from typer.testing import CliRunner

from conftest import read_rows, write_rows
from twinbench.cli import app
from twinbench.jsonl import InputError, record_dict
from twinbench.rag.agreement import agreement
from twinbench.rag.annotation import open_package, package
from twinbench.rag.annotation_page import label_server
from twinbench.rag.answer_metrics import claim_counts, outcome
from twinbench.rag.answers import (
    Answer,
    AnswerStatus,
    CitationScope,
    ClaimLabel,
    Judgement,
    JudgeProblem,
    JudgeStatus,
    Severity,
    SupportLabel,
)
from twinbench.rag.claims import CLAIM_RULE, split_claims
from twinbench.rag.corpus import write_corpus
from twinbench.rag.labels import ItemLabels, apply_labels, read_labels
from twinbench.rag.records import Case, Passage

QUESTION = "When is Assignment 2 due, and are late submissions allowed?"
NOTES_17 = (
    "Assignment 2 is due on 14 March. Late submissions are accepted within 48 hours with a penalty."
)
NOTES_18 = "Assignment 2 contributes 20% of the course grade."
ANSWER = "Assignment 2 is due on 14 March. Late submissions receive no penalty [notes-17]."
WEIGHT_QUESTION = "How much does Assignment 2 count towards the grade?"
#: names the annotator must never see (the key alone holds the variant)
VARIANT = "hybrid-secret-variant"
GENERATOR = "secret-generator-7b"

PASSAGES = {
    "notes-17": Passage(
        passage_id="notes-17",
        doc_id="notes",
        title="Assignment 2",
        text=NOTES_17,
        corpus_version="fixture",
    ),
    "notes-18": Passage(
        passage_id="notes-18",
        doc_id="notes",
        title="Grading",
        text=NOTES_18,
        corpus_version="fixture",
    ),
}
CASES = {
    "a2": Case(
        case_id="a2",
        question=QUESTION,
        answerable=True,
        required_facts=["Assignment 2 is due on 14 March."],
        evidence=[
            {"passage_id": "notes-17", "grade": 3, "quote": "Assignment 2 is due on 14 March."}
        ],
        corpus_version="fixture",
    ),
    "weight": Case(
        case_id="weight",
        question=WEIGHT_QUESTION,
        answerable=True,
        required_facts=["Assignment 2 contributes 20% of the course grade."],
        evidence=[{"passage_id": "notes-18", "grade": 3, "quote": NOTES_18}],
        corpus_version="fixture",
    ),
}


def _answer(case_id: str, text: str, passages: list[str], trial: int = 0, **extra: Any) -> Answer:
    abstained = extra.get("abstained", False)
    split = split_claims(text, passages, CitationScope.SENTENCE)
    return Answer(
        case_id=case_id,
        variant=VARIANT,
        trial=trial,
        status=AnswerStatus.OK,
        answer=text,
        passages=passages,
        claims=[] if abstained else split.claims,
        claim_rule=CLAIM_RULE,
        generator=GENERATOR,
        **extra,
    )


def _answers() -> list[Answer]:
    """The Assignment 2 answer (rule-labelled: no label may reach the package), an abstention,
    a one-claim answer and a failed answer (nothing to label)."""
    first = _answer("a2", ANSWER, ["notes-17", "notes-18"])
    labelled = first.model_copy(
        update={
            "claims": [
                c.model_copy(
                    update={"support_label": SupportLabel.INSUFFICIENT, "severity": Severity.MINOR}
                )
                for c in first.claims
            ],
            "labelled_by": "rules:lexical/1",
        }
    )
    return [
        labelled,
        _answer("a2", "INSUFFICIENT EVIDENCE", ["notes-18"], trial=1, abstained=True),
        _answer(
            "weight",
            "Assignment 2 contributes 20% of the course grade [2].",
            ["notes-17", "notes-18"],
        ),
        Answer(case_id="a2", variant=VARIANT, trial=2, status=AnswerStatus.TIMEOUT, error="slow"),
    ]


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    out = tmp_path / "package"
    package(_answers(), CASES, PASSAGES, out, seed=7)
    return out


def _by_key(folder: Path) -> dict[tuple[str, str, int], str]:
    key = json.loads((folder / "key.json").read_text("utf-8"))["items"]
    return {(e["case_id"], e["variant"], e["trial"]): b for b, e in key.items()}


def _filled(folder: Path) -> list[dict[str, Any]]:
    """The template with the Assignment 2 answer and the abstention labelled by hand; the
    weight answer's row is left all null (not yet labelled)."""
    blind = _by_key(folder)
    rows = read_rows(folder / "labels.template.jsonl")
    for row in rows:
        row["annotator"] = "alice"
        if row["blind_id"] == blind[("a2", VARIANT, 0)]:
            row["relevance"] = 2
            row["claims"] = [
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
                    "evidence_quote": "Late submissions are accepted within 48 hours",
                    "severity": "major",
                },
            ]
        elif row["blind_id"] == blind[("a2", VARIANT, 1)]:
            row["abstention_appropriate"] = True
    return rows


def test_the_package_is_blind_and_holds_ok_answers_and_abstentions(folder: Path) -> None:
    assert sorted(p.name for p in folder.iterdir()) == [
        "README.md",
        "items.jsonl",
        "key.json",
        "labels.template.jsonl",
    ]
    texts = {path.name: path.read_text("utf-8") for path in folder.iterdir()}
    for name, text in texts.items():
        assert GENERATOR not in text and "rules:lexical" not in text, name
        assert (VARIANT in text) == (name == "key.json"), name
    for name in ("items.jsonl", "labels.template.jsonl"):  # the rule labels stay behind
        assert "insufficient" not in texts[name] and "minor" not in texts[name], name
    items = {row["blind_id"]: row for row in read_rows(folder / "items.jsonl")}
    blind = _by_key(folder)
    assert sorted(blind) == [("a2", VARIANT, 0), ("a2", VARIANT, 1), ("weight", VARIANT, 0)]
    first = items[blind[("a2", VARIANT, 0)]]
    assert first == {
        "schema": "twinbench.rag.annotation-item/1",
        "blind_id": blind[("a2", VARIANT, 0)],
        "question": QUESTION,
        "answer": ANSWER,
        "abstained": False,
        "passages": [
            {"number": 1, "passage_id": "notes-17", "title": "Assignment 2", "text": NOTES_17},
            {"number": 2, "passage_id": "notes-18", "title": "Grading", "text": NOTES_18},
        ],
        "claims": [
            {"number": 1, "text": "Assignment 2 is due on 14 March.", "cited_ids": []},
            {
                "number": 2,
                "text": "Late submissions receive no penalty.",
                "cited_ids": ["notes-17"],
            },
        ],
    }
    assert items[blind[("a2", VARIANT, 1)]]["abstained"] is True
    assert items[blind[("a2", VARIANT, 1)]]["claims"] == []
    template = {row["blind_id"]: row for row in read_rows(folder / "labels.template.jsonl")}
    assert template[blind[("a2", VARIANT, 0)]] == {
        "blind_id": blind[("a2", VARIANT, 0)],
        "annotator": None,
        "relevance": None,
        "claims": [
            {
                "claim": n,
                "support_label": None,
                "evidence_ids": [],
                "evidence_quote": None,
                "severity": None,
            }
            for n in (1, 2)
        ],
    }
    assert template[blind[("a2", VARIANT, 1)]]["abstention_appropriate"] is None
    readme = (folder / "README.md").read_text("utf-8")
    for phrase in (
        "Not found is not false",
        "do not split or merge claims",
        "**critical**",
        "**0** off-topic",
        "Citation scope",
        "Do not open `key.json`",
    ):
        assert phrase in readme


def test_blind_ids_order_and_sample_follow_the_seed(tmp_path: Path) -> None:
    package(_answers(), CASES, PASSAGES, tmp_path / "a", seed=7)
    package(_answers(), CASES, PASSAGES, tmp_path / "b", seed=7)
    package(_answers(), CASES, PASSAGES, tmp_path / "c", seed=8)
    same = [(tmp_path / d / "items.jsonl").read_text("utf-8") for d in "ab"]
    assert same[0] == same[1]
    assert not set(_by_key(tmp_path / "a").values()) & set(_by_key(tmp_path / "c").values())
    summary = package(_answers(), CASES, PASSAGES, tmp_path / "s", seed=7, sample=2)
    drawn = read_rows(tmp_path / "s" / "items.jsonl")
    assert len(drawn) == 2
    assert summary == {
        "items": 2,
        "abstentions": sum(row["abstained"] for row in drawn),
        "claims": sum(len(row["claims"]) for row in drawn),
        "failed_left_out": {"timeout": 1},
    }
    assert set(_by_key(tmp_path / "s")) < set(_by_key(tmp_path / "a"))
    again = package(_answers(), CASES, PASSAGES, tmp_path / "t", seed=7, sample=2)
    assert again == summary and _by_key(tmp_path / "s") == _by_key(tmp_path / "t")
    with pytest.raises(InputError, match="--sample 4: only 3 answers can be labelled"):
        package(_answers(), CASES, PASSAGES, tmp_path / "u", sample=4)


def test_labels_round_trip_into_the_metrics(folder: Path) -> None:
    path = write_rows(folder / "alice.jsonl", _filled(folder))
    labels = read_labels(path, open_package(folder))
    assert sorted(labels) == [("a2", VARIANT, 0), ("a2", VARIANT, 1)]  # weight: left all null
    assert labels[("a2", VARIANT, 1)] == ItemLabels((), None, True, "alice")
    labelled = apply_labels(_answers(), labels, "human:alice")
    assert [a.key for a in labelled] == [("a2", VARIANT, 0), ("a2", VARIANT, 1)]
    first, abstention = labelled
    assert [c.support_label for c in first.claims] == [
        SupportLabel.SUPPORTED,
        SupportLabel.CONTRADICTED,
    ]
    assert first.claims[1].severity == Severity.MAJOR
    assert first.claims[1].cited_ids == ["notes-17"]  # the split is kept
    assert first.claims[0].evidence_quote == "Assignment 2 is due on 14 March."
    assert (first.labelled_by, first.relevance, first.generator) == ("human:alice", 2, GENERATOR)
    assert claim_counts(first)["faithfulness"] == 0.5
    assert outcome(first) == "unsupported" and outcome(abstention) == "abstained"


def _bad(folder: Path, change: str) -> list[dict[str, Any]]:
    rows = _filled(folder)
    target = next(r for r in rows if r["blind_id"] == _by_key(folder)[("a2", VARIANT, 0)])
    claim = target["claims"][1]
    if change == "unknown id":
        target["blind_id"] = "b-0000000000"
    elif change == "repeated id":
        rows.append(dict(target))
    elif change == "claim numbers":
        claim["claim"] = 3
    elif change == "claim missing":
        target["claims"] = target["claims"][:1]
    elif change == "label":
        claim["support_label"] = "false"
    elif change == "severity":
        claim["severity"] = None
    elif change == "quote":
        claim["evidence_quote"] = "Late submissions receive no penalty."
    elif change == "evidence id":
        claim["evidence_ids"] = ["notes-99"]
    elif change == "relevance":
        target["relevance"] = 3
    elif change == "relevance bool":
        target["relevance"] = True
    return rows


@pytest.mark.parametrize(
    ("change", "problem"),
    [
        ("unknown id", "blind_id 'b-0000000000' is not an item of "),
        ("repeated id", "blind_id {blind} repeated (first on line 3)"),
        ("claim numbers", "claims are numbered [1, 3], expected [1, 2] (claim boundaries"),
        ("claim missing", "claims are numbered [1], expected [1, 2]"),
        ("label", "claims.2: support_label 'false' is not supported, contradicted or insufficient"),
        ("severity", "claims.2: a contradicted claim needs a severity (minor, major, critical)"),
        ("quote", "claims.2: evidence_quote 'Late submissions receive no penalty.' is not a span"),
        (
            "evidence id",
            "claims.2: evidence id 'notes-99' is not among the item's passages "
            "(notes-17, notes-18)",
        ),
        ("relevance", "relevance 3 is not 0, 1 or 2"),
        ("relevance bool", "relevance True is not 0, 1 or 2"),
    ],
)
def test_a_bad_label_is_one_line_naming_file_and_line(
    folder: Path, change: str, problem: str
) -> None:
    rows = _bad(folder, change)
    path = write_rows(folder / "bad.jsonl", rows)
    blind = _by_key(folder)[("a2", VARIANT, 0)]
    line = (
        len(rows)
        if change == "repeated id"
        else 1 + next(n for n, r in enumerate(rows) if r["blind_id"] in (blind, "b-0000000000"))
    )
    with pytest.raises(InputError) as caught:
        read_labels(path, open_package(folder))
    message = str(caught.value)
    assert "\n" not in message
    assert message.startswith(f"{path}:{line}: {problem.format(blind=blind)}"), message


def _labels(values: str, relevance: int | None) -> ItemLabels:
    names = {
        "S": SupportLabel.SUPPORTED,
        "C": SupportLabel.CONTRADICTED,
        "I": SupportLabel.INSUFFICIENT,
    }
    claims = tuple(ClaimLabel(claim=n, support_label=names[v]) for n, v in enumerate(values, 1))
    return ItemLabels(claims, relevance)


#: ten claims over four answers (3, 3, 2, 2 claims); rows a, columns b:
#:            b: S  C  I
#:   a: S        4  1  0     (a: 5 S, 2 C, 3 I; b: 5 S, 2 C, 3 I)
#:      C        0  1  1
#:      I        1  0  2
#: p_o = (4 + 1 + 2) / 10 = 0.7; p_e = 0.5*0.5 + 0.2*0.2 + 0.3*0.3 = 0.38;
#: kappa = (0.7 - 0.38) / (1 - 0.38) = 0.32 / 0.62 = 0.516129...
#: relevance a [2, 2, 1, 0], b [2, 1, 1, 0]: p_o = 3/4; p_e = (1*1 + 1*2 + 2*1) / 16 = 5/16;
#: kappa = (12/16 - 5/16) / (11/16) = 7/11
SIDE_A = {("q1", "v", 0): "SSS", ("q2", "v", 0): "SSC", ("q3", "v", 0): "CI", ("q4", "v", 0): "II"}
SIDE_B = {("q1", "v", 0): "SSS", ("q2", "v", 0): "SCC", ("q3", "v", 0): "II", ("q4", "v", 0): "IS"}
RELEVANCE_A, RELEVANCE_B = [2, 2, 1, 0], [2, 1, 1, 0]


def _check_hand_worked(report: dict[str, Any]) -> None:
    claims = report["claims"]
    assert (claims["matched"], claims["unmatched"]) == (10, 0)
    assert claims["agreement"] == pytest.approx(0.7)
    assert claims["kappa"] == pytest.approx(0.32 / 0.62)
    assert claims["confusion"]["labels"] == ["supported", "contradicted", "insufficient"]
    assert claims["confusion"]["table"] == [[4, 1, 0], [0, 1, 1], [1, 0, 2]]
    assert report["answer_level"] == {"answers": 4, "agree": 1, "rate": 0.25}
    relevance = report["relevance"]
    assert (relevance["answers"], relevance["agree"], relevance["rate"]) == (4, 3, 0.75)
    assert relevance["kappa"] == pytest.approx(7 / 11)


def test_kappa_between_two_annotators_is_the_hand_worked_value() -> None:
    a = {k: _labels(v, r) for (k, v), r in zip(SIDE_A.items(), RELEVANCE_A, strict=True)}
    b = {k: _labels(v, r) for (k, v), r in zip(SIDE_B.items(), RELEVANCE_B, strict=True)}
    a[("q5", "v", 0)] = _labels("S", 2)  # labelled by a only: counted apart
    report = agreement(a, b)
    _check_hand_worked(report)
    assert report["answers"] == {"both": 4, "only_a": 1, "only_b": 0, "judge_failed": {}}
    assert agreement(a, a)["claims"]["kappa"] == pytest.approx(1.0)


def _judgement(
    key: tuple[str, str, int], status: JudgeStatus, labels: ItemLabels | None
) -> Judgement:
    return Judgement(
        case_id=key[0],
        variant=key[1],
        trial=key[2],
        judge="judge:fixture@1",
        status=status,
        problem=JudgeProblem.NOT_JSON if status == JudgeStatus.INVALID else None,
        prompt=[{"role": "user", "content": "label these claims"}],
        labels=list(labels.claims) if labels else [],
        relevance=labels.relevance if labels else None,
    )


def test_judge_failures_are_neither_agreement_nor_disagreement() -> None:
    human = {k: _labels(v, r) for (k, v), r in zip(SIDE_A.items(), RELEVANCE_A, strict=True)}
    human[("q5", "v", 0)] = _labels("SC", 2)
    judge = [
        _judgement(k, JudgeStatus.OK, _labels(v, r))
        for (k, v), r in zip(SIDE_B.items(), RELEVANCE_B, strict=True)
    ]
    judge.append(_judgement(("q5", "v", 0), JudgeStatus.INVALID, None))
    judge.append(_judgement(("q6", "v", 0), JudgeStatus.TIMEOUT, None))
    report = agreement(human, judge)
    _check_hand_worked(report)  # q5's two claims are in no count
    assert report["answers"] == {
        "both": 4,
        "only_a": 0,
        "only_b": 0,
        "judge_failed": {"judge_invalid": 1, "judge_timeout": 1},
    }


def test_kappa_is_none_when_chance_agreement_is_one() -> None:
    same = {("q1", "v", 0): _labels("SS", 2)}
    report = agreement(same, same)
    assert report["claims"]["agreement"] == 1.0
    assert report["claims"]["kappa"] is None  # p_e = 1: 0/0
    assert agreement({}, {})["claims"]["agreement"] is None


@contextmanager
def _served(folder: Path, annotator: str) -> Iterator[str]:
    server = label_server(folder, annotator)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


def test_the_page_shows_the_item_blind_and_saves_labels_read_labels_accepts(tmp_path: Path) -> None:
    folder = tmp_path / "one"
    package(_answers()[:1], CASES, PASSAGES, folder, seed=3)
    blind = _by_key(folder)[("a2", VARIANT, 0)]
    with _served(folder, "alice") as url:
        page = httpx.get(url + "/", timeout=10)
        assert page.status_code == 200
        html = page.text
        for shown in (
            QUESTION,
            NOTES_17,
            NOTES_18,
            "[1] notes-17",
            "[2] notes-18",
            ANSWER,
            "Claim 2: Late submissions receive no penalty.",
            blind,
        ):
            assert shown in html, shown
        assert 'name="c1.label" value="contradicted"' in html
        assert 'name="c2.evidence.2"' in html and 'name="c1.severity"' in html
        assert VARIANT not in html and GENERATOR not in html
        token = re.search(r'name="token" value="([^"]+)"', html)
        assert token is not None
        form = {
            "token": token.group(1),
            "blind_id": blind,
            "c1.label": "supported",
            "c1.evidence.1": "1",
            "c1.quote": "Assignment 2 is due on 14 March.",
            "c1.severity": "",
            "c2.label": "contradicted",
            "c2.evidence.1": "1",
            "c2.quote": "accepted within 48 hours with a penalty",
            "c2.severity": "",
            "relevance": "2",
        }
        refused = httpx.post(url + "/labels", data=form, timeout=10)
        assert refused.status_code == 400
        assert "claims.2: a contradicted claim needs a severity" in refused.text
        assert not (folder / "labels" / "alice.jsonl").exists()
        stale = httpx.post(url + "/labels", data={**form, "token": "x"}, timeout=10)
        assert stale.status_code == 403
        other = httpx.post(
            url + "/labels", data=form, headers={"Origin": "http://evil.example"}, timeout=10
        )
        assert other.status_code == 403
        saved = httpx.post(url + "/labels", data={**form, "c2.severity": "major"}, timeout=10)
        assert saved.status_code == 303
        assert "All 1 answers saved" in httpx.get(url + "/", timeout=10).text
        wrong_host = httpx.get(url + "/", headers={"Host": "attacker.example"}, timeout=10)
        assert wrong_host.status_code == 403
    labels = read_labels(folder / "labels" / "alice.jsonl", open_package(folder))
    assert labels == {
        ("a2", VARIANT, 0): ItemLabels(
            (
                ClaimLabel(
                    claim=1,
                    support_label=SupportLabel.SUPPORTED,
                    evidence_ids=["notes-17"],
                    evidence_quote="Assignment 2 is due on 14 March.",
                ),
                ClaimLabel(
                    claim=2,
                    support_label=SupportLabel.CONTRADICTED,
                    evidence_ids=["notes-17"],
                    evidence_quote="accepted within 48 hours with a penalty",
                    severity=Severity.MAJOR,
                ),
            ),
            2,
            None,
            "alice",
        )
    }


def test_the_page_refuses_an_annotator_name_that_is_not_a_file_name(folder: Path) -> None:
    with pytest.raises(InputError, match=r"--annotator '\.\./x'"):
        label_server(folder, "../x")


@pytest.fixture
def corpus(tmp_path: Path) -> Path:
    out = tmp_path / "corpus"
    write_corpus(out, PASSAGES.values(), version="fixture", cutting="by hand")
    write_rows(out / "cases.jsonl", [record_dict(c) for c in CASES.values()])
    return out


def test_cli_package_and_agreement(tmp_path: Path, corpus: Path) -> None:
    runner = CliRunner()
    answers = write_rows(tmp_path / "answers.jsonl", [record_dict(a) for a in _answers()])
    out = tmp_path / "pkg"
    made = runner.invoke(
        app,
        ["rag", "package", str(answers), "--corpus", str(corpus), "--out", str(out), "--seed", "7"],
    )
    assert made.exit_code == 0, made.stderr
    assert "wrote 3 items (1 abstentions, 3 claims)" in made.stdout
    assert "left out failed answers: 1 timeout" in made.stdout
    alice = write_rows(tmp_path / "alice.jsonl", _filled(out))
    bob_rows = _filled(out)
    first = next(r for r in bob_rows if r["relevance"] == 2)
    first["claims"][1].update(support_label="insufficient", evidence_ids=[], evidence_quote=None)
    bob = write_rows(tmp_path / "bob.jsonl", bob_rows)
    done = runner.invoke(app, ["rag", "agreement", str(out), str(alice), str(bob), "--json"])
    assert done.exit_code == 0, done.stderr
    report = json.loads(done.stdout)
    assert (report["a"], report["b"]) == ("alice", "bob")
    assert report["claims"]["matched"] == 2 and report["claims"]["agreement"] == 0.5
    assert report["claims"]["confusion"]["table"] == [[1, 0, 0], [0, 0, 1], [0, 0, 0]]
    assert report["abstention_appropriate"] == {"answers": 1, "agree": 1, "rate": 1.0}
    table = runner.invoke(app, ["rag", "agreement", str(out), str(alice), str(bob)])
    assert table.exit_code == 0 and "claim agreement" in table.stdout and "0.500" in table.stdout


def test_cli_agreement_with_judgements_and_a_bad_labels_file(tmp_path: Path, corpus: Path) -> None:
    runner = CliRunner()
    out = tmp_path / "pkg"
    package(_answers(), CASES, PASSAGES, out, seed=7)
    alice = write_rows(tmp_path / "alice.jsonl", _filled(out))
    judged = [
        _judgement(("a2", VARIANT, 0), JudgeStatus.OK, _labels("SC", 1)),
        _judgement(("weight", VARIANT, 0), JudgeStatus.INVALID, None),
        _judgement(("elsewhere", VARIANT, 0), JudgeStatus.OK, _labels("S", 2)),  # not packaged
    ]
    judgements = write_rows(tmp_path / "judgements.jsonl", [record_dict(j) for j in judged])
    done = runner.invoke(
        app, ["rag", "agreement", str(out), str(alice), "--judgements", str(judgements), "--json"]
    )
    assert done.exit_code == 0, done.stderr
    report = json.loads(done.stdout)
    assert report["claims"]["agreement"] == 1.0 and report["claims"]["matched"] == 2
    assert report["relevance"]["agree"] == 0  # 2 against 1
    assert report["answers"] == {
        "both": 1,
        "only_a": 1,
        "only_b": 0,
        "judge_failed": {"judge_invalid": 1},
    }
    bad = write_rows(tmp_path / "bad.jsonl", _bad(out, "relevance"))
    failed = runner.invoke(app, ["rag", "agreement", str(out), str(bad), str(alice)])
    assert failed.exit_code == 2
    lines = failed.stderr.strip().splitlines()
    assert len(lines) == 1 and re.match(
        rf"error: {re.escape(str(bad))}:\d: relevance 3 is not", lines[0]
    )
    neither = runner.invoke(app, ["rag", "agreement", str(out), str(alice)])
    assert neither.exit_code == 2 and "give LABELS_B or --judgements" in neither.stderr
