"""Property tests (hypothesis, derandomized) for the RAG readers: TREC runs and qrels, cases,
answers and judgements.

Each starts from a valid file and breaks one field of its second row (or one column of a TREC
line) with an arbitrary value. Whatever arrives, the reader either accepts it, and then what it
read writes back and reads again to the same records (a round trip), or it raises InputError
naming the file and the broken line; nothing else escapes. A number must be finite: `NaN`,
`Infinity` and `1e999` (JSON that Python writes and some tools emit) are refused.
"""

from __future__ import annotations

import copy
import json
import math
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from rag.test_cases_validate import GOOD, LAB, VERSION
from rag.test_rag_annotation import _answers
from twinbench.jsonl import InputError, dumps_line, record_dict
from twinbench.rag.answering import read_answers
from twinbench.rag.answers import Judgement
from twinbench.rag.corpus import write_corpus
from twinbench.rag.labels import read_judgements
from twinbench.rag.records import Passage
from twinbench.rag.trec import read_qrels, read_run, write_qrels, write_run
from twinbench.rag.validate import load_cases

PROPERTY = settings(
    max_examples=120,
    derandomize=True,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)

scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**66), max_value=2**66),
    st.floats(),  # nan and ±inf too: written as NaN / Infinity, which a reader must refuse
    st.text(max_size=10),
)
values = st.recursive(
    scalars,
    lambda inner: st.one_of(
        st.lists(inner, max_size=3), st.dictionaries(st.text(max_size=5), inner, max_size=3)
    ),
    max_leaves=6,
)


def _lines(rows: list[dict[str, Any]]) -> str:
    # json, not orjson: it writes NaN and Infinity, as a hostile or careless writer would
    return "".join(json.dumps(row) + "\n" for row in rows)


def _broken(row: dict[str, Any], data: st.DataObject) -> dict[str, Any]:
    """`row` with one field (an existing one, mostly, or a new one) set to anything."""
    key = data.draw(st.one_of(st.sampled_from(sorted(row)), st.text(min_size=1, max_size=6)))
    broken = copy.deepcopy(row)
    broken[key] = data.draw(values)
    return broken


def _located(exc: InputError, path: Path, line: int) -> None:
    message = str(exc)
    assert message.startswith(f"{path}:{line}: "), message


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("corpus")
    passages = [
        Passage(passage_id="lab-note:p1", doc_id="lab-note", text=LAB, corpus_version=VERSION),
        Passage(
            passage_id="os-notes:p13",
            doc_id="os-notes",
            text="A deadlock is a state in which every process in a set is waiting for an "
            "event that only another process in the same set can cause.",
            corpus_version=VERSION,
        ),
    ]
    write_corpus(folder, passages, version=VERSION, cutting="one passage per page")
    return folder


@PROPERTY
@given(data=st.data())
def test_cases_round_trip_or_name_their_line(
    data: st.DataObject, tmp_path_factory: pytest.TempPathFactory, corpus: Path
) -> None:
    path = tmp_path_factory.mktemp("cases") / "cases.jsonl"
    rows = copy.deepcopy(GOOD)
    rows[1] = _broken(rows[1], data)
    path.write_text(_lines(rows), "utf-8")
    try:
        cases = load_cases(path, corpus)
    except InputError as exc:
        _located(exc, path, 2)
        return
    again = path.with_name("again.jsonl")
    again.write_bytes(b"".join(dumps_line(record_dict(case)) for case in cases))
    assert load_cases(again, corpus) == cases


@PROPERTY
@given(data=st.data())
def test_answers_round_trip_or_name_their_line(
    data: st.DataObject, tmp_path_factory: pytest.TempPathFactory
) -> None:
    path = tmp_path_factory.mktemp("answers") / "answers.jsonl"
    rows = [record_dict(answer) for answer in _answers()[:2]]
    rows[1] = _broken(rows[1], data)
    path.write_text(_lines(rows), "utf-8")
    try:
        answers = read_answers(path)
    except InputError as exc:
        _located(exc, path, 2)
        return
    again = path.with_name("again.jsonl")
    again.write_bytes(b"".join(dumps_line(record_dict(a)) for a in answers))
    assert read_answers(again) == answers


JUDGEMENTS = [
    Judgement(
        case_id="a2",
        variant="v",
        judge="j",
        status="ok",
        prompt=[{"role": "user", "content": "label the claims"}],
        labels=[{"claim": 1, "support_label": "supported", "evidence_ids": ["notes-17"]}],
        relevance=2,
        elapsed_ms=12.5,
    ),
    Judgement(
        case_id="a2",
        variant="v",
        trial=1,
        judge="j",
        status="judge_timeout",
        error="no reply in 30 s",
        prompt=[{"role": "user", "content": "label the claims"}],
    ),
]


@PROPERTY
@given(data=st.data())
def test_judgements_round_trip_or_name_their_line(
    data: st.DataObject, tmp_path_factory: pytest.TempPathFactory
) -> None:
    path = tmp_path_factory.mktemp("judgements") / "judgements.jsonl"
    rows = [record_dict(j) for j in JUDGEMENTS]
    rows[1] = _broken(rows[1], data)
    path.write_text(_lines(rows), "utf-8")
    try:
        judgements = read_judgements(path)
    except InputError as exc:
        _located(exc, path, 2)
        return
    again = path.with_name("again.jsonl")
    again.write_bytes(b"".join(dumps_line(record_dict(j)) for j in judgements))
    assert read_judgements(again) == judgements


tokens = st.one_of(
    st.sampled_from(["q1", "q2", "d1", "d2", "Q0", "0", "1", "3", "-1", "0.5", "t"]),
    st.sampled_from(["nan", "NaN", "inf", "-inf", "1e999", "1.5e3", "x", "٣"]),
    st.floats().map(repr),
    st.integers(-5, 5).map(str),
)


@PROPERTY
@given(line=st.lists(tokens, min_size=0, max_size=7))
def test_trec_runs_round_trip_or_name_their_line(
    line: list[str], tmp_path_factory: pytest.TempPathFactory
) -> None:
    path = tmp_path_factory.mktemp("runs") / "run.txt"
    path.write_text("q1 Q0 d9 1 2.5 t\n" + " ".join(line) + "\n", "utf-8")
    try:
        run = read_run(path)
    except InputError as exc:
        _located(exc, path, 2)
        return
    assert all(math.isfinite(score) for hits in run.values() for _, score in hits)
    again = path.with_name("again.txt")
    write_run(again, run, "t", score_format=".17g")
    assert read_run(again) == run


@PROPERTY
@given(line=st.lists(tokens, min_size=0, max_size=5))
def test_qrels_round_trip_or_name_their_line(
    line: list[str], tmp_path_factory: pytest.TempPathFactory
) -> None:
    path = tmp_path_factory.mktemp("qrels") / "qrels.txt"
    path.write_text("q1 0 d9 1\n" + " ".join(line) + "\n", "utf-8")
    try:
        qrels = read_qrels(path)
    except InputError as exc:
        _located(exc, path, 2)
        return
    again = path.with_name("again.txt")
    write_qrels(again, qrels)
    assert read_qrels(again) == qrels
