"""Generators: one module per construction recipe, registered by name.

A generator turns one corpus source into an (unanswerable item, answerable twin) pair,
deterministically from a seed, records what it edited in ``provenance``, and has a ``validity``
check that a script runs on every output. Importing this package registers the built-ins.
"""

from twinbench.generators import (  # noqa: F401  (imported to register them)
    exact_duplicate,
    false_premise,
    redaction,
    reference_ambiguity,
    rematch,
    state_contradiction,
    translation,
)
from twinbench.generators.base import REGISTRY, Generator, Pair, Pool, register, registered

__all__ = ["REGISTRY", "Generator", "Pair", "Pool", "register", "registered"]
