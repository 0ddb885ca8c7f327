"""Generators: one module per construction recipe, registered by name.

A generator turns one corpus source into an (unanswerable item, answerable twin) pair,
deterministically from a seed, records what it edited in ``provenance``, and has a ``validity``
check that a script runs on every output. It declares the corpus pools it reads (``inputs``),
and the build deals each pool out among the generators that read it (``twinbench.partition``).
Importing this package registers the built-ins; plugins come from the ``twinbench.generators``
entry-point group (``registry``).
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
from twinbench.generators.base import CorpusPool, Generator, Pair, Pool, Reads
from twinbench.generators.registry import (
    ENTRY_POINT_GROUP,
    REGISTRY,
    generator_classes,
    load_plugins,
    register,
    registered,
)

__all__ = [
    "ENTRY_POINT_GROUP",
    "REGISTRY",
    "CorpusPool",
    "Generator",
    "Pair",
    "Pool",
    "Reads",
    "generator_classes",
    "load_plugins",
    "register",
    "registered",
]
