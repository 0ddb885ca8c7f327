"""Baselines, the spec parser, and the language router (real lingua detector)."""

from __future__ import annotations

import pytest

from twinbench.jsonl import InputError
from twinbench.records import ChoiceQuestion
from twinbench.systems import SystemOptions, available, make_system
from twinbench.systems.base import Request

QUESTION = ChoiceQuestion(instructions="Which team?", options=["billing", "sales", "support"])


def _req(item_id: str, state: str, trial: int = 0) -> Request:
    return Request(item_id=item_id, state=state, question=QUESTION, trial=trial)


def test_always_abstain_uses_one_fixed_code() -> None:
    requests = [_req("a", "s"), _req("b", "s")]
    default = make_system("always-abstain").respond(requests)
    assert [r.reason for r in default] == ["underspecified_state", "underspecified_state"]
    fixed = make_system("always-abstain:out_of_language").respond(requests)
    assert [r.reason for r in fixed] == ["out_of_language", "out_of_language"]
    assert all(r.abstain and r.answer is None for r in fixed)
    with pytest.raises(InputError, match="unknown code 'nope'"):
        make_system("always-abstain:nope")
    # the family is the label: no system may read it
    with pytest.raises(InputError, match="never see an item's family"):
        make_system("always-abstain:family")


def test_always_answer_random_is_seeded_by_what_a_request_shows() -> None:
    requests = [_req(f"i{n}", f"state {n}", trial=t) for n in range(20) for t in range(2)]
    first = [
        r.answer
        for r in make_system("always-answer:random", SystemOptions(seed=1)).respond(requests)
    ]
    again = [
        r.answer
        for r in make_system("always-answer:random", SystemOptions(seed=1)).respond(requests)
    ]
    other = [
        r.answer
        for r in make_system("always-answer:random", SystemOptions(seed=2)).respond(requests)
    ]
    assert first == again and first != other
    assert set(first) == {"billing", "sales", "support"}
    # the id is a per-run token: another id, the same draw; another trial, another draw
    renamed = [_req(f"token{n}", r.state, trial=r.trial) for n, r in enumerate(requests)]
    system = make_system("always-answer:random", SystemOptions(seed=1))
    assert [r.answer for r in system.respond(renamed)] == first
    assert first[0::2] != first[1::2]
    assert {r.answer for r in make_system("always-answer").respond(requests)} == {"billing"}


def test_unknown_specs_are_clear_errors() -> None:
    with pytest.raises(InputError, match="unknown system 'gpt9'"):
        make_system("gpt9")
    with pytest.raises(InputError, match="gate:SPEC@THRESHOLD"):
        make_system("gate:always-answer@2")
    with pytest.raises(InputError, match="needs --base-url"):
        make_system("openai")
    assert "smollm2" in available() and "router:LANG=SPEC+..." in available()


def test_router_sends_only_declared_languages_to_the_system() -> None:
    options = SystemOptions(benchmark_languages=("en", "es", "ru", "km"))
    router = make_system("router:en=always-answer", options)
    out = router.respond(
        [
            _req("en", "The customer was charged twice for the annual plan in March."),
            _req("es", "El cliente recibió dos cargos por el plan anual en marzo."),
            _req("ru", "Клиенту дважды списали оплату за годовой план в марте."),
            _req("km", "អតិថិជនត្រូវបានគិតប្រាក់ពីរដងសម្រាប់គម្រោងប្រចាំឆ្នាំ។"),
        ]
    )
    assert (out[0].abstain, out[0].answer) == (False, "billing")
    assert out[0].raw["detected"] == "en"
    for res in out[1:]:
        assert (res.abstain, res.reason) == (True, "out_of_language")
    assert out[1].raw["detected"] == "es" and out[2].raw["detected"] == "ru"
    assert router.card.languages == ("en",) and router.card.name.startswith("router(")
