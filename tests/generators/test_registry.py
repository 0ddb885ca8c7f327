"""The generator registry: entry points, built-ins, plugins, and names that are not known."""

from __future__ import annotations

import tomllib
from collections import Counter
from collections.abc import Iterator
from importlib import metadata
from pathlib import Path

import pytest
from typer.testing import CliRunner

from twinbench.builder import build, default_generators
from twinbench.cli import app
from twinbench.corpus import load_corpus
from twinbench.generators import (
    ENTRY_POINT_GROUP,
    REGISTRY,
    CorpusPool,
    generator_classes,
    load_plugins,
    registered,
)
from twinbench.generators import registry as registry_module
from twinbench.generators.registry import builtin, register
from twinbench.jsonl import InputError
from twinbench.partition import partition
from twinbench.validate import validate_files

PYPROJECT = Path(__file__).resolve().parents[2] / "pyproject.toml"
PLUGIN = metadata.EntryPoint(
    name="support_deletion", value="plugin_generator:SupportDeletion", group=ENTRY_POINT_GROUP
)


@pytest.fixture
def saved_registry() -> Iterator[None]:
    saved = dict(REGISTRY)
    yield
    REGISTRY.clear()
    REGISTRY.update(saved)


def _install(monkeypatch: pytest.MonkeyPatch, *points: metadata.EntryPoint) -> None:
    """Make the entry-point lookup see `points` beside the installed ones, and load them."""
    installed = list(metadata.entry_points(group=ENTRY_POINT_GROUP))
    monkeypatch.setattr(registry_module, "entry_points", lambda: [*installed, *points])
    load_plugins()


@pytest.fixture
def plugin(monkeypatch: pytest.MonkeyPatch, saved_registry: None) -> None:
    _install(monkeypatch, PLUGIN)


def test_the_built_ins_are_the_entry_points_twinbench_declares() -> None:
    project = tomllib.loads(PYPROJECT.read_text("utf-8"))["project"]
    declared = project["entry-points"][ENTRY_POINT_GROUP]
    built_in = {
        cls.name: f"{cls.__module__}:{cls.__qualname__}" for cls in registered() if builtin(cls)
    }
    assert declared == built_in
    # what the installed metadata lists (`pip install -e .` refreshes it)
    installed = {point.name: point.value for point in registry_module.entry_points()}
    assert installed.items() >= declared.items()


def test_a_plugin_is_registered_but_stays_out_of_the_default_build(plugin: None) -> None:
    assert "support_deletion" in {cls.name for cls in registered()}
    assert "support_deletion" not in default_generators()
    assert default_generators() == [
        "redaction",
        "reference_ambiguity",
        "exact_duplicate",
        "false_premise",
        "state_contradiction",
        "translation",
    ]


def test_a_plugin_reading_the_scenario_pool_gets_a_share_and_builds(
    plugin: None, tmp_path: Path, runner: CliRunner
) -> None:
    names = ["redaction", "support_deletion", "exact_duplicate"]
    corpus = load_corpus()
    pools = partition(corpus, 0, generator_classes(names, "test"))
    redaction, deletion = pools["redaction"].scenarios, pools["support_deletion"].scenarios
    # exact_duplicate's fixed share first (round(0.33 x 216) = 71), then the 145 left alternate
    # between the two readers without a share, within each domain, redaction first
    assert len(pools["exact_duplicate"].scenarios) == 71
    assert len(redaction) + len(deletion) == 145
    assert not {s.id for s in redaction} & {s.id for s in deletion}
    per_domain = Counter(s.domain for s in redaction)
    per_domain.subtract(Counter(s.domain for s in deletion))
    assert set(per_domain.values()) <= {0, 1}

    out = tmp_path / "a"
    result = runner.invoke(app, ["build", "--out", str(out), "--generators", ",".join(names)])
    assert result.exit_code == 0, result.output
    built = build(tmp_path / "b", generators=names)
    row = next(g for g in built.manifest["generators"] if g["name"] == "support_deletion")
    assert row["pairs"] > 0 and row["version"] == "0.1.0" and "validity" not in row["dropped"]
    assert validate_files(out / "items.jsonl") == []
    assert (out / "items.jsonl").read_bytes() == (tmp_path / "b" / "items.jsonl").read_bytes()
    again = runner.invoke(
        app, ["build", "--from", str(out / "manifest.json"), "--out", str(tmp_path / "c")]
    )
    assert again.exit_code == 0, again.output
    assert (tmp_path / "c" / "manifest.json").read_bytes() == (out / "manifest.json").read_bytes()


def test_unknown_names_suggest_the_closest_one(plugin: None) -> None:
    with pytest.raises(InputError, match=r"unknown generator 'support_deleton' \(did you mean "):
        generator_classes(["redaction", "support_deleton"], "--generators")
    with pytest.raises(InputError) as caught:
        generator_classes(["zzz"], "--holdout")
    assert str(caught.value).startswith("--holdout: unknown generator 'zzz'; choose from ")
    assert "support_deletion" in str(caught.value)


def test_a_plugin_that_does_not_load_is_one_line(
    monkeypatch: pytest.MonkeyPatch, saved_registry: None
) -> None:
    missing = metadata.EntryPoint("nope", "no_such_module_here:Thing", ENTRY_POINT_GROUP)
    with pytest.raises(InputError) as caught:
        _install(monkeypatch, missing)
    assert str(caught.value) == (
        "generator plugin 'nope' (no_such_module_here:Thing) does not load: "
        "No module named 'no_such_module_here'"
    )
    misnamed = metadata.EntryPoint("other", PLUGIN.value, ENTRY_POINT_GROUP)
    with pytest.raises(InputError, match="its class is named 'support_deletion'"):
        _install(monkeypatch, misnamed)


def test_register_refuses_a_taken_name_and_missing_inputs(saved_registry: None) -> None:
    from plugin_generator import SupportDeletion

    class Clash(SupportDeletion):
        name = "redaction"

    with pytest.raises(ValueError, match=r"'redaction' is taken by twinbench\.generators"):
        register(Clash)

    class NoInputs(SupportDeletion):
        name = "no_inputs"
        inputs = ()

    with pytest.raises(ValueError, match="declares no `inputs`"):
        register(NoInputs)
    assert REGISTRY["redaction"].__module__ == "twinbench.generators.redaction"
    assert register(SupportDeletion) is SupportDeletion  # the function entry points use
    assert SupportDeletion.inputs[0].pool is CorpusPool.SCENARIOS
