"""lm-evaluation-harness: export a benchmark as a task folder, import its logged samples as a run.

`export_lm_eval` writes `docs.jsonl` (one doc per public item: the user message twinbench's own
systems see, the letters A.. and X/Y/Z, the target letter, the item), `TASK.yaml` (a
`multiple_choice` task over the letters whose description is twinbench's system prompt),
`utils.py` (`process_results` from `twinbench.integrations.lm_eval_task`: the exact rule) and a
README. `import_lm_eval` reads the `samples_TASK_DATE.jsonl` that `--log_samples` writes back
into a run folder: each sample's decision is the argmax of its letters' log-likelihoods.

The model is shown a doc's `text` and `letters` only (`doc_to_text`, `doc_to_choice`), and
lm-eval hands it the log-likelihood requests sorted by their tokens (its `Collator`), not in
doc order; a doc's `item_id`, `item` and `target` are lm-eval's grading data. The task is
zero-shot: `--num_fewshot` would show other docs with their target letters (a twin's among
them), so the command never passes it.
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from twinbench import __version__
from twinbench.integrations import write_imported_run
from twinbench.integrations.lm_eval_task import METRICS, decision, doc_item, fits, item_doc
from twinbench.jsonl import (
    InputError,
    atomic_write,
    check_readable,
    iter_json_lines,
    read_json,
    write_jsonl,
)
from twinbench.outputs import output_set, recover
from twinbench.records import Item, Response
from twinbench.runner import items_digest, load_benchmark
from twinbench.runrecord import RunRecord
from twinbench.systems.base import SystemCard
from twinbench.systems.prompt import MAX_ANSWER_OPTIONS, SYSTEM_PROMPT

DOCS = "docs.jsonl"
UTILS = "utils.py"
README = "README.md"
_TASK_NAME = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_.-]*$")
#: lm-eval puts this between a plain-text prompt and each letter (with a chat template, nothing)
PLAIN_ANSWER = "\nAnswer: "
_NOTES = "argmax of lm-eval's log-likelihoods of the letters (answers, then X/Y/Z)"
_UTILS_TEXT = (
    '"""Written by `twinbench export lm-eval`: the exact rule, from the installed twinbench."""\n'
    "\n"
    "from twinbench.integrations.lm_eval_task import process_results\n"
    "\n"
    '__all__ = ["process_results"]\n'
)


@dataclass(frozen=True)
class LmEvalExport:
    """What `export_lm_eval` wrote: the task name, its folder and how many items it holds."""

    task: str
    folder: Path
    items: int
    left_out: int
    benchmark: Path

    def command(self, model: str = "MODEL", logs: str = "LOGS") -> str:
        """The lm_eval command line that runs the task and logs its samples."""
        return (
            f"lm_eval --model hf --model_args pretrained={model} --apply_chat_template "
            f"--include_path {self.folder} --tasks {self.task} --log_samples --output_path {logs}"
        )

    def summary(self) -> str:
        """One line: the task, its items and folder, and the command that runs it."""
        skipped = (
            f" ({self.left_out} with more than {MAX_ANSWER_OPTIONS} options left out)"
            if self.left_out
            else ""
        )
        return (
            f"task {self.task}: {self.items} items{skipped} in {self.folder}; run: {self.command()}"
        )


def _slug(benchmark: Path) -> str:
    folder = benchmark if benchmark.is_dir() else benchmark.parent
    slug = re.sub(r"[^a-z0-9]+", "_", folder.resolve().name.lower()).strip("_")
    return "twinbench_" + (slug or "benchmark")


def _quoted(text: str) -> str:
    """A YAML double-quoted scalar (JSON string escapes are YAML escapes)."""
    return json.dumps(text, ensure_ascii=False)


def task_yaml(task: str, docs: Path, benchmark: Path, items: list[Item]) -> str:
    """The task's YAML: a multiple_choice task over the letters, graded by process_results."""
    metrics = "".join(
        f"  - metric: {name}\n    aggregation: mean\n    higher_is_better: {str(up).lower()}\n"
        for name, up in METRICS.items()
    )
    return (
        f"# written by twinbench export lm-eval (twinbench {__version__}); re-export, do not edit\n"
        f"task: {task}\n"
        "dataset_path: json\n"
        "dataset_kwargs:\n"
        "  data_files:\n"
        "    # absolute: datasets resolves a relative path against the working directory\n"
        f"    test: {_quoted(str(docs))}\n"
        "test_split: test\n"
        "output_type: multiple_choice\n"
        "# with --apply_chat_template: the system turn is twinbench's system prompt, the user\n"
        "# turn the doc's text and the answer each letter, as twinbench's own systems see it;\n"
        "# without it (base models) one plain-text prompt, each letter after 'Answer: '\n"
        f"description: {_quoted(SYSTEM_PROMPT)}\n"
        f"target_delimiter: {_quoted(PLAIN_ANSWER)}\n"
        "doc_to_text: text\n"
        "doc_to_choice: letters\n"
        "doc_to_target: target\n"
        "process_results: !function utils.process_results\n"
        "metric_list:\n"
        f"{metrics}"
        "metadata:\n"
        "  version: 1.0\n"
        f"  twinbench_version: {_quoted(__version__)}\n"
        f"  twinbench_benchmark: {_quoted(str(benchmark))}\n"
        f"  twinbench_items: {len(items)}\n"
        f"  twinbench_items_sha256: {_quoted(items_digest(items))}\n"
    )


def _readme(done: LmEvalExport) -> str:
    return (
        f"# {done.task}\n\n"
        f"An lm-evaluation-harness task written by `twinbench export lm-eval` from the benchmark "
        f"`{done.benchmark}` ({done.items} public items; the holdout is never exported).\n\n"
        "Each item is a multiple-choice question over letters: A, B, ... for the answers, X, Y, "
        "Z for abstaining with a reason code. `process_results` turns the letters' "
        "log-likelihoods into a twinbench decision (argmax) and grades it with twinbench's exact "
        "rule (declared language: en); per-sample metrics are `correct`, `abstained`, "
        "`false_commit` and `false_abstain`, averaged over the items.\n\n"
        "```\n"
        f"{done.command()}\n"
        f"twinbench import lm-eval LOGS/*/samples_{done.task}_*.jsonl --out RUN\n"
        "```\n\n"
        f"`{DOCS}` is read by absolute path: after moving this folder, export again.\n"
    )


def _check_out(out: Path, task: str) -> None:
    """Refuse an --out that holds anything but a previous export of the same task."""
    if out.exists() and not out.is_dir():
        raise InputError(f"{out}: already exists and is not a folder")
    if not out.exists():
        return
    recover(out)
    ours = {DOCS, UTILS, README, f"{task}.yaml", "__pycache__"}
    other = sorted(p.name for p in out.iterdir() if p.name not in ours)
    if other:
        raise InputError(
            f"{out}: holds {other[0]!r}, not a task folder of {task}; export into a new folder"
        )


def export_lm_eval(benchmark: Path, out: Path, name: str | None) -> LmEvalExport:
    """Write an lm-evaluation-harness task folder for the benchmark's public items."""
    task = name or _slug(benchmark)
    if not _TASK_NAME.match(task):
        raise InputError(f"--name {task!r}: a task name is letters, digits, '_', '.' or '-'")
    items = load_benchmark(benchmark)
    shown = [item for item in items if fits(item)]
    _check_out(out, task)
    folder = out.resolve()
    done = LmEvalExport(task, folder, len(shown), len(items) - len(shown), benchmark.resolve())
    # one output set: a refusal or a kill leaves the old task folder, or the new one whole
    with output_set(folder) as stage:
        write_jsonl(stage(DOCS), [item_doc(item) for item in shown])
        for file_name, text in ((UTILS, _UTILS_TEXT), (README, _readme(done))):
            with atomic_write(stage(file_name)) as handle:
                handle.write(text)
        with atomic_write(stage(f"{task}.yaml")) as handle:
            handle.write(task_yaml(task, folder / DOCS, done.benchmark, items))
    return done


def _results(samples: Path) -> dict[str, Any] | None:
    """The results_DATE.json lm-eval wrote beside `samples` in the same run, if it is there."""
    found = re.match(r"^samples_.+_(\d{4}-\d\d-\d\dT[\d\-.]+)\.jsonl$", samples.name)
    if not found:
        return None
    path = samples.with_name(f"results_{found.group(1)}.json")
    if not path.is_file():
        return None
    data = read_json(path)
    return data if isinstance(data, dict) else None


def _task_metadata(results: dict[str, Any] | None) -> dict[str, Any]:
    """The metadata of the (first) twinbench task in the results' task configs."""
    configs = (results or {}).get("configs")
    for config in configs.values() if isinstance(configs, dict) else ():
        metadata = config.get("metadata") if isinstance(config, dict) else None
        if isinstance(metadata, dict) and "twinbench_benchmark" in metadata:
            return metadata
    return {}


def _card(results: dict[str, Any] | None) -> SystemCard:
    """`lm-eval:<basename of pretrained>`, with lm-eval's version and the model arguments."""
    if results is None:
        return SystemCard(
            name="lm-eval",
            version="?",
            confidences=True,
            notes=f"{_NOTES}; no results_*.json beside the samples, so the model is unknown",
        )
    config = results.get("config")
    config = config if isinstance(config, dict) else {}
    args = config.get("model_args")
    if isinstance(args, str):
        parsed = dict(part.split("=", 1) for part in args.split(",") if "=" in part)
    else:
        parsed = {str(k): str(v) for k, v in args.items()} if isinstance(args, dict) else {}
    pretrained = str(parsed.get("pretrained") or results.get("model_name") or "unknown")
    model = pretrained.rstrip("/").rsplit("/", 1)[-1]
    shown = ", ".join(f"{k}={model if k == 'pretrained' else v}" for k, v in parsed.items())
    chat = "chat template" if results.get("chat_template") else "no chat template"
    return SystemCard(
        name=f"lm-eval:{model}",
        version=f"lm-eval {results.get('lm_eval_version', '?')}; {config.get('model', '?')} "
        f"{shown or '?'}; {chat}",
        confidences=True,
        notes=_NOTES,
    )


def _logliks(resps: Any, count: int) -> list[float] | None:
    """One finite log-likelihood per letter from `filtered_resps`, or None if malformed."""
    if not isinstance(resps, list) or len(resps) != count:
        return None
    values: list[float] = []
    for resp in resps:
        first = resp[0] if isinstance(resp, list) and resp else resp
        try:
            value = float(first)
        except (TypeError, ValueError):
            return None
        if not math.isfinite(value):
            return None
        values.append(value)
    return values


def _response(where: str, obj: dict[str, Any], items: dict[str, Item], system: str) -> Response:
    doc = obj.get("doc")
    if not isinstance(doc, dict) or not isinstance(doc.get("item"), str):
        raise InputError(f"{where}: not a sample of a twinbench task (its doc has no item)")
    item = items.get(str(doc.get("item_id")))
    if item is None:
        raise InputError(f"{where}: item {doc.get('item_id')!r} is not in the benchmark")
    try:
        same = doc_item(doc) == item
    except ValueError:
        same = False
    if not same:
        raise InputError(f"{where}: item {item.id!r} differs from the benchmark's; export again")
    letters = doc.get("letters")
    resps = obj.get("filtered_resps", obj.get("resps"))
    logliks = _logliks(resps, len(letters) if isinstance(letters, list) else -1)
    if logliks is None:
        raise InputError(
            f"{where}: filtered_resps must hold one finite log-likelihood per letter ({letters!r})"
        )
    return decision(item, logliks, system)


def import_lm_eval(samples: Path, out: Path, benchmark: Path | None) -> RunRecord:
    """Read lm-eval's logged samples of an exported task into a run folder (status imported)."""
    check_readable(samples)
    results = _results(samples)
    metadata = _task_metadata(results)
    if benchmark is None:
        if "twinbench_benchmark" not in metadata:
            raise InputError(
                f"{samples}: no results_*.json beside it names the benchmark; "
                "give it with --benchmark"
            )
        benchmark = Path(str(metadata["twinbench_benchmark"]))
    items = load_benchmark(benchmark)
    recorded = metadata.get("twinbench_items_sha256")
    if recorded is not None and recorded != items_digest(items):
        raise InputError(f"{benchmark}: not the benchmark the task was exported from")
    by_id = {item.id: item for item in items}
    card = _card(results)
    responses: list[Response] = []
    seen: dict[str, int] = {}
    for lineno, obj in iter_json_lines(samples):
        where = f"{samples}:{lineno}"
        made = _response(where, obj, by_id, card.name)
        first = seen.setdefault(made.item_id, lineno)
        if first != lineno:
            raise InputError(f"{where}: second sample of item {made.item_id!r} (line {first})")
        responses.append(made)
    return write_imported_run(
        out, card, responses, items, source=f"lm-eval samples {samples}", benchmark=benchmark
    )
