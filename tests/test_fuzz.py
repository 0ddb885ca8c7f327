"""Property tests (hypothesis, derandomized: the same examples on every run) for the readers.

Whatever bytes or objects arrive, the JSONL reader, the response rule (grade and validate) and
the resume reader either accept them or raise InputError with `FILE:LINE:`; nothing else
escapes. Accepted rows are exactly the ones the Response model accepts.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import orjson
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from conftest import EXAMPLES, read_rows
from twinbench.grader import expected_table, grade_rows
from twinbench.jsonl import InputError, duplicate_key, iter_json_lines
from twinbench.records import Item, Response, plainly_valid_response
from twinbench.runner import read_done
from twinbench.validate import response_problems

FUZZ = settings(
    max_examples=150,
    derandomize=True,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
ITEMS = [Item.model_validate(row) for row in read_rows(EXAMPLES / "items.jsonl")]
TABLE = expected_table(ITEMS)
IDS = [item.id for item in ITEMS]

scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**70), max_value=2**70),
    st.floats(allow_nan=False, allow_infinity=False),
    st.text(max_size=12),
)
json_values = st.recursive(
    scalars,
    lambda inner: st.one_of(
        st.lists(inner, max_size=3), st.dictionaries(st.text(max_size=6), inner, max_size=3)
    ),
    max_leaves=8,
)
# each field: mostly plausible values, sometimes anything
FIELDS: dict[str, st.SearchStrategy[Any]] = {
    "schema": st.sampled_from(["twinbench.response/1", "twinbench.response/2"]),
    "item_id": st.one_of(st.sampled_from(IDS), json_values),
    "system": st.one_of(st.just("s"), json_values),
    "trial": st.one_of(st.integers(-1, 3), json_values),
    "permutation": st.one_of(st.integers(-1, 3), json_values),
    "status": st.one_of(st.sampled_from(["ok", "invalid", "rejected", "error"]), json_values),
    "abstain": st.one_of(st.booleans(), json_values),
    "reason": st.one_of(
        st.sampled_from(["underspecified_state", "contradictory_options", "out_of_language"]),
        json_values,
    ),
    "answer": st.one_of(st.sampled_from(["billing", "Billing", 2, 0.7, 1.5]), json_values),
    "confidence": st.one_of(st.floats(-1, 2), json_values),
    "latency_ms": st.one_of(st.floats(-1, 10), json_values),
    "error": st.one_of(st.text(max_size=8), json_values),
    "extra_field": json_values,
}
anything = st.fixed_dictionaries(
    {"item_id": FIELDS["item_id"], "status": FIELDS["status"]},
    optional={k: v for k, v in FIELDS.items() if k not in ("item_id", "status")},
)
valid = st.fixed_dictionaries(
    {"item_id": st.sampled_from(IDS), "system": st.just("s")},
    optional={
        "trial": st.integers(0, 3),
        "permutation": st.integers(0, 3),
        "confidence": st.floats(0, 1),
        "latency_ms": st.floats(0, 1e4),
    },
).flatmap(
    lambda base: st.one_of(
        st.just(base | {"status": "ok", "abstain": True, "reason": "out_of_language"}),
        st.builds(
            lambda answer: base | {"status": "ok", "abstain": False, "answer": answer},
            st.sampled_from(["billing", "Billing", 2, 3, 0.3, 0.7]),
        ),
        st.just(base | {"status": "error", "error": "boom"}),
    )
)
# a valid row with one field set to something else (or removed)
mutated = st.builds(
    lambda row, key, value, drop: (
        {k: v for k, v in row.items() if k != key} if drop else row | {key: value}
    ),
    valid,
    st.sampled_from(sorted(FIELDS)),
    json_values,
    st.booleans(),
)
rows = st.one_of(valid, mutated, anything)


def _write(path: Path, objects: list[Any]) -> Path:
    path.write_text("".join(json.dumps(o) + "\n" for o in objects), encoding="utf-8")
    return path


@FUZZ
@given(st.lists(rows, min_size=1, max_size=6))
def test_the_grader_accepts_exactly_valid_rows(objects: list[dict[str, Any]]) -> None:
    source = "responses.jsonl"
    stream = [(source, n, obj) for n, obj in enumerate(objects, start=1)]
    try:
        graded = grade_rows(stream, TABLE)
    except InputError as exc:
        assert str(exc).startswith(f"{source}:")
        line = int(str(exc).split(":")[1])
        assert 1 <= line <= len(objects)
        return
    assert len(graded) == len(objects)
    for obj in objects:  # every accepted row is a Response under the model, for a known item
        response = Response.model_validate(obj)
        assert response.item_id in TABLE.index


@settings(FUZZ, max_examples=600)
@given(rows)
def test_the_fast_path_never_accepts_what_the_model_refuses(obj: dict[str, Any]) -> None:
    if plainly_valid_response(obj):
        Response.model_validate(obj)  # raises if the hand-written check let a bad row through


@FUZZ
@given(st.lists(rows, min_size=1, max_size=6))
def test_validate_reports_the_same_rows_the_grader_refuses(
    tmp_path: Path, objects: list[dict[str, Any]]
) -> None:
    path = _write(tmp_path / "r.jsonl", objects)
    problems = response_problems(path, ITEMS)
    stream = [(str(path), n, obj) for n, obj in enumerate(objects, start=1)]
    try:
        grade_rows(stream, TABLE)
    except InputError as exc:
        assert problems and problems[0] == str(exc)
    else:
        assert problems == []


@FUZZ
@given(st.lists(st.binary(max_size=40), min_size=1, max_size=5))
def test_the_jsonl_reader_yields_objects_or_one_located_error(
    tmp_path: Path, lines: list[bytes]
) -> None:
    path = tmp_path / "x.jsonl"
    path.write_bytes(b"\n".join(line.replace(b"\n", b" ") for line in lines))
    try:
        out = list(iter_json_lines(path))
    except InputError as exc:
        assert str(exc).startswith(str(path))
        return
    assert all(isinstance(obj, dict) for _, obj in out)


@FUZZ
@given(
    st.dictionaries(st.text(min_size=1, max_size=5), json_values, min_size=1, max_size=5),
    st.booleans(),
    st.sampled_from([":", " :", ": "]),
)
def test_duplicate_keys_are_found_exactly(obj: dict[str, Any], repeat: bool, colon: str) -> None:
    text = json.dumps(obj, separators=(",", colon))
    if repeat:  # the first key again, with another value, at the end
        key = json.dumps(next(iter(obj)))
        text = text[:-1] + f",{key}{colon}0" + "}"
    line = text.encode()
    found = duplicate_key(line, orjson.loads(line))
    assert (found is not None) == repeat


@FUZZ
@given(st.lists(st.one_of(rows, json_values), min_size=1, max_size=5), st.integers(0, 30))
def test_the_resume_reader_accepts_responses_or_stops_at_a_line(
    tmp_path: Path, objects: list[Any], torn: int
) -> None:
    path = _write(tmp_path / "responses.jsonl", objects)
    data = path.read_bytes()
    path.write_bytes(data + data[:torn])  # a torn copy of the start, as after a kill
    try:
        done, counts = read_done(path)
    except InputError as exc:
        assert str(exc).startswith(f"{path}:")
        return
    assert path.read_bytes().endswith(b"\n") or path.read_bytes() == b""
    assert sum(counts.values()) == len(done)


@pytest.mark.parametrize("count", [1, 3])
def test_fuzz_strategies_reach_both_outcomes(count: int) -> None:
    """The strategies are not trivially all-valid or all-invalid: a hand-made valid row
    passes (on the fast path), and the same row with a coerced type does not."""
    valid = {"item_id": "tw-001", "system": "s", "status": "ok", "abstain": False, "answer": "x"}
    assert plainly_valid_response(valid)
    assert len(grade_rows([("f", 1, valid)] * 1, TABLE)) == 1
    with pytest.raises(InputError, match="f:1: trial"):
        grade_rows([("f", 1, valid | {"trial": str(count)})], TABLE)
