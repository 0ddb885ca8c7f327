"""The OpenAI-compatible adapter: a real llama.cpp server, and scripted failure modes."""

from __future__ import annotations

import json
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from twinbench.records import ChoiceQuestion, NoulQuestion
from twinbench.systems import SystemOptions, make_system
from twinbench.systems.base import Request
from twinbench.systems.local_model import gguf_path

from .servers import ServerProcess, chat_reply, free_port, logprob_reply, serve, server_process

TICKET = Request(
    item_id="t1",
    state="The March invoice charged the annual plan twice.",
    question=ChoiceQuestion(
        instructions="Which team should handle this ticket?",
        options=["billing", "technical support", "sales"],
    ),
)
REFUND = Request(
    item_id="t2",
    state="The customer bought the lamp 9 days ago.",
    question=NoulQuestion(instructions="Is a refund due under a 30-day policy?"),
)


@pytest.fixture(scope="module")
def llama_server() -> Iterator[ServerProcess]:
    """llama-cpp-python's OpenAI-compatible server with the shipped SmolLM2 GGUF (a build
    that crashes on its first generation fails the test with its exit code and log)."""
    port = free_port()
    url = f"http://127.0.0.1:{port}/v1"
    args = [
        sys.executable,
        "-m",
        "llama_cpp.server",
        "--model",
        str(gguf_path()),
        "--host",
        "127.0.0.1",
        "--port",
        str(port),
        "--n_threads",
        "2",
        "--n_ctx",
        "2048",
    ]
    with server_process(args, f"{url}/models", url=url) as server:
        yield server


def test_real_llama_cpp_server_gives_schema_valid_decisions(llama_server: ServerProcess) -> None:
    options = SystemOptions(base_url=llama_server.url, timeout_s=300)
    system = make_system("openai:smollm2", options)
    out = system.respond([TICKET, REFUND])
    llama_server.check()
    for res in out:
        # the server constrains output to the schema, so every reply parses into a decision
        assert res.status == "ok", res
        if res.abstain:
            assert res.reason in (
                "underspecified_state",
                "contradictory_options",
                "out_of_language",
            )
        else:
            assert res.answer is not None
    assert out[0].abstain or out[0].answer in TICKET.question.options  # type: ignore[union-attr]
    assert system.llama_cpp_format  # it fell back to {"type": "json_object", "schema": ...}
    assert out[0].usage["prompt_tokens"] > 0


@pytest.mark.parametrize("answer_format", ["letters", "json"])
def test_real_llama_cpp_server_logprobs_give_confidences(
    llama_server: ServerProcess, answer_format: str
) -> None:
    """llama.cpp returns `logprobs.content[].top_logprobs` under grammar-constrained output
    (taken before the grammar, so mass on forbidden tokens is no decision's): every decision
    gets a confidence, the probability recorded for it, and probabilities over the side it
    took that sum to at most 1."""
    options = SystemOptions(
        base_url=llama_server.url,
        timeout_s=300,
        logprobs=True,
        answer_format=answer_format,  # type: ignore[arg-type]
    )
    system = make_system("openai:smollm2", options)
    out = system.respond([TICKET, REFUND])
    llama_server.check()
    assert system.card.confidences and f"answer format {answer_format}" in system.card.version
    for res in out:
        assert res.status == "ok", res
        assert res.confidence is not None and 0.0 < res.confidence <= 1.0, res
        probabilities = res.probabilities or {}
        assert all(0.0 <= p <= 1.0 for p in probabilities.values())
        assert 0.0 < sum(probabilities.values()) <= 1.0 + 1e-6
        if res.abstain:
            key = f"abstain:{res.reason}"
        elif res.answer in (0.0, 1.0) and not isinstance(res.answer, str):
            key = "yes" if res.answer == 1.0 else "no"
        else:
            key = str(res.answer)
        assert probabilities[key] == res.confidence


def _scripted(script: dict[str, Any]) -> Any:
    calls: dict[str, int] = {}

    def handle(path: str, body: Any) -> tuple[int, Any]:
        text = body["messages"][1]["content"]
        key = next(k for k in script if k in text)
        calls[key] = calls.get(key, 0) + 1
        return script[key](calls[key])

    return handle


def test_garbage_timeout_and_400_are_statuses_never_abstentions() -> None:
    script = {
        "garbage": lambda n: (200, chat_reply("I think it is billing, probably!")),
        "offschema": lambda n: (200, chat_reply('{"abstain": false, "answer": "legal"}')),
        "slow": lambda n: (time.sleep(1.5), (200, chat_reply("{}")))[1],
        "toolong": lambda n: (400, {"error": {"message": "too many choices"}}),
        "flaky": lambda n: (
            (500, {"error": "boom"})
            if n == 1
            else (
                200,
                chat_reply('{"abstain": true, "reason": "underspecified_state", "answer": null}'),
            )
        ),
    }
    requests = [Request(item_id=k, state=k, question=TICKET.question) for k in script]
    with serve(_scripted(script)) as (url, log):
        options = SystemOptions(base_url=url, timeout_s=0.5, retries=2)
        out = {r.item_id: r for r in make_system("openai", options).respond(requests)}
    assert (out["garbage"].status, out["garbage"].abstain) == ("invalid", None)
    assert out["garbage"].raw == "I think it is billing, probably!"
    assert out["offschema"].status == "invalid"
    assert out["slow"].status == "error"
    assert out["slow"].error == "timeout: no complete reply within the 0.5 s deadline"
    assert out["toolong"].status == "rejected" and "HTTP 400" in (out["toolong"].error or "")
    # a 500 is retried; the second attempt's real abstention is kept
    assert (out["flaky"].status, out["flaky"].abstain, out["flaky"].reason) == (
        "ok",
        True,
        "underspecified_state",
    )
    assert sum(1 for _, body in log if "flaky" in body["messages"][1]["content"]) == 2


def test_api_key_comes_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    seen: list[Any] = []

    def handle(path: str, body: Any) -> tuple[int, Any]:
        seen.append(body)
        return 200, chat_reply('{"abstain": false, "reason": null, "answer": "billing"}')

    monkeypatch.setenv("TWINBENCH_TEST_KEY", "sk-test-123")
    with serve(handle) as (url, _):
        options = SystemOptions(base_url=url, api_key_env="TWINBENCH_TEST_KEY")
        out = make_system("openai:gpt-test", options).respond([TICKET])
    assert (out[0].status, out[0].answer) == ("ok", "billing")
    assert seen[0]["model"] == "gpt-test"
    assert seen[0]["response_format"]["type"] == "json_schema"


def test_logprobs_give_an_endpoint_confidence_and_probabilities() -> None:
    import math

    content = '{"abstain": false, "reason": null, "answer": "billing"}'
    # tokens as a server splits them; the abstain value: false 0.8, true 0.2; the answer's
    # first token: "bill" 0.6, "sales" 0.3, "technical" 0.1
    ln = math.log
    tokens = [
        ('{"abstain": ', 0.0, []),
        ("false", ln(0.8), [("false", ln(0.8)), ("true", ln(0.2))]),
        (', "reason": null, "answer": "', 0.0, []),
        ("bill", ln(0.6), [("bill", ln(0.6)), ("sales", ln(0.3)), ("technical", ln(0.1))]),
        ("ing", 0.0, []),
        ('"}', 0.0, []),
    ]
    seen: list[Any] = []

    def handle(path: str, body: Any) -> tuple[int, Any]:
        seen.append(body)
        return 200, logprob_reply(content, tokens)

    with serve(handle) as (url, _):
        options = SystemOptions(base_url=url, logprobs=True, answer_format="json")
        system = make_system("openai", options)
        (res,) = system.respond([TICKET])
    assert seen[0]["logprobs"] is True and seen[0]["top_logprobs"] == 10
    assert (res.status, res.answer) == ("ok", "billing")
    # P(false) x P(null) x P("bill") = 0.8 x 1 x 0.6 = 0.48
    assert res.confidence == pytest.approx(0.48)
    assert res.probabilities == pytest.approx(
        {"billing": 0.48, "technical support": 0.08, "sales": 0.24}
    )
    assert system.card.confidences


def test_without_logprobs_in_the_reply_there_is_no_confidence() -> None:
    def handle(path: str, body: Any) -> tuple[int, Any]:
        return 200, chat_reply('{"abstain": false, "reason": null, "answer": "billing"}')

    with serve(handle) as (url, _):
        options = SystemOptions(base_url=url, logprobs=True, answer_format="json")
        (res,) = make_system("openai", options).respond([TICKET])
    assert (res.status, res.answer, res.confidence, res.probabilities) == (
        "ok",
        "billing",
        None,
        None,
    )
    assert res.error == "no confidence: the reply carries no token log-probabilities"


def test_letters_reject_what_does_not_fit_before_x_y_z_without_sending_it() -> None:
    """23 options fill A..W; with an explicit abstain option too, its letter would be X."""
    options = [f"option {i}" for i in range(23)]
    fits = Request(
        item_id="f", state="s", question=ChoiceQuestion(instructions="Pick", options=options)
    )
    over = Request(
        item_id="o",
        state="s",
        question=ChoiceQuestion(instructions="Pick", options=options, abstain_option="I abstain"),
    )

    def handle(path: str, body: Any) -> tuple[int, Any]:
        return 200, chat_reply('{"letter": "A"}')

    with serve(handle) as (url, log):
        system = make_system("openai", SystemOptions(base_url=url, answer_format="letters"))
        out = system.respond([over, fits])
        streamed = system.submit([over])[0].result()  # type: ignore[attr-defined]
    assert (out[1].status, out[1].answer) == ("ok", "option 0")
    for res in (out[0], streamed):
        assert (res.status, res.error) == (
            "rejected",
            "more than 22 options besides the abstain option",
        )
    assert len(log) == 1


def test_the_cli_takes_an_answer_format(tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from twinbench.builder import build_paired
    from twinbench.cli import app

    build_paired(tmp_path / "bench", per_generator=2)

    def handle(path: str, body: Any) -> tuple[int, Any]:
        return 200, chat_reply('{"letter": "D"}')  # the abstain option, after three options

    args = ["run", "-b", str(tmp_path / "bench"), "-s", "openai", "--out"]
    with serve(handle) as (url, log):
        bad = CliRunner().invoke(app, [*args, str(tmp_path / "x"), "--answer-format", "yaml"])
        good = CliRunner().invoke(
            app, [*args, str(tmp_path / "run"), "--base-url", url, "--answer-format", "letters"]
        )
    assert bad.exit_code == 2
    assert "--answer-format 'yaml': expected letters or json" in bad.output
    assert good.exit_code == 0, good.output
    assert len(log) == 4 and all(
        "letter" in body["response_format"]["json_schema"]["schema"]["properties"]
        for _, body in log
    )
    card = json.loads((tmp_path / "run" / "run.json").read_text())["system"]
    assert card["version"] == "default; answer format letters"
    rows = [
        json.loads(line) for line in (tmp_path / "run" / "responses.jsonl").read_text().splitlines()
    ]
    assert {(r["abstain"], r["reason"]) for r in rows} == {(True, "contradictory_options")}
