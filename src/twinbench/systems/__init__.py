"""Systems: one adapter per protocol behind the System protocol, looked up by a spec string.

Spec grammar (`twinbench run --system SPEC`):

* ``NAME`` or ``NAME:ARG`` — a registered adapter, e.g. ``smollm2``,
  ``always-abstain:out_of_language``, ``always-answer:random``, ``openai`` (server options
  come from ``--base-url`` etc.);
* ``gate:SPEC@THRESHOLD[:CODE]`` — abstain (with CODE, default underspecified_state) when the
  wrapped system's confidence is below THRESHOLD;
* ``router:LANG=SPEC[+LANG=SPEC...]`` — route each item by detected language; an unrouted
  language is an ``out_of_language`` abstention.

Plugins register more adapters under the entry-point group ``twinbench.systems``: each entry
point is a factory ``(arg: str | None, options: SystemOptions) -> System``.
"""

from __future__ import annotations

from collections.abc import Callable
from importlib import import_module
from importlib.metadata import entry_points

from twinbench.jsonl import InputError
from twinbench.systems.base import Request, System, SystemCard, SystemOptions

Factory = Callable[[str | None, SystemOptions], System]

#: built-in adapters: name -> (module, factory function, one-line description)
BUILTINS: dict[str, tuple[str, str, str]] = {
    "always-abstain": (
        "baselines",
        "always_abstain",
        "abstains on every item (code per family, or :CODE)",
    ),
    "always-answer": (
        "baselines",
        "always_answer",
        "answers every item (:first option, or :random seeded)",
    ),
    "abstain-by-form": (
        "baselines",
        "abstain_by_form",
        "abstains on every item, its code from the question type and the script alone",
    ),
    "shortcut": (
        "shortcut",
        "factory",
        "untrained word-overlap/negation/duplicate rules: what a cheater scores",
    ),
    "smollm2": (
        "smollm2",
        "factory",
        "embedded SmolLM2-135M-Instruct, one pass per item (local; :fp32 exact, :bf16, mixed)",
    ),
    "minilm": (
        "minilm",
        "factory",
        "all-MiniLM-L6-v2 similarity with a margin gate (:MARGIN, default 0.05)",
    ),
    "openai": (
        "openai_compat",
        "factory",
        "any OpenAI-compatible chat endpoint (--base-url, --model, --api-key-env)",
    ),
    "laya": ("systemone", "laya", "Laya POST /v1/systemone[/batch] (:MIN_CONFIDENCE)"),
    "jev": ("systemone", "jev", "Jev contract: choice_index + confidence, 400 above 255 options"),
    "typed-decisions": (
        "typed_decisions",
        "factory",
        "typed-decisions Decider in process, or its POST /v1/ask with --base-url",
    ),
}


def _plugin(name: str) -> Factory | None:
    for entry in entry_points(group="twinbench.systems"):
        if entry.name == name:
            factory: Factory = entry.load()
            return factory
    return None


def available() -> dict[str, str]:
    """Every system name with its description (built-ins and plugins)."""
    names = {name: desc for name, (_, _, desc) in BUILTINS.items()}
    names["gate:SPEC@T[:CODE]"] = "abstain when the wrapped system's confidence is below T"
    names["router:LANG=SPEC+..."] = "route by detected language; others abstain out_of_language"
    for entry in entry_points(group="twinbench.systems"):
        names.setdefault(entry.name, f"plugin ({entry.value})")
    return names


def make_system(spec: str, options: SystemOptions | None = None) -> System:
    """Build the system a spec string names (see the module docstring for the grammar)."""
    options = options or SystemOptions()
    if spec.startswith("gate:"):
        from twinbench.systems.gate import parse_gate

        return parse_gate(spec, options, make_system)
    if spec.startswith("router:"):
        from twinbench.systems.router import parse_router

        return parse_router(spec, options, make_system)
    name, _, arg = spec.partition(":")
    if name in BUILTINS:
        module, function, _ = BUILTINS[name]
        factory: Factory = getattr(import_module(f"twinbench.systems.{module}"), function)
        return factory(arg or None, options)
    plugin = _plugin(name)
    if plugin is None:
        raise InputError(f"--system: unknown system {name!r}; `twinbench systems` lists them")
    return plugin(arg or None, options)


__all__ = ["Request", "System", "SystemCard", "SystemOptions", "available", "make_system"]
