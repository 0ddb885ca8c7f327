"""What a paired, permuted run shows each adapter: the item's explicit abstain option, always.

A paired build (answer removal: three options and "I abstain from answering" per item) is run
with `--permutations 3` against every HTTP adapter through the runner, and the bodies that
reach 127.0.0.1 are recorded: the openai adapter in both answer formats (scripted chat
servers), Laya and Jev (servers speaking their documented wire formats), and typed-decisions'
real server (through a recording relay). The local adapters' prompts (smollm2's chat prompt,
inspect's samples, lm-eval's docs) are rendered from the same requests. Choosing the option
is an abstention with contradictory_options everywhere.
"""

from __future__ import annotations

import json
import math
import re
import sys
from collections import Counter
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from typing import Any

import httpx
import pytest

from conftest import read_rows
from twinbench.builder import build_paired
from twinbench.generators.answer_removal import ABSTAIN_OPTION
from twinbench.records import ChoiceQuestion, Item
from twinbench.runner import RunPlan, load_benchmark, request_for, run
from twinbench.systems import SystemOptions, make_system
from twinbench.systems.base import Request
from twinbench.systems.decision_letters import LETTER_PROMPT
from twinbench.systems.local_model import CACHE_NAME, cache_dir, load_smollm2
from twinbench.systems.prompt import lettered

from .servers import (
    Hit,
    chat_reply,
    free_port,
    logprob_reply,
    send,
    serve,
    serve_raw,
    server_process,
    systemone_handler,
)

PERMUTATIONS = 3


@pytest.fixture(scope="module")
def paired(tmp_path_factory: pytest.TempPathFactory) -> list[Item]:
    folder = tmp_path_factory.mktemp("paired")
    build_paired(folder, per_generator=5)
    return load_benchmark(folder)


def _requests(items: list[Item]) -> list[Request]:
    """Every request of the plan, as the runner builds them (the item id for the opaque one)."""
    return [request_for(i, 0, k, i.id) for i in items for k in range(PERMUTATIONS)]


def _option_orders(items: list[Item]) -> Counter[tuple[str, ...]]:
    """How often each option order is sent (each item's three permutations)."""
    orders = Counter[tuple[str, ...]]()
    for request in _requests(items):
        assert isinstance(request.question, ChoiceQuestion)
        orders[tuple(request.question.options)] += 1
    return orders


def _run(spec: str, options: SystemOptions, items: list[Item], out: Path) -> list[dict[str, Any]]:
    system = make_system(spec, options)
    run(system, RunPlan(items, permutations=PERMUTATIONS), out)
    rows = read_rows(out / "responses.jsonl")
    assert len(rows) == len(items) * PERMUTATIONS == 30
    return rows


def _answers(user: str) -> list[str]:
    """The json format's answer lines of a user message."""
    return re.findall(r"^- (.*)$", user, flags=re.M)


def test_openai_json_lists_the_abstain_option_as_an_answer(
    paired: list[Item], tmp_path: Path
) -> None:
    def handle(path: str, body: Any) -> tuple[int, Any]:
        decision = {"abstain": False, "reason": None, "answer": ABSTAIN_OPTION}
        return 200, chat_reply(json.dumps(decision))

    with serve(handle) as (url, log):
        rows = _run("openai", SystemOptions(base_url=url), paired, tmp_path / "json")
    assert len(log) == 30
    orders = Counter[tuple[str, ...]]()
    for _, body in log:
        answers = _answers(body["messages"][1]["content"])
        assert answers[-1] == ABSTAIN_OPTION and len(answers) == 4
        orders[tuple(answers[:-1])] += 1
        schema = body["response_format"]["json_schema"]["schema"]
        assert schema["properties"]["answer"]["enum"] == [*answers, None]
    assert orders == _option_orders(paired)  # every permutation, as the runner made it
    assert {(r["abstain"], r["reason"]) for r in rows} == {(True, "contradictory_options")}


def test_openai_letters_show_the_abstain_option_as_a_letter(
    paired: list[Item], tmp_path: Path
) -> None:
    """The lettered prompt smollm2 sees; the server picks the abstain option's letter with
    probability 0.6 (A 0.3), so each abstention has confidence 0.6."""

    def handle(path: str, body: Any) -> tuple[int, Any]:
        user = body["messages"][1]["content"]
        (letter,) = re.findall(rf"^([A-Z])\. {ABSTAIN_OPTION}$", user, flags=re.M)
        top = [(letter, math.log(0.6)), ("A", math.log(0.3))]
        tokens: list[Any] = [
            ('{"letter": "', 0.0, []),
            (letter, math.log(0.6), top),
            ('"}', 0.0, []),
        ]
        return 200, logprob_reply(json.dumps({"letter": letter}), tokens)

    with serve(handle) as (url, log):
        options = SystemOptions(base_url=url, logprobs=True)  # letters: the default here
        rows = _run("openai", options, paired, tmp_path / "letters")
    orders = Counter[tuple[str, ...]]()
    for _, body in log:
        system, user = (m["content"] for m in body["messages"])
        assert system == LETTER_PROMPT
        lines = re.findall(r"^([A-Z])\. (.*)$", user, flags=re.M)
        assert [letter for letter, _ in lines] == ["A", "B", "C", "D", "X", "Y", "Z"]
        assert lines[3][1] == ABSTAIN_OPTION
        orders[tuple(text for _, text in lines[:3])] += 1
        enum = body["response_format"]["json_schema"]["schema"]["properties"]["letter"]["enum"]
        assert enum == ["A", "B", "C", "D", "X", "Y", "Z"]
    assert orders == _option_orders(paired)
    assert {(r["abstain"], r["reason"], r["confidence"]) for r in rows} == {
        (True, "contradictory_options", 0.6)
    }


@pytest.mark.parametrize("spec", ["laya", "jev"])
def test_systemone_sends_the_abstain_option_as_the_last_criterion(
    spec: str, paired: list[Item], tmp_path: Path
) -> None:
    with serve(systemone_handler(jev=spec == "jev")) as (url, log):
        _run(spec, SystemOptions(base_url=url), paired, tmp_path / spec)
    orders = Counter[tuple[str, ...]]()
    for _, body in log:
        criteria = body["questions"]["q"]["criteria"]
        assert criteria[-1] == ABSTAIN_OPTION and len(criteria) == 4
        orders[tuple(criteria[:-1])] += len(body.get("states", [body.get("state")]))
    assert orders == _option_orders(paired)


@pytest.fixture(scope="module")
def td_relay() -> Iterator[tuple[str, list[Hit]]]:
    """typed-decisions' real server on the embedded SmolLM2, behind a relay on 127.0.0.1 that
    records each body and hands it on unchanged."""
    load_smollm2()  # makes sure the converted weights are in the cache
    port = free_port()
    upstream = f"http://127.0.0.1:{port}"
    args = [
        sys.executable,
        "-m",
        "typed_decisions.server",
        "--model",
        str(cache_dir() / CACHE_NAME),
        "--device",
        "cpu",
        "--port",
        str(port),
    ]

    def relay(handler: BaseHTTPRequestHandler, hit: Hit) -> None:
        reply = httpx.post(upstream + hit.path, json=hit.body, timeout=120)
        send(handler, reply.status_code, reply.content)

    with server_process(args, f"{upstream}/v1/stats", seconds=240), serve_raw(relay) as relayed:
        yield relayed


def test_typed_decisions_sends_the_abstain_option_as_the_last_criterion(
    paired: list[Item], td_relay: tuple[str, list[Hit]], tmp_path: Path
) -> None:
    url, hits = td_relay
    options = SystemOptions(base_url=url, timeout_s=120)
    rows = _run("typed-decisions", options, paired, tmp_path / "td")
    assert all(r["status"] == "ok" for r in rows)
    orders = Counter[tuple[str, ...]]()
    for hit in hits:
        criteria = hit.body["questions"]["q"]["criteria"]
        assert criteria[-1] == ABSTAIN_OPTION and len(criteria) == 4
        orders[tuple(criteria[:-1])] += 1
    assert orders == _option_orders(paired)
    # whatever the model picks, the abstain option is an abstention and nothing else is
    for row in rows:
        chose_it = (row["raw"] or {}).get("choice") == ABSTAIN_OPTION
        assert row["abstain"] is chose_it
        assert row.get("reason") == ("contradictory_options" if chose_it else None)


def test_local_adapters_show_the_abstain_option_as_a_letter(paired: list[Item]) -> None:
    """smollm2's chat prompt for every permuted request, inspect's samples and lm-eval's docs
    (which send the stored order) all letter the abstain option D."""
    from twinbench.grader import expected_table
    from twinbench.integrations.inspect import make_sample
    from twinbench.integrations.lm_eval_task import item_doc
    from twinbench.systems.smollm2 import chat_prompt

    _, tokenizer = load_smollm2()
    for request in _requests(paired):
        prompt = chat_prompt(tokenizer, request, lettered(request.question))
        assert f"\nD. {ABSTAIN_OPTION}\nX. " in prompt
    table = expected_table(paired, ("en",))
    for item in paired:
        sample = make_sample(item, table)
        assert f"\nD. {ABSTAIN_OPTION}\n" in str(sample.input)
        assert sample.metadata["abstain"]["D"] == "contradictory_options"
        assert f"\nD. {ABSTAIN_OPTION}\n" in item_doc(item)["text"]
