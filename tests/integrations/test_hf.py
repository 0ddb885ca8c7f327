"""`twinbench export hf` and `twinbench import hf:DIR`: Parquet + card out, the same bytes back.

The benchmark is a real small build (`twinbench.build`, false_premise held out); the export is
read with the real `datasets.load_dataset("parquet", data_dir=…)` and the card with
huggingface_hub's own card parser, and every command runs through the real command line.
"""

from __future__ import annotations

import hashlib
import json
import re
import subprocess
import sys
from collections import Counter
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from typer.testing import CliRunner

import twinbench
from conftest import EXAMPLES, read_rows
from twinbench.builder import write_benchmark
from twinbench.cli import app
from twinbench.integrations.hf import COLUMNS, PARQUET, ExportRecord, export_hf, import_hf
from twinbench.jsonl import InputError
from twinbench.records import Item
from twinbench.runner import check_manifest, load_benchmark

HELD_OUT = "false_premise"


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


@pytest.fixture(scope="module")
def bench(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A small real build with one generator held out."""
    folder = tmp_path_factory.mktemp("hf") / "bench"
    twinbench.build(folder, per_generator=3, holdout=[HELD_OUT])
    return folder


@pytest.fixture(scope="module")
def exported(bench: Path) -> Path:
    """`bench` exported with the command line."""
    out = bench.parent / "export"
    result = CliRunner().invoke(app, ["export", "hf", str(bench), "--out", str(out)])
    assert result.exit_code == 0, result.output
    assert "holdout never exported" in result.output
    return out


def invoke(runner: CliRunner, *args: str) -> str:
    result = runner.invoke(app, list(args))
    assert result.exit_code == 0, result.output
    return result.output


def load_dataset(folder: Path, cache: Path, monkeypatch: pytest.MonkeyPatch) -> Any:
    monkeypatch.setenv("HF_DATASETS_OFFLINE", "1")
    import datasets

    monkeypatch.setattr(datasets.config, "HF_DATASETS_OFFLINE", True)
    return datasets.load_dataset("parquet", data_dir=str(folder), cache_dir=str(cache))


def test_round_trip_build_export_load_import(
    bench: Path, exported: Path, tmp_path: Path, runner: CliRunner, monkeypatch: pytest.MonkeyPatch
) -> None:
    items = load_benchmark(bench)
    ds = load_dataset(exported, tmp_path / "cache", monkeypatch)
    assert list(ds) == ["test"]
    test = ds["test"]
    assert (
        test.num_rows
        == len(items)
        == sum(
            sum(c.values()) for c in check_manifest(bench)["counts"]["public"]["family"].values()
        )
    )
    assert test.column_names == [c.name for c in COLUMNS]
    assert test["id"] == [i.id for i in items]
    assert Counter(test["family"]) == Counter(i.family.value for i in items)
    for row, item in zip(test, items, strict=True):
        assert row["answerable"] is item.answerable
        assert row["state"] == item.state
        assert row["generator_version"] == item.generator.version
        assert row["options"] == getattr(item.question, "options", None)
        assert json.loads(row["provenance"]) == item.provenance
        answer = row["expected_answer"]
        assert (None if answer is None else json.loads(answer)) == item.expected.answer
    twin = next(r for r in test if r["answerable"] and r["question_type"] == "noul")
    assert twin["expected_answer"] in ("true", "false") and twin["expected_reason"] is None

    back = tmp_path / "back"
    output = invoke(runner, "import", f"hf:{exported}", "--out", str(back))
    assert sha256(back / "items.jsonl") == sha256(bench / "items.jsonl")
    assert sha256(bench / "items.jsonl")[:12] in output
    manifest = check_manifest(back)  # what `twinbench run` reads first
    assert manifest["source"] == {"kind": "hf", "path": "export"}
    assert manifest["license"] == "apache-2.0"
    assert load_benchmark(back) == items
    assert (back / "holdout" / "items.jsonl").read_bytes() == b""


def test_imported_benchmark_runs_and_reports(
    exported: Path, tmp_path: Path, runner: CliRunner
) -> None:
    work = tmp_path / "eval"
    invoke(runner, "import", f"hf:{exported}", "--out", str(work / "benchmark"))
    run = work / "runs" / "always-abstain"
    invoke(runner, "run", "-b", str(work / "benchmark"), "-s", "always-abstain", "-o", str(run))
    invoke(runner, "report", str(work))
    metrics = json.loads((work / "metrics.json").read_text("utf-8"))
    text = json.dumps(metrics)
    assert "always-abstain" in text
    assert len(read_rows(run / "responses.jsonl")) == len(load_benchmark(work / "benchmark"))


def test_card_holds_the_hub_metadata_counts_and_recipe(bench: Path, exported: Path) -> None:
    from huggingface_hub import DatasetCard

    items = load_benchmark(bench)
    card = DatasetCard.load(exported / "README.md")
    assert card.data.license == "apache-2.0"
    assert card.data.language == sorted({i.language for i in items})
    assert card.data.size_categories == ["n<1K"]
    assert card.data.configs == [
        {"config_name": "default", "data_files": [{"split": "test", "path": "data/test-*"}]}
    ]
    assert "multiple-choice" in card.data.task_categories
    text = card.text
    counts = Counter(
        (i.generator.name, i.generator.version, i.family.value, i.answerable) for i in items
    )
    for (name, version, family, answerable), n in counts.items():
        if answerable:
            u = counts[name, version, family, False]
            assert f"| {name} | {version} | {family} | {u} | {n} |" in text
    for family, pair in check_manifest(bench)["counts"]["public"]["family"].items():
        assert f"| {family} | {pair['unanswerable']} | {pair['answerable']} |" in text
    assert "twinbench import hf:DIR --out eval/benchmark" in text
    assert "| unanswerable | answers | `false_commit` | no |" in text
    assert f"items.jsonl sha256: `{sha256(bench / 'items.jsonl')}`" in text
    for column in COLUMNS:
        assert f"| `{column.name}` | `{column.kind}` |" in text


def test_holdout_items_never_go_out(bench: Path, exported: Path) -> None:
    held = [Item.model_validate(r) for r in read_rows(bench / "holdout" / "items.jsonl")]
    assert held and {i.generator.name for i in held} == {HELD_OUT}
    table = pq.read_table(exported / PARQUET)
    assert not {i.id for i in held} & set(table.column("id").to_pylist())
    assert HELD_OUT not in table.column("generator").to_pylist()
    assert set(table.column("split").to_pylist()) == {"public"}
    record = ExportRecord.model_validate_json(table.schema.metadata[b"twinbench"])
    assert HELD_OUT not in [g["name"] for g in record.generators]
    assert HELD_OUT not in (exported / "README.md").read_text("utf-8")
    assert all(i.state not in (exported / "README.md").read_text("utf-8") for i in held)


def test_export_is_deterministic_and_closes_the_round_trip(
    bench: Path, exported: Path, tmp_path: Path, runner: CliRunner
) -> None:
    again = tmp_path / "again"
    invoke(runner, "export", "hf", str(bench), "--out", str(again))
    back, third = tmp_path / "back", tmp_path / "third"
    invoke(runner, "import", f"hf:{exported}", "--out", str(back))
    invoke(runner, "export", "hf", str(back), "--out", str(third))
    for name in (PARQUET, "README.md"):
        original = (exported / name).read_bytes()
        assert (again / name).read_bytes() == original, name
        assert (third / name).read_bytes() == original, name  # export of the imported copy
    invoke(runner, "export", "hf", str(bench), "--out", str(again))  # over its own export
    assert (again / PARQUET).read_bytes() == (exported / PARQUET).read_bytes()


def _hand_made(tmp_path: Path) -> Path:
    """The shipped examples (choice, score, noul, out_of_language) plus the rare fields."""
    rows = read_rows(EXAMPLES / "items.jsonl")
    rows[0]["question"]["abstain_option"] = "I abstain from answering"
    rows[2]["question"]["legend"] = {"low": 1.0, "mid": 2, "high": 3, "top": 4.5}
    rows[3]["question"]["legend"] = {"low": 1.0, "mid": 2, "high": 3, "top": 4.5}
    rows[3]["expected"]["answer"] = 4.5
    del rows[1]["twin_id"]
    rows[1]["provenance"] = {"unpaired_by_ratio": True, "nested": {"z": [1, 2.5, None]}}
    items = [Item.model_validate(r) for r in rows]
    folder = tmp_path / "hand"
    fields = {"seed": 3, "generators": [], "ratio": {"answerable": 1, "unanswerable": 1}}
    write_benchmark(folder, items, [], {**fields, "license": "CC-BY-4.0"})
    return folder


def test_every_question_kind_and_rare_field_round_trips(tmp_path: Path) -> None:
    folder = _hand_made(tmp_path)
    done = export_hf(folder, tmp_path / "hf")
    assert (done.items, done.unanswerable) == (12, 6)
    assert "12 public items (6 unanswerable, 6 answerable" in done.summary()
    table = pq.read_table(tmp_path / "hf" / PARQUET)
    rows = table.to_pylist()
    assert rows[0]["abstain_option"] == "I abstain from answering"
    assert rows[3]["legend"] == '{"low":1.0,"mid":2,"high":3,"top":4.5}'
    assert rows[3]["expected_answer"] == "4.5"
    assert rows[1]["twin_id"] is None
    assert rows[8]["answer_if_supported"] == '"facturación"'
    assert rows[10]["answer_if_supported"] == "true"
    assert rows[4]["options"] is not None and rows[6]["options"] is None
    back = import_hf(tmp_path / "hf", tmp_path / "back")
    assert back.items == 12
    assert (tmp_path / "back" / "items.jsonl").read_bytes() == (folder / "items.jsonl").read_bytes()
    legend = load_benchmark(tmp_path / "back")[3].question.legend  # type: ignore[union-attr]
    assert [type(v) for v in legend.values()] == [float, int, int, float]
    assert "license: cc-by-4.0\n" in (tmp_path / "hf" / "README.md").read_text("utf-8")
    assert check_manifest(tmp_path / "back")["license"] == "cc-by-4.0"


def _rewrite(path: Path, change: dict[str, tuple[int, Any]]) -> None:
    """Rewrite an exported Parquet file with row values changed, keeping its metadata."""
    table = pq.read_table(path)
    columns = table.to_pydict()
    for name, (row, value) in change.items():
        columns[name][row] = value
    pq.write_table(pa.table(columns, schema=table.schema), path)


def _refused(runner: CliRunner, args: list[str], out: Path, pattern: str) -> str:
    result = runner.invoke(app, args)
    assert result.exit_code == 2, result.output
    assert "Traceback" not in result.output
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert re.search(pattern, lines[0]), lines[0]
    assert not out.exists(), sorted(out.rglob("*"))
    return lines[0]


@pytest.mark.parametrize(
    ("change", "pattern"),
    [
        ({"family": (1, "bogus")}, r"parquet: row 2: family: Input should be"),
        ({"legend": (0, "{not json")}, r"parquet: row 1: legend: not JSON"),
        ({"provenance": (4, "[1]")}, r"parquet: row 5: provenance: Input should be a valid dict"),
        ({"state": (0, "An edited state.")}, r"parquet: the rows are not the items exported"),
        ({"seed": (2, 99)}, r"changed after twinbench exported them"),
    ],
)
def test_import_refuses_rows_that_are_not_the_exported_items(
    exported: Path,
    tmp_path: Path,
    runner: CliRunner,
    change: dict[str, tuple[int, Any]],
    pattern: str,
) -> None:
    folder = tmp_path / "edited"
    (folder / "data").mkdir(parents=True)
    (folder / PARQUET).write_bytes((exported / PARQUET).read_bytes())
    _rewrite(folder / PARQUET, change)
    out = tmp_path / "out"
    line = _refused(runner, ["import", f"hf:{folder}", "--out", str(out)], out, pattern)
    assert line.startswith(f"error: {folder / PARQUET}: ")


def test_import_refuses_folders_that_are_not_exports(
    bench: Path, tmp_path: Path, runner: CliRunner
) -> None:
    out = tmp_path / "out"
    args = ["import", f"hf:{bench}", "--out", str(out)]
    _refused(runner, args, out, rf"{bench}: no data/test-\*\.parquet; not a folder written by")
    plain = tmp_path / "plain"
    (plain / "data").mkdir(parents=True)
    pq.write_table(pa.table({"id": ["a"]}), plain / PARQUET)
    args = ["import", f"hf:{plain}", "--out", str(out)]
    _refused(runner, args, out, r"test-00000-of-00001\.parquet: not a twinbench export \(no twin")
    (plain / PARQUET).write_text("id,state\na,b\n", "utf-8")
    _refused(runner, args, out, r"test-00000-of-00001\.parquet: not a Parquet file")


def test_export_refuses_what_it_could_not_read_back(
    bench: Path, tmp_path: Path, runner: CliRunner
) -> None:
    out = tmp_path / "out"
    loose = tmp_path / "loose"
    loose.mkdir()
    (loose / "items.jsonl").write_bytes((bench / "items.jsonl").read_bytes())
    args = ["export", "hf", str(loose), "--out", str(out)]
    _refused(runner, args, out, rf"{loose / 'manifest.json'}: no manifest")
    _refused(runner, ["export", "hf", str(loose / "items.jsonl"), "--out", str(out)], out, "not a")

    items = load_benchmark(bench)
    fields = {"seed": 0, "generators": [], "ratio": {"answerable": 1, "unanswerable": 1}}
    held = tmp_path / "held"
    write_benchmark(held, [items[0], items[1].model_copy(update={"split": "holdout"})], [], fields)
    args = ["export", "hf", str(held), "--out", str(out)]
    _refused(runner, args, out, rf"{held / 'items.jsonl'}:2: a held-out item")

    spaced = tmp_path / "spaced"
    write_benchmark(spaced, items[:2], [], fields)
    lines = (spaced / "items.jsonl").read_text("utf-8").splitlines()
    lines[1] = json.dumps(json.loads(lines[1]), ensure_ascii=False)  # ", " and ": " spacing
    (spaced / "items.jsonl").write_text("\n".join(lines) + "\n", "utf-8")
    manifest = json.loads((spaced / "manifest.json").read_text("utf-8"))
    manifest["files"]["items.jsonl"] = sha256(spaced / "items.jsonl")
    (spaced / "manifest.json").write_text(json.dumps(manifest), "utf-8")
    args = ["export", "hf", str(spaced), "--out", str(out)]
    _refused(runner, args, out, rf"{spaced / 'items.jsonl'}:2: not written the way twinbench")


def test_export_refuses_a_folder_holding_other_files(
    bench: Path, tmp_path: Path, runner: CliRunner
) -> None:
    out = tmp_path / "project"
    out.mkdir()
    (out / "README.md").write_text("# my project\n", "utf-8")
    result = runner.invoke(app, ["export", "hf", str(bench), "--out", str(out)])
    assert result.exit_code == 2
    assert f"{out / 'README.md'}: not a twinbench export's" in result.stderr
    assert sorted(p.name for p in out.iterdir()) == ["README.md"]
    assert (out / "README.md").read_text("utf-8") == "# my project\n"


def test_core_import_stays_light_and_a_missing_pyarrow_gives_the_install_hint(
    exported: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    code = "import sys, twinbench.integrations.hf; print('pyarrow' in sys.modules)"
    light = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert light.stdout.strip() == "False"
    monkeypatch.setitem(sys.modules, "pyarrow.parquet", None)
    with pytest.raises(InputError, match=r"this needs pyarrow: pip install 'pyarrow'"):
        import_hf(exported, tmp_path / "out")
    assert not (tmp_path / "out").exists()
