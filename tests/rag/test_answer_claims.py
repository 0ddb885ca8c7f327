"""The seed's Assignment 2 fixture: claims, citations under both scopes, faithfulness, labels."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from twinbench.rag.answer_metrics import answer_metrics, claim_counts, outcome, useful
from twinbench.rag.answers import (
    Answer,
    AnswerStatus,
    CitationScope,
    Claim,
    FailureLabel,
    Severity,
    SupportLabel,
    revised,
)
from twinbench.rag.claims import CLAIM_RULE, sentences, split_claims
from twinbench.rag.factcheck import (
    RULES_LABELLER,
    exact_checks,
    failure_labels,
    key_values,
    label_by_rules,
    normalise,
    states,
)
from twinbench.rag.records import Case, Passage

ANSWER = "Assignment 2 is due on 14 March. Late submissions receive no penalty [notes-17]."
NOTES_17 = (
    "Assignment 2 is due on 14 March. Late submissions are accepted within 48 hours with a penalty."
)
NOTES_18 = "Assignment 2 contributes 20% of the course grade."
QUESTION = "When is Assignment 2 due, and are late submissions allowed?"

PASSAGES = {
    "notes-17": Passage(
        passage_id="notes-17", doc_id="notes", text=NOTES_17, corpus_version="fixture"
    ),
    "notes-18": Passage(
        passage_id="notes-18", doc_id="notes", text=NOTES_18, corpus_version="fixture"
    ),
}
CASE = Case(
    case_id="a2",
    question=QUESTION,
    answerable=True,
    required_facts=[
        "Assignment 2 is due on 14 March.",
        "Late submissions are accepted within 48 hours, with a penalty.",
    ],
    forbidden_claims=["Late submissions receive no penalty."],
    evidence=[
        {"passage_id": "notes-17", "grade": 3, "quote": "Assignment 2 is due on 14 March."},
    ],
    corpus_version="fixture",
)


def fixture_answer(scope: CitationScope) -> Answer:
    """The seed's answer, split under `scope`, labelled as the seed labels it (by a human)."""
    split = split_claims(ANSWER, ["notes-17", "notes-18"], scope)
    date, penalty = split.claims
    labelled = [
        date.model_copy(
            update={
                "support_label": SupportLabel.SUPPORTED,
                "evidence_ids": ["notes-17"],
                "evidence_quote": "Assignment 2 is due on 14 March.",
            }
        ),
        penalty.model_copy(
            update={
                "support_label": SupportLabel.CONTRADICTED,
                "evidence_ids": ["notes-17"],
                "evidence_quote": "Late submissions are accepted within 48 hours with a penalty.",
                "severity": Severity.MAJOR,
            }
        ),
    ]
    return Answer(
        case_id="a2",
        variant="fixture",
        status=AnswerStatus.OK,
        answer=ANSWER,
        passages=["notes-17", "notes-18"],
        claims=labelled,
        citation_scope=scope,
        relevance=2,
        labelled_by="annotator-1",
        claim_rule=CLAIM_RULE,
    )


def test_the_answer_is_two_claims_and_the_citation_trails_the_second():
    split = split_claims(ANSWER, ["notes-17", "notes-18"], CitationScope.SENTENCE)
    assert [c.text for c in split.claims] == [
        "Assignment 2 is due on 14 March.",
        "Late submissions receive no penalty.",
    ]
    assert [c.cited_ids for c in split.claims] == [[], ["notes-17"]]
    assert split.citation_not_found == []


def test_answer_scope_gives_every_claim_the_citation():
    split = split_claims(ANSWER, ["notes-17", "notes-18"], CitationScope.ANSWER)
    assert [c.cited_ids for c in split.claims] == [["notes-17"], ["notes-17"]]


def test_faithfulness_is_one_half_and_relevance_two():
    answer = fixture_answer(CitationScope.SENTENCE)
    counts = claim_counts(answer)
    assert counts["faithfulness"] == 0.5
    assert (counts["supported"], counts["contradicted"], counts["claims"]) == (1, 1, 2)
    assert answer.relevance == 2
    assert outcome(answer) == "unsupported"
    assert not useful(answer, CASE)


def test_sentence_scope_citation_precision_zero_and_coverage_zero():
    # one link (penalty claim, notes-17); that claim is contradicted: 0/1 links support;
    # the supported date claim cites nothing: 0/2 claims covered
    counts = claim_counts(fixture_answer(CitationScope.SENTENCE))
    assert (counts["supporting_links"], counts["links"]) == (0, 1)
    assert (counts["covered"], counts["claims"]) == (0, 2)


def test_answer_scope_citation_precision_and_coverage_one_half():
    # two links; (date claim, notes-17) supports: 1/2; the date claim is covered: 1/2
    counts = claim_counts(fixture_answer(CitationScope.ANSWER))
    assert (counts["supporting_links"], counts["links"]) == (1, 2)
    assert (counts["covered"], counts["claims"]) == (1, 2)


def test_metrics_document_reports_counts_beside_rates():
    doc = answer_metrics([fixture_answer(CitationScope.ANSWER)], {"a2": CASE})
    m = doc["metrics"]
    assert m["faithfulness"]["estimate"] == 0.5
    assert (m["citation_precision"]["numerator"], m["citation_precision"]["denominator"]) == (1, 2)
    assert m["citation_coverage"]["estimate"] == 0.5
    assert m["contradicted_rate"]["estimate"] == 0.5
    assert m["relevance_mean"]["estimate"] == 2.0
    assert doc["severity"] == {"minor": 0, "major": 1, "critical": 0}
    assert doc["outcomes"]["unsupported"] == 1
    assert doc["failure_labels"]["answerable"] == {
        "answers": 1,
        "unsupported_claim": 1,
        "wrong_citation": 1,
    }


def test_rules_label_the_fixture_as_the_seed_does():
    split = split_claims(ANSWER, ["notes-17", "notes-18"], CitationScope.SENTENCE)
    answer = Answer(
        case_id="a2",
        variant="fixture",
        status=AnswerStatus.OK,
        answer=ANSWER,
        passages=["notes-17", "notes-18"],
        claims=split.claims,
    )
    labelled = label_by_rules(answer, CASE, PASSAGES)
    assert labelled.labelled_by == RULES_LABELLER
    assert [c.support_label for c in labelled.claims] == [
        SupportLabel.SUPPORTED,
        SupportLabel.CONTRADICTED,
    ]
    assert labelled.claims[0].evidence_ids == ["notes-17"]
    assert labelled.claims[1].severity == Severity.MAJOR  # no key value in the claim
    assert labelled.relevance == 2  # both requested parts are addressed
    checks = exact_checks(labelled, CASE)
    assert checks.facts_stated == [True, False]
    assert checks.forbidden_made == [(0, 1)]


def test_unknown_citation_is_citation_not_found_and_a_wrong_citation():
    split = split_claims("It is due on 14 March [7]. It counts 20% [notes-99].", ["notes-17"])
    assert split.citation_not_found == ["7", "notes-99"]
    assert [c.cited_ids for c in split.claims] == [["7"], ["notes-99"]]
    answer = Answer(
        case_id="a2",
        variant="v",
        status=AnswerStatus.OK,
        answer="x",
        passages=["notes-17"],
        claims=split.claims,
        citation_not_found=split.citation_not_found,
    )
    labelled = label_by_rules(answer, CASE, PASSAGES)
    assert FailureLabel.WRONG_CITATION in failure_labels(labelled, CASE)
    assert claim_counts(labelled)["links"] == 2


def test_abstention_labels_depend_on_what_reached_the_prompt():
    unanswerable = CASE.model_copy(update={"answerable": False, "evidence": []})

    def abstain(passages: list[str]) -> Answer:
        return Answer(
            case_id="a2",
            variant="v",
            status=AnswerStatus.OK,
            answer="INSUFFICIENT EVIDENCE",
            abstained=True,
            passages=passages,
        )

    assert failure_labels(abstain(["notes-17"]), CASE) == [FailureLabel.FALSE_ABSTENTION]
    # evidence existed but retrieval missed it: right for the context, the system failed
    missed = abstain(["notes-18"])
    assert failure_labels(missed, CASE) == [FailureLabel.MISSING_EVIDENCE]
    assert exact_checks(missed, CASE).abstention == {
        "right_for_context": True,
        "right_for_case": False,
    }
    assert failure_labels(abstain(["notes-18"]), unanswerable) == [FailureLabel.CORRECT_ABSTENTION]


def test_an_unlabelled_answer_gets_only_the_labels_that_need_no_claim_label():
    """A judge that failed leaves the claims unlabelled: no unsupported_claim, and a wrong
    citation only for a citation that was not found."""
    from twinbench.rag.judge import unlabel

    blank = unlabel(fixture_answer(CitationScope.SENTENCE))
    assert failure_labels(blank, CASE) == []
    lost = revised(blank, citation_not_found=["notes-99"])
    assert failure_labels(lost, CASE) == [FailureLabel.WRONG_CITATION]
    missed = revised(blank, passages=["notes-18"])  # and the evidence never reached it
    assert failure_labels(missed, CASE) == [FailureLabel.MISSING_EVIDENCE]


def test_a_timeout_is_never_an_abstention():
    failed = Answer(case_id="a2", variant="v", status=AnswerStatus.TIMEOUT, error="timeout: 5 s")
    assert outcome(failed) == "error"
    assert failure_labels(failed, CASE) == []
    with pytest.raises(ValidationError, match="not an abstention"):
        Answer(case_id="a2", variant="v", status="timeout", error="t", abstained=True)


def test_a_labelled_unsupported_claim_needs_a_severity():
    with pytest.raises(ValidationError, match="needs a severity"):
        Claim(text="x", support_label="insufficient")
    with pytest.raises(ValidationError, match="labelled_by"):
        revised(fixture_answer(CitationScope.SENTENCE), labelled_by=None)


@pytest.mark.parametrize(
    ("text", "values"),
    [
        ("Due on 14 March.", {"14 march"}),
        ("due March 14th", {"14 march"}),
        ("1,022 hosts", {"1022"}),
        ("20 percent of the grade", {"20%"}),
        ("within seven days", {"7"}),
        ("from 10:00-11:00 in room 3.14", {"10:00", "11:00", "3.14"}),
        ("page 0x3, offset 0xA7F", {"0x3", "0xa7f"}),
    ],
)
def test_key_values_after_the_published_normalisation(text, values):
    assert key_values(text) == values


def test_numbers_and_dates_match_exactly():
    assert states("Lab 1 is due on 18 September.", "The Lab 1 deadline: due 18 September")
    assert not states("Lab 1 is due on 18 September.", "Lab 1 is due on 19 September")
    assert not states("The learning rate is 0.01.", "The learning rate is 0.001.")
    # negation must agree
    assert not states("2PL prevents deadlock.", "2PL does not prevent deadlock.")
    assert normalise("It doesn't.") == "it does not"


def test_sentences_keep_decimals_and_abbreviations_whole():
    text = "Recall is 0.75, e.g. 30 of 40. Dr Okafor decides. [2]\n- Extensions: seven days"
    assert sentences(text) == [
        "Recall is 0.75, e.g. 30 of 40.",
        "Dr Okafor decides. [2]",
        "Extensions: seven days",
    ]


def test_an_unfinished_last_sentence_of_a_cut_off_output_is_not_a_claim():
    from twinbench.rag.answering import read_generation
    from twinbench.rag.generation import Generation

    text = "Assignment 2 is due on 14 March [1]. The regularisation lab inserts dropout into the"
    cut = Generation("ok", text, truncated=True)
    answer = read_generation(CASE, "v", 0, cut, ["notes-17"], CitationScope.SENTENCE, "g")
    assert [c.text for c in answer.claims] == ["Assignment 2 is due on 14 March."]
    assert answer.answer == text  # the text itself is kept whole
    whole = read_generation(
        CASE, "v", 0, Generation("ok", text), ["notes-17"], CitationScope.SENTENCE, "g"
    )
    assert len(whole.claims) == 2  # not cut off: the fragment is what the model chose to say


def test_a_claim_that_says_nothing_is_never_supported():
    split = split_claims("The answer is no. Use IS NULL", ["notes-17"])
    answer = Answer(
        case_id="a2",
        variant="v",
        status=AnswerStatus.OK,
        answer="x",
        passages=["notes-17"],
        claims=split.claims,
    )
    labelled = label_by_rules(answer, CASE, PASSAGES)
    assert labelled.claims[0].support_label == SupportLabel.INSUFFICIENT
    # a short statement needs two content words in common, not one ("null" alone)
    assert not states("Use IS NULL.", "WHERE x = NULL is a left outer join.")
    assert states("Use IS NULL.", "You should use IS NULL instead.")


def test_the_hand_labelled_smollm2_answers_are_scored_against_the_rules():
    """docs/data/rag-author-labels.jsonl: 19 real SmolLM2 answers labelled by hand. The
    agreement report's kappa is recomputed here from its own confusion table."""
    import importlib.util
    from pathlib import Path

    script = Path(__file__).resolve().parents[2] / "scripts" / "rag_labeller_agreement.py"
    spec = importlib.util.spec_from_file_location("agreement_script", script)
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    report = module.measure()
    claims = report["claims"]
    table = claims["confusion"]["table"]
    n = sum(map(sum, table))
    assert n == claims["matched"] == 29 and claims["unmatched"] == 0
    p_o = sum(table[i][i] for i in range(3)) / n
    rows = [sum(r) / n for r in table]
    cols = [sum(table[i][j] for i in range(3)) / n for j in range(3)]
    p_e = sum(r * c for r, c in zip(rows, cols, strict=True))
    assert claims["agreement"] == pytest.approx(p_o)
    assert claims["kappa"] == pytest.approx((p_o - p_e) / (1 - p_e))
