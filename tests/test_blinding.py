"""Nothing a system receives names the label: opaque ids, a blind order, files unchanged."""

from __future__ import annotations

import dataclasses
import json
import math
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from conftest import read_rows
from twinbench import api
from twinbench.builder import build
from twinbench.generators.registry import registered
from twinbench.jsonl import InputError, write_jsonl
from twinbench.merging import merge
from twinbench.records import Item, ReasonCode, Response
from twinbench.runner import RunPlan, load_benchmark, request_for, run
from twinbench.systems import SystemOptions, make_system
from twinbench.systems.base import Request, SystemCard, response
from twinbench.systems.prompt import answer_choices

#: everything a Request holds; a new field must be added here, after checking it names no label
REQUEST_FIELDS = {"item_id", "state", "question", "trial", "permutation", "extra"}
FAMILY_OF = {cls.name: cls.family.value for cls in registered()}


class Snoop:
    """Reads every field of every request and guesses the label from all but the text.

    Unanswerable when the id ends in `:u`; else when the request arrived at an even position
    (items.jsonl lists each item just before its twin). The reason code is the family of the
    generator the id names, else `underspecified_state`; a twin gets the first answer. `raw`
    keeps every field it was given and where the request arrived, for the test to read back.
    """

    card = SystemCard(name="snoop", languages=("en",))

    def __init__(self) -> None:
        self.arrived = 0

    def respond(self, requests: Sequence[Request]) -> list[Response]:
        out = []
        for slot, request in enumerate(requests):
            fields = {f.name: getattr(request, f.name) for f in dataclasses.fields(request)}
            seen = {k: v for k, v in fields.items() if k not in ("state", "question")}
            seen |= {"fields": sorted(fields), "arrived": self.arrived, "slot": slot}
            item_id = request.item_id
            suffix = re.search(r":([ut])$", item_id)
            guess = suffix.group(1) == "u" if suffix else self.arrived % 2 == 0
            self.arrived += 1
            code = FAMILY_OF.get(item_id.split(":")[0], ReasonCode.UNDERSPECIFIED_STATE)
            if guess:
                out.append(response(request, "snoop", abstain=True, reason=code, raw=seen))
                continue
            answer = answer_choices(request.question)[0].answer
            value = (1.0 if answer else 0.0) if isinstance(answer, bool) else answer
            out.append(response(request, "snoop", abstain=False, answer=value, raw=seen))
        return out


@pytest.fixture(scope="module")
def bench(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("blind") / "bench"
    build(folder, per_generator=80)  # 240 pairs, 80 per family
    return folder


def _within(count: int, n: int, p: float = 0.5) -> bool:
    """Whether `count` of `n` is no more than 4 binomial standard deviations above n·p
    (one-sided p ≈ 3e-5: a pseudo-random order or token passes it all but never)."""
    return count <= n * p + 4 * math.sqrt(n * p * (1 - p))


def test_a_system_reading_every_request_field_is_at_chance_on_ideal_pairs(
    bench: Path, tmp_path: Path
) -> None:
    items = load_benchmark(bench)
    by_id = {item.id: item for item in items}
    pairs = {item.pair_id for item in items}
    names = {item.generator.name for item in items}

    # the control: shown the items' ids in items.jsonl's order, Snoop reads every label
    leaky = Snoop().respond([request_for(item, 0, 0, item.id) for item in items])
    write_jsonl(tmp_path / "leaky.jsonl", leaky)
    control = api.grade(bench, tmp_path / "leaky.jsonl")
    ceiling = control.overall
    assert ceiling.abstention_recall == ceiling.abstention_precision == 1.0
    # ideal: every pair whose twin's first answer is right
    assert ceiling.ideal_pairs["ideal"] == ceiling.twin_accuracy * 240 >= 60

    api.run(Snoop(), bench, tmp_path / "run")
    rows = read_rows(tmp_path / "run" / "responses.jsonl")
    assert sorted(r["item_id"] for r in rows) == sorted(by_id)  # the runner restored the ids
    seen = {r["item_id"]: r["raw"] for r in rows}

    # every field it was given, but for the shown text: no id, pair, generator or suffix
    for item_id, fields in seen.items():
        assert fields.pop("fields") == sorted(REQUEST_FIELDS)
        token = fields["item_id"]
        assert re.fullmatch("[0-9a-f]{16}", token), token
        assert fields["extra"] == {} and fields["trial"] == fields["permutation"] == 0
        text = json.dumps(fields)
        assert not any(name in text for name in [item_id, *pairs, *names, ":u", ":t"])
    assert len({f["item_id"] for f in seen.values()}) == len(items)

    # the order: which member of a pair came first, and whose token sorts first, are coins
    twins = [(item, by_id[item.twin_id]) for item in items if item.twin_id and not item.answerable]
    assert len(twins) == 240
    first = sum(seen[u.id]["arrived"] < seen[t.id]["arrived"] for u, t in twins)
    lower = sum(seen[u.id]["item_id"] < seen[t.id]["item_id"] for u, t in twins)
    for count in (first, lower, len(twins) - first, len(twins) - lower):
        assert _within(count, len(twins)), (first, lower)
    even = sum((seen[i.id]["arrived"] % 2 == 0) != i.answerable for i in items)
    assert _within(even, len(items)) and _within(len(items) - even, len(items))

    # ideal pairs: blind, its abstentions carry `underspecified_state`, so only the pairs of
    # that family whose twin's first answer is right (the control's ideal pairs there) can be
    # ideal, each when the item arrived at an even position and its twin at an odd one:
    # probability 1/4 in a pseudo-random order
    graded = api.grade(bench, tmp_path / "run")
    ideal = graded.overall.ideal_pairs["ideal"]
    possible = control.family(ReasonCode.UNDERSPECIFIED_STATE).ideal_pairs["ideal"]
    assert possible >= 16
    assert _within(ideal, possible, 0.25), (ideal, possible)
    assert ideal < ceiling.ideal_pairs["ideal"] / 2
    assert graded.overall.abstention_recall is not None
    assert _within(round(graded.overall.abstention_recall * 240), 240)


def _baseline_run(bench: Path, out: Path, shard: tuple[int, int] | None = None) -> bytes:
    system = make_system("always-answer:random", SystemOptions(seed=3))
    items = load_benchmark(bench)
    run(system, RunPlan(items, trials=2, permutations=2, shard=shard), out, seed=3)
    return (out / "responses.jsonl").read_bytes()


class _StopsAfter:
    """The random baseline, interrupted (as by Ctrl-C) when asked its third batch."""

    def __init__(self) -> None:
        self.inner = make_system("always-answer:random", SystemOptions(seed=3))
        self.card, self.calls = self.inner.card, 0

    def respond(self, requests: Sequence[Request]) -> list[Response]:
        self.calls += 1
        if self.calls == 3:
            raise KeyboardInterrupt
        return self.inner.respond(requests)


def test_files_do_not_depend_on_the_tokens_resumed_sharded_or_merged(
    bench: Path, tmp_path: Path
) -> None:
    """Each run draws another key, yet the same plan writes the same bytes: once, again,
    resumed after an interrupt, and as three shards merged."""
    once = _baseline_run(bench, tmp_path / "once")
    assert _baseline_run(bench, tmp_path / "again") == once
    assert len(once.splitlines()) == 4 * 480

    items = load_benchmark(bench)
    with pytest.raises(KeyboardInterrupt):
        run(_StopsAfter(), RunPlan(items, trials=2, permutations=2), tmp_path / "resumed", seed=3)
    assert len((tmp_path / "resumed" / "responses.jsonl").read_bytes().splitlines()) == 32
    assert _baseline_run(bench, tmp_path / "resumed") == once

    shards = [tmp_path / f"shard{k}" for k in range(3)]
    for k, folder in enumerate(shards):
        _baseline_run(bench, folder, (k, 3))
    merge(shards[::-1], tmp_path / "merged", bench)
    assert (tmp_path / "merged" / "responses.jsonl").read_bytes() == once


def test_a_response_for_an_id_never_sent_is_refused(bench: Path, tmp_path: Path) -> None:
    items = load_benchmark(bench, 4)

    class Guesser:
        card = SystemCard(name="guesser", languages=("en",))

        def respond(self, requests: Sequence[Request]) -> list[Response]:
            return [Response(item_id=items[0].id, system="guesser", status="ok", abstain=True)]

    with pytest.raises(InputError, match=r"system guesser: a response for '.+:u', which is not"):
        run(Guesser(), RunPlan(items), tmp_path / "run")


def _assert_blind(body: Any, items: Sequence[Item]) -> None:
    text = json.dumps(body, ensure_ascii=False)
    named = {n for i in items for n in (i.id, i.pair_id, i.generator.name, ":u", ":t")}
    shown = " ".join(i.state + i.question.model_dump_json() for i in items)
    assert {":u", ":t"} <= named - {n for n in named if n in shown}  # the check means something
    leaked = sorted(n for n in named if n in text and n not in shown)
    assert not leaked, leaked


@pytest.mark.parametrize("spec", ["openai", "laya", "jev"])
def test_nothing_sent_on_the_wire_names_an_item(spec: str, tmp_path: Path) -> None:
    from systems.servers import chat_reply, serve, systemone_handler

    build(tmp_path / "bench", per_generator=4)
    items = load_benchmark(tmp_path / "bench")
    if spec == "openai":
        decision = {"abstain": True, "reason": "underspecified_state", "answer": None}

        def handle(path: str, body: Any) -> tuple[int, Any]:
            return 200, chat_reply(json.dumps(decision))
    else:
        handle = systemone_handler(jev=spec == "jev")
    with serve(handle) as (url, log):
        system = make_system(spec, SystemOptions(base_url=url, concurrency=2))
        run(system, RunPlan(items, permutations=2), tmp_path / "run")
    assert log and len(log) <= 2 * len(items)
    for path, body in log:
        _assert_blind([path, body], items)
    rows = read_rows(tmp_path / "run" / "responses.jsonl")
    assert {r["status"] for r in rows} == {"ok"}
    assert sorted(r["item_id"] for r in rows) == sorted(2 * [i.id for i in items])
