"""`twinbench build --from manifest.json`: every option read back, the same bytes rebuilt."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from conftest import read_rows
from twinbench import __version__
from twinbench.build_record import BuildOptions, read_build_record
from twinbench.builder import build, default_generators
from twinbench.cli import app
from twinbench.errata import Errata, Erratum


def _files(folder: Path) -> dict[str, bytes]:
    return {
        str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()
    }


def _invoke(runner: CliRunner, *args: str) -> None:
    result = runner.invoke(app, ["build", *args])
    assert result.exit_code == 0, result.output


def test_from_rebuilds_every_option_byte_for_byte(tmp_path: Path, runner: CliRunner) -> None:
    options = ["--seed", "5", "--per-generator", "15", "--ratio", "2:1", "--release", "--strict"]
    options += ["--generators", ",".join([*default_generators(), "rematch"])]
    _invoke(runner, "--out", str(tmp_path / "first"), *options)
    victim = read_rows(tmp_path / "first" / "items.jsonl")[0]
    errata = tmp_path / "errata.json"
    entries = [{"pair_id": victim["pair_id"]}]
    errata.write_text(
        json.dumps({"schema": "twinbench.errata/1", "version": 3, "entries": entries})
    )
    _invoke(runner, "--out", str(tmp_path / "a"), *options, "--errata", str(errata))
    _invoke(runner, "--from", str(tmp_path / "a" / "manifest.json"), "--out", str(tmp_path / "b"))

    built, rebuilt = _files(tmp_path / "a"), _files(tmp_path / "b")
    files = {"items.jsonl", "items.index.jsonl", "holdout/items.jsonl", "manifest.json"}
    assert set(built) == files
    assert rebuilt == built
    record = read_build_record(tmp_path / "b" / "manifest.json")
    assert record.options("manifest") == BuildOptions(
        seed=5,
        per_generator=15,
        ratio=(2, 1),
        holdout=("reference_ambiguity", "false_premise"),  # --release, read from the splits
        errata=Errata(version=3, entries=[Erratum(pair_id=victim["pair_id"])]),
        strict_bound=0.65,
        generators=(
            *("redaction", "reference_ambiguity", "rematch", "exact_duplicate"),
            *("false_premise", "state_contradiction", "translation"),
        ),
    )
    assert record.errata is not None and record.errata.dropped_pairs == 1


def test_from_rebuilds_a_paired_build(tmp_path: Path, runner: CliRunner) -> None:
    _invoke(runner, "--out", str(tmp_path / "a"), "--paired", "--seed", "2", "--per-generator", "9")
    _invoke(runner, "--from", str(tmp_path / "a" / "manifest.json"), "--out", str(tmp_path / "b"))
    assert _files(tmp_path / "b") == _files(tmp_path / "a")
    options = read_build_record(tmp_path / "a" / "manifest.json").options("m")
    assert options == BuildOptions(seed=2, per_generator=9, paired=True)


@pytest.fixture(scope="module")
def small(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("small")
    build(out, per_generator=4)
    return out / "manifest.json"


def _edited(small: Path, tmp_path: Path, **changes: object) -> Path:
    manifest = json.loads(small.read_text("utf-8"))
    for key, value in changes.items():
        if key == "corpus_file":
            manifest["corpus"]["scenarios_a.jsonl"] = value
        else:
            manifest[key] = value
    path = tmp_path / "manifest.json"
    path.write_text(json.dumps(manifest))
    return path


def _refused(runner: CliRunner, manifest: Path, out: Path, *extra: str) -> str:
    result = runner.invoke(app, ["build", "--from", str(manifest), "--out", str(out), *extra])
    assert result.exit_code == 2, result.output
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, lines
    assert not out.exists()
    return lines[0]


def test_from_refuses_another_twinbench_or_corpus(
    small: Path, tmp_path: Path, runner: CliRunner
) -> None:
    manifest = _edited(small, tmp_path, twinbench_version="0.0.1", corpus_file="ab" * 32)
    line = _refused(runner, manifest, tmp_path / "out")
    installed = read_build_record(small).corpus["scenarios_a.jsonl"][:12]
    assert line == (
        f"error: {manifest}: cannot rebuild byte for byte: twinbench 0.0.1 in the manifest, "
        f"{__version__} installed; corpus file scenarios_a.jsonl differs (sha256 abababababab… "
        f"in the manifest, sha256 {installed}… installed)"
    )


def test_from_refuses_another_generator_version_and_unknown_ones(
    small: Path, tmp_path: Path, runner: CliRunner
) -> None:
    rows = json.loads(small.read_text("utf-8"))["generators"]
    rows[0]["version"] = "0.9.0"
    line = _refused(runner, _edited(small, tmp_path, generators=rows), tmp_path / "out")
    assert line.endswith("generator redaction 0.9.0 in the manifest, 1.4.0 installed")
    rows[0]["name"] = "redactoin"
    line = _refused(runner, _edited(small, tmp_path, generators=rows), tmp_path / "out")
    assert "unknown generator 'redactoin' (did you mean 'redaction'?)" in line


def test_from_refuses_what_it_cannot_honour(small: Path, tmp_path: Path, runner: CliRunner) -> None:
    line = _refused(runner, small, tmp_path / "out", "--seed", "3", "--ratio", "2:1")
    assert line == "error: --from: the manifest fixes every build option; drop --seed, --ratio"
    errata = {"version": 2, "dropped_pairs": 1}  # a manifest from before entries were recorded
    line = _refused(runner, _edited(small, tmp_path, errata=errata), tmp_path / "out")
    assert "records errata version 2 but not its entries" in line
    line = _refused(runner, _edited(small, tmp_path, source={"kind": "squad2"}), tmp_path / "out")
    assert line.endswith("made by `twinbench import`; --from rebuilds builds only")
    line = _refused(runner, _edited(small, tmp_path, seed="x"), tmp_path / "out")
    assert "manifest.json: not a build manifest: seed: Input should be a valid integer" in line


def test_from_checks_the_rebuilt_files_against_the_manifest(
    small: Path, tmp_path: Path, runner: CliRunner
) -> None:
    for change in ({"seed": 1}, {"per_generator": 3}):  # hand-edited: other items
        edited = _edited(small, tmp_path, **change)
        line = _refused(runner, edited, tmp_path / "out" / "new")  # no folder left behind
        assert "the rebuilt items.jsonl" in line and "differ from the sha256 it records" in line
        assert not (tmp_path / "out").exists()
        # onto an existing benchmark: every file of it survives byte for byte
        existing = tmp_path / "existing"
        build(existing, per_generator=2, seed=9)
        before = _files(existing)
        result = runner.invoke(app, ["build", "--from", str(edited), "--out", str(existing)])
        assert result.exit_code == 2, result.output
        assert _files(existing) == before
