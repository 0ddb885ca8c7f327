"""Every API entry point takes paths (str or os.PathLike) or records alike, and names the
argument, what was given and what is accepted when it gets anything else."""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import pytest

import twinbench
from conftest import EXAMPLES
from twinbench import InputError, Item, Response
from twinbench.jsonl import load_models

ITEMS = EXAMPLES / "items.jsonl"
RESPONSES = EXAMPLES / "responses.jsonl"

FOLDER = "a folder path (str or os.PathLike)"
BENCHMARK = "a benchmark folder, an items.jsonl path or a sequence of Item records"
RESPONSE_FORMS = "a run folder, a responses.jsonl path or a sequence of Response records"
RUNS = "a sequence of run folders or responses.jsonl paths"
SYSTEM = (
    "a system spec such as 'smollm2' (`twinbench systems` lists them) or an object with a "
    "card (SystemCard) and respond(requests)"
)
LANGUAGES = "language codes such as ['en', 'es'] or 'en,es'"
COSTS = "a cost table path (TOML or JSON)"


def _items() -> list[Item]:
    return [item for _, item in load_models(ITEMS, Item)]


def _responses() -> list[Response]:
    return [response for _, response in load_models(RESPONSES, Response)]


@pytest.fixture(scope="module")
def job(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A report folder: a built benchmark and two runs of it."""
    root = tmp_path_factory.mktemp("job")
    twinbench.build(root / "benchmark", per_generator=3)
    twinbench.run("always-abstain", root / "benchmark", root / "runs" / "abstain")
    twinbench.run("always-answer:first", root / "benchmark", root / "runs" / "answer")
    return root


def test_grade_gives_the_same_metrics_from_str_path_folder_and_records(tmp_path: Path) -> None:
    run_folder = tmp_path / "run"
    run_folder.mkdir()
    shutil.copy(RESPONSES, run_folder / "responses.jsonl")
    expected = twinbench.grade(_items(), _responses())
    # the hand-graded figures of tests/test_grade.py::test_hand_graded_mixture
    assert expected.family("underspecified_state").recall == 1 / 2
    assert expected.family("contradictory_options").recall == 1 / 2
    assert expected.family("out_of_language").twin_accuracy == 1 / 2
    assert expected.counts["invalid"] == 1
    for benchmark in (str(ITEMS), ITEMS, _items(), tuple(_items())):
        for responses in (str(RESPONSES), RESPONSES, run_folder, str(run_folder), _responses()):
            got = twinbench.grade(benchmark, responses)
            assert got.to_json() == expected.to_json()


def test_graded_run_takes_the_relative_path_of_the_issue(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(EXAMPLES)
    from_paths = list(twinbench.graded_run("items.jsonl", "responses.jsonl").rows())
    from_records = twinbench.graded_run(_items(), _responses())
    assert len(from_paths) == 12
    assert from_paths == list(from_records.rows())
    assert from_records.name == "example-mixed"  # records have no folder: the system names them
    assert (
        twinbench.graded_run(Path("items.jsonl"), iter(_responses())).metrics().to_json()  # type: ignore[arg-type]
        == from_records.metrics().to_json()
    )


def test_languages_as_a_comma_list_or_a_sequence() -> None:
    spanish = twinbench.grade(ITEMS, RESPONSES, languages=["en", "es"])
    assert spanish.to_json() == twinbench.grade(ITEMS, RESPONSES, languages="en,es").to_json()
    assert spanish.to_json() != twinbench.grade(ITEMS, RESPONSES).to_json()  # ol-005 counts now
    assert twinbench.grade(ITEMS, RESPONSES, languages=()).to_json() == (
        twinbench.grade(ITEMS, RESPONSES).to_json()
    )


def test_run_takes_a_str_a_path_or_the_items(tmp_path: Path) -> None:
    outs = {
        "str": twinbench.run("always-abstain", str(ITEMS), str(tmp_path / "str")),
        "path": twinbench.run("always-abstain", ITEMS, tmp_path / "path"),
        "records": twinbench.run("always-abstain", _items(), tmp_path / "records"),
    }
    assert {name: record.responses for name, record in outs.items()} == dict.fromkeys(outs, 12)
    assert outs["path"].benchmark == str(ITEMS.resolve())
    assert outs["records"].benchmark is None  # items passed as records come from no file
    written = {name: (tmp_path / name / "responses.jsonl").read_bytes() for name in outs}
    assert written["str"] == written["path"] == written["records"]
    limited = twinbench.run("always-abstain", _items(), tmp_path / "limited", limit=5)
    assert limited.responses == 5


def test_build_takes_a_str_or_a_path(tmp_path: Path) -> None:
    from_str = twinbench.build(str(tmp_path / "a"), per_generator=1)
    from_path = twinbench.build(tmp_path / "b", per_generator=1)
    assert from_str.public == from_path.public
    assert (tmp_path / "a" / "items.jsonl").read_bytes() == (
        tmp_path / "b" / "items.jsonl"
    ).read_bytes()


def test_report_takes_a_str_or_a_path(job: Path) -> None:
    from_path = twinbench.report(job, write=False)
    assert set(from_path.systems) == {"abstain", "answer"}
    assert twinbench.report(str(job), write=False).to_json() == from_path.to_json()


def test_compare_takes_folders_files_and_benchmark_records(job: Path) -> None:
    folders = [job / "runs" / "abstain", job / "runs" / "answer"]
    expected = twinbench.compare(folders).to_json()
    assert expected["comparisons"]
    assert twinbench.compare([str(f) for f in folders]).to_json() == expected
    assert twinbench.compare(tuple(f / "responses.jsonl" for f in folders)).to_json() == expected
    bench_items = [item for _, item in load_models(job / "benchmark" / "items.jsonl", Item)]
    assert twinbench.compare(folders, benchmark=bench_items).to_json() == expected
    assert twinbench.compare(folders, benchmark=str(job / "benchmark")).to_json() == expected


def test_evaluate_takes_a_str_folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    result = twinbench.evaluate("out", "always-abstain", per_family=1, languages="en")
    assert result.items_sent == 6
    assert json.loads((tmp_path / "out" / "metrics.json").read_text()) == result.report.to_json()


# every argument of every entry point, called with a bad value `v` (t: an out folder, j: job)
Call = Callable[[Any, Path, Path], object]
CALLS: dict[str, Call] = {
    "build: out": lambda v, t, j: twinbench.build(v),
    "run: system": lambda v, t, j: twinbench.run(v, ITEMS, t),
    "run: benchmark": lambda v, t, j: twinbench.run("always-abstain", v, t),
    "run: out": lambda v, t, j: twinbench.run("always-abstain", ITEMS, v),
    "grade: benchmark": lambda v, t, j: twinbench.grade(v, RESPONSES),
    "grade: responses": lambda v, t, j: twinbench.grade(ITEMS, v),
    "grade: languages": lambda v, t, j: twinbench.grade(ITEMS, RESPONSES, languages=v),
    "grade: costs": lambda v, t, j: twinbench.grade(ITEMS, RESPONSES, costs=v),
    "graded_run: items": lambda v, t, j: twinbench.graded_run(v, RESPONSES),
    "graded_run: responses": lambda v, t, j: twinbench.graded_run(ITEMS, v),
    "graded_run: languages": lambda v, t, j: twinbench.graded_run(ITEMS, RESPONSES, languages=v),
    "report: folder": lambda v, t, j: twinbench.report(v, write=False),
    "report: languages": lambda v, t, j: twinbench.report(j, languages=v, write=False),
    "compare: runs": lambda v, t, j: twinbench.compare(v),
    "compare: benchmark": lambda v, t, j: twinbench.compare(_runs(j), benchmark=v),
    "compare: languages": lambda v, t, j: twinbench.compare(_runs(j), languages=v),
    "evaluate: out": lambda v, t, j: twinbench.evaluate(v, "always-abstain"),
    "evaluate: system": lambda v, t, j: twinbench.evaluate(t, v),
    "evaluate: languages": lambda v, t, j: twinbench.evaluate(t, "always-abstain", languages=v),
}
ACCEPTED = {
    "out": FOLDER,
    "folder": FOLDER,
    "system": SYSTEM,
    "benchmark": BENCHMARK,
    "items": BENCHMARK,
    "responses": RESPONSE_FORMS,
    "languages": LANGUAGES,
    "costs": COSTS,
    "runs": RUNS,
}


def _runs(job: Path) -> list[Path]:
    return [job / "runs" / "abstain", job / "runs" / "answer"]


@pytest.mark.parametrize("kind", ["int", "dict", "list"])
@pytest.mark.parametrize("where", list(CALLS))
def test_a_wrong_type_names_the_argument_what_was_given_and_what_is_accepted(
    where: str, kind: str, job: Path, tmp_path: Path
) -> None:
    argument = where.split(": ")[1]
    listed = [1, 2] if argument in ("languages", "runs") else ["a", "b"]  # lists of str are fine
    value, shown = {
        "int": (3, "int 3"),
        "dict": ({"id": "x"}, "dict {'id': 'x'}"),
        "list": (listed, f"list of {type(listed[0]).__name__} {listed!r}"),
    }[kind]
    with pytest.raises(InputError) as caught:
        CALLS[where](value, tmp_path / "out", job)
    assert str(caught.value) == f"{where} must be {ACCEPTED[argument]}; got {shown}"
    assert not (tmp_path / "out").exists()  # refused before anything was written


def test_the_wrong_forms_a_user_is_likely_to_pass() -> None:
    item = _items()[0]
    stray = _responses()[0].model_copy(update={"item_id": "zz-001"})
    cases: list[tuple[Callable[[], object], str]] = [
        (lambda: twinbench.compare("runs/a"), f"compare: runs must be {RUNS}; got str 'runs/a'"),
        (
            lambda: twinbench.grade([], RESPONSES),
            f"grade: benchmark must be {BENCHMARK}; got empty list []",
        ),
        (
            lambda: twinbench.grade(ITEMS, [*_responses()[:2], "x"]),  # type: ignore[list-item]
            f"grade: responses must be {RESPONSE_FORMS}; got a list whose [2] is str 'x'",
        ),
        (
            lambda: twinbench.grade(item, RESPONSES),  # type: ignore[arg-type]
            f"grade: benchmark must be {BENCHMARK}; got Item "
            "Item(schema_='twin...nual plan twice.'})",
        ),
        (
            lambda: twinbench.grade(ITEMS, [*_responses()[:3], stray]),
            "responses:4: response for unknown item 'zz-001'",  # records count from 1, like lines
        ),
        (
            lambda: twinbench.grade("", RESPONSES),
            f"grade: benchmark must be {BENCHMARK}; got str ''",
        ),
        (
            lambda: twinbench.grade(b"items.jsonl", RESPONSES),  # type: ignore[arg-type]
            f"grade: benchmark must be {BENCHMARK}; got bytes b'items.jsonl'",
        ),
        (
            lambda: twinbench.grade(ITEMS, RESPONSES, languages=" , "),
            f"grade: languages must be {LANGUAGES}; got str ' , '",
        ),
    ]
    for call, message in cases:
        with pytest.raises(InputError) as caught:
            call()
        assert str(caught.value) == message


class Named:
    """A system class (not an instance), as a user might pass it by mistake."""

    card = twinbench.SystemCard(name="named")

    def respond(self, requests: Sequence[twinbench.Request]) -> list[Response]:
        return []


def test_a_system_class_is_refused_with_the_instance_to_pass(tmp_path: Path) -> None:
    with pytest.raises(InputError) as caught:
        twinbench.run(Named, ITEMS, tmp_path / "out")  # type: ignore[arg-type]
    assert str(caught.value) == (
        f"run: system must be {SYSTEM}; got the class Named, not an instance (pass Named())"
    )
    assert twinbench.run(Named(), ITEMS, tmp_path / "out").system.name == "named"


def test_a_missing_file_names_the_path_and_the_reason(tmp_path: Path, job: Path) -> None:
    missing = tmp_path / "nope" / "items.jsonl"
    cases: list[tuple[Callable[[], object], str]] = [
        (
            lambda: twinbench.grade(missing, RESPONSES),
            f"{missing}: no such file or folder (grade: benchmark)",
        ),
        (
            lambda: twinbench.graded_run(str(missing), RESPONSES),
            f"{missing}: no such file or folder (graded_run: items)",
        ),
        (
            lambda: twinbench.grade(ITEMS, tmp_path / "run"),
            f"{tmp_path / 'run'}: no such file or folder (grade: responses)",
        ),
        (
            lambda: twinbench.grade(ITEMS, RESPONSES, costs=tmp_path / "c.toml"),
            f"{tmp_path / 'c.toml'}: no such file or folder (grade: costs)",
        ),
        (
            lambda: twinbench.run("always-abstain", missing, tmp_path / "out"),
            f"{missing}: no such file or folder (run: benchmark)",
        ),
        (
            lambda: twinbench.report(tmp_path / "nope"),
            f"{tmp_path / 'nope'}: no such file or folder (report: folder)",
        ),
        (
            lambda: twinbench.compare([*_runs(job), tmp_path / "c"]),
            f"{tmp_path / 'c'}: no such file or folder (compare: runs)",
        ),
    ]
    for call, message in cases:
        with pytest.raises(InputError) as caught:
            call()
        assert str(caught.value) == message
