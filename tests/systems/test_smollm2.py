"""The embedded SmolLM2 really runs: one forward pass per item, typed decisions from logits."""

from __future__ import annotations

import math
from pathlib import Path

import pytest
import torch

from twinbench.builder import build
from twinbench.records import ChoiceQuestion, Item
from twinbench.runner import request_for
from twinbench.systems.base import Request
from twinbench.systems.local_model import CACHE_NAME, _convert, load_smollm2
from twinbench.systems.prompt import lettered
from twinbench.systems.smollm2 import SmolLM2System, chat_prompt


@pytest.fixture(scope="module")
def slice_items(tmp_path_factory: pytest.TempPathFactory) -> list[Item]:
    """One pair per generator and question type of a small build (all three types)."""
    result = build(tmp_path_factory.mktemp("bench"), per_generator=10)
    chosen: dict[tuple[str, str], list[Item]] = {}
    for name, pairs in result.pairs.items():
        for pair in pairs:
            chosen.setdefault((name, pair.item.question.type), [pair.item, pair.twin])
    return [item for pair in chosen.values() for item in pair]


@pytest.fixture(scope="module")
def system() -> SmolLM2System:
    return SmolLM2System(batch_size=8)


def test_real_model_decides_every_item(system: SmolLM2System, slice_items: list[Item]) -> None:
    out = system.respond([request_for(i, 0, 0, i.id) for i in slice_items])
    ok = [r for r in out if r.status == "ok"]
    assert len(ok) / len(out) >= 0.99
    assert {i.question.type for i in slice_items} == {"choice", "score", "noul"}
    for res, item in zip(out, slice_items, strict=True):
        assert res.item_id == item.id
        assert res.probabilities is not None
        assert math.isclose(sum(res.probabilities.values()), 1.0, abs_tol=1e-4)
        assert res.confidence == max(res.probabilities.values())
        if res.abstain:
            assert res.reason is not None and res.answer is None
        elif isinstance(item.question, ChoiceQuestion):
            assert res.answer in item.question.options
        assert res.raw in "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
    again = system.respond([request_for(i, 0, 0, i.id) for i in slice_items])
    strip = {"latency_ms"}
    assert [r.model_dump(exclude=strip) for r in again] == [
        r.model_dump(exclude=strip) for r in out
    ]


def test_cached_prefix_batch_equals_full_prompt_forward(
    system: SmolLM2System, slice_items: list[Item]
) -> None:
    model, tokenizer = load_smollm2()
    requests = [request_for(i, 0, 0, i.id) for i in slice_items[::7]]  # mixed lengths in one batch
    _, _, after = system._prefix_cache(model, tokenizer)
    from twinbench.systems.prompt import user_message

    suffixes, letters, full = [], [], []
    for req in requests:
        choices = lettered(req.question)
        text = user_message(req.state, req.question, choices) + after
        suffixes.append(tokenizer.encode(text, add_special_tokens=False))
        letters.append([c.letter for c in choices])
        ids = torch.tensor(
            [tokenizer.encode(chat_prompt(tokenizer, req, choices), add_special_tokens=False)]
        )
        with torch.inference_mode():
            logits = model(input_ids=ids).logits[0, -1]
        full.append(
            [float(torch.logsumexp(logits[system._ids(tokenizer, c.letter)], 0)) for c in choices]
        )
    batched = system.letter_logits(suffixes, letters)
    for one, many in zip(full, batched, strict=True):
        assert max(abs(a - b) for a, b in zip(one, many, strict=True)) < 1e-3


def test_too_many_options_is_a_rejection(system: SmolLM2System) -> None:
    question = ChoiceQuestion(instructions="Pick one", options=[f"opt {i}" for i in range(30)])
    out = system.respond([Request(item_id="x", state="A state.", question=question)])
    assert (out[0].status, out[0].abstain) == ("rejected", None)
    assert "more than 23 options" in (out[0].error or "")


def test_mixed_precision_redoes_close_calls_in_fp32(slice_items: list[Item]) -> None:
    from twinbench.systems.local_model import bf16_native
    from twinbench.systems.smollm2 import CHECK_MARGIN, _margin

    if not bf16_native():
        pytest.skip("this CPU has no native bfloat16: mixed runs fp32 only")
    requests = [request_for(i, 0, 0, i.id) for i in slice_items]
    fp32 = SmolLM2System(precision="fp32").respond(requests)
    bf16 = SmolLM2System(precision="bf16").respond(requests)
    mixed_system = SmolLM2System(precision="mixed")
    mixed = mixed_system.respond(requests)
    assert "close calls" in (mixed_system.card.version or "")
    redone = 0
    for exact, fast, both in zip(fp32, bf16, mixed, strict=True):
        assert fast.probabilities is not None
        logits = [math.log(p) for p in fast.probabilities.values() if p > 0]
        margin = _margin(logits)  # from probabilities rounded to 6 places: near, not exact
        close = margin < CHECK_MARGIN
        redone += close
        if abs(margin - CHECK_MARGIN) < 1e-3:
            continue
        # a close call carries fp32's decision and probabilities; any other, bf16's (fp32
        # redone in a batch of close calls only pads differently: equal to 1e-5, not bytes)
        source = exact if close else fast
        assert (both.abstain, both.reason) == (source.abstain, source.reason)
        assert both.answer == (
            pytest.approx(source.answer, abs=1e-5)
            if isinstance(source.answer, float)
            else source.answer
        )
        assert both.probabilities == pytest.approx(source.probabilities, abs=1e-5)
    assert mixed_system.checked["bf16"] == len(requests)
    assert abs(mixed_system.checked["fp32"] - redone) <= 1
    # bf16 is not fp32: its probabilities differ on at least one item
    assert any(a.probabilities != b.probabilities for a, b in zip(fp32, bf16, strict=True))


def test_unknown_precision_is_a_clear_error() -> None:
    from twinbench.jsonl import InputError
    from twinbench.systems import SystemOptions, make_system

    with pytest.raises(InputError, match="smollm2:fp16: expected one of fp32, bf16, mixed"):
        make_system("smollm2:fp16", SystemOptions())
    assert "fp32" in (make_system("smollm2:fp32", SystemOptions()).card.version or "")


def test_a_conversion_that_loses_the_race_keeps_the_winners_copy(tmp_path: Path) -> None:
    """Two first uses at once (two commands on a fresh machine): the second to finish finds
    the cache already there, keeps it and leaves no staging folder behind."""
    target = tmp_path / CACHE_NAME
    target.mkdir()
    (target / "config.json").write_text('{"winner": true}')
    _convert(target)
    assert (target / "config.json").read_text() == '{"winner": true}'
    assert sorted(p.name for p in tmp_path.iterdir()) == [CACHE_NAME]
