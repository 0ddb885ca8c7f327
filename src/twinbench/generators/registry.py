"""The generator registry: twinbench's own generators plus those of installed plugins.

A plugin is a distribution with an entry point in the `twinbench.generators` group, named after
the generator, whose value is its `Generator` subclass (`name = "pkg.module:Class"`), or a
module whose import registers generators with `register`. twinbench declares its own the same
way (pyproject.toml) and also imports them, so they are there in a checkout that was never
installed. Plugins are loaded the first time the registry is read; they run only when a build
names them (`--generators`): the default build is twinbench's own non-retired generators.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable, Sequence
from importlib import metadata
from types import ModuleType
from typing import Any, TypeVar

from twinbench.generators.base import Generator
from twinbench.jsonl import InputError
from twinbench.records import ReasonCode

ENTRY_POINT_GROUP = "twinbench.generators"
REGISTRY: dict[str, type[Generator[Any]]] = {}
G = TypeVar("G", bound=type[Generator[Any]])
_plugins_loaded = False


def register(cls: G) -> G:
    """Add a generator to the registry under its `name` (a class decorator; plugins too)."""
    known = REGISTRY.get(cls.name)
    if known is not None and known is not cls:
        raise ValueError(
            f"generator name {cls.name!r} is taken by {_where(known)}; {_where(cls)} needs another"
        )
    if not getattr(cls, "inputs", ()):
        raise ValueError(f"{cls.name}: declares no `inputs` (the corpus pools it reads)")
    for reads in cls.inputs:
        if reads.share is not None and not 0 < reads.share <= 1:
            raise ValueError(f"{cls.name}: the share of {reads.pool.value} must be in (0, 1]")
    REGISTRY[cls.name] = cls
    return cls


def entry_points() -> Iterable[metadata.EntryPoint]:
    """The installed entry points of the generator group."""
    return metadata.entry_points(group=ENTRY_POINT_GROUP)


def load_plugins() -> None:
    """Register every generator the installed entry points name (InputError if one is broken)."""
    global _plugins_loaded
    _plugins_loaded = True
    for point in entry_points():
        try:
            loaded = point.load()
            if isinstance(loaded, type) and issubclass(loaded, Generator):
                if loaded.name != point.name:
                    raise ValueError(f"its class is named {loaded.name!r}")
                register(loaded)
            elif not isinstance(loaded, ModuleType):
                raise ValueError("it is neither a Generator subclass nor a module")
        except Exception as exc:
            raise InputError(
                f"generator plugin {point.name!r} ({point.value}) does not load: {exc}"
            ) from None


def registered() -> list[type[Generator[Any]]]:
    """Registered generators in build order: by family (reason-code order), then by name."""
    if not _plugins_loaded:
        load_plugins()
    families = list(ReasonCode)
    return sorted(REGISTRY.values(), key=lambda cls: (families.index(cls.family), cls.name))


def builtin(cls: type[Generator[Any]]) -> bool:
    """Whether a generator ships with twinbench (plugins never join the default build)."""
    return cls.__module__.startswith("twinbench.generators.")


def generator_classes(names: Sequence[str], option: str) -> list[type[Generator[Any]]]:
    """The registered generators `names` names, in build order; an unknown name is an
    InputError prefixed with `option` that suggests the closest known name."""
    known = {cls.name: cls for cls in registered()}
    for name in names:
        if name not in known:
            close = difflib.get_close_matches(name, known, n=1)
            hint = f" (did you mean {close[0]!r}?)" if close else ""
            raise InputError(
                f"{option}: unknown generator {name!r}{hint}; choose from {', '.join(known)}"
            )
    wanted = set(names)
    return [cls for name, cls in known.items() if name in wanted]


def _where(cls: type[Any]) -> str:
    return f"{cls.__module__}.{cls.__qualname__}"
