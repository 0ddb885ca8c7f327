"""The generator protocol, the registry, and helpers shared by the recipes."""

from __future__ import annotations

import re
import zlib
from abc import ABC, abstractmethod
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar, Generic, TypeVar

import numpy as np

from twinbench.corpus import Corpus, Scenario
from twinbench.normalize import normalize_option
from twinbench.records import (
    Answer,
    ChoiceQuestion,
    Expected,
    GeneratorRef,
    Item,
    Question,
    ReasonCode,
)

S = TypeVar("S")
T = TypeVar("T")


@dataclass(frozen=True)
class Pair:
    """An unanswerable item and its answerable twin."""

    item: Item
    twin: Item


@dataclass(frozen=True)
class Pool:
    """The corpus and the base scenarios this generator may use (the build partitions them)."""

    corpus: Corpus
    scenarios: list[Scenario] = field(default_factory=list)


class Generator(ABC, Generic[S]):
    """One construction recipe for one family."""

    name: ClassVar[str]
    version: ClassVar[str]
    family: ClassVar[ReasonCode]
    #: whether the build shuffles the sources (False keeps a stratified order from sources())
    shuffle_sources: ClassVar[bool] = True
    #: why this generator is left out of the default build (None: it is in it)
    retired: ClassVar[str | None] = None

    def __init__(self, pool: Pool) -> None:
        self.pool = pool

    @abstractmethod
    def sources(self) -> Sequence[S]:
        """The corpus records this generator can edit, in a stable order."""

    @abstractmethod
    def source_key(self, source: S) -> str:
        """A stable key naming a source (used in ids and seeds)."""

    @abstractmethod
    def generate(self, source: S, seed: int) -> Pair:
        """Build the pair for `source`; all randomness comes from default_rng(seed)."""

    @abstractmethod
    def validity(self, pair: Pair) -> list[str]:
        """What is wrong with a generated pair (empty when it is valid)."""

    # helpers for subclasses -------------------------------------------------------------

    def pair(
        self,
        key: str,
        seed: int,
        *,
        item: dict[str, Any],
        twin: dict[str, Any],
        answer: Answer,
        provenance: dict[str, Any],
    ) -> Pair:
        """Make the two Item records; `item`/`twin` give state, question (and language)."""
        ref = GeneratorRef(name=self.name, version=self.version)
        return make_pair(
            ref, self.family, key, seed, item=item, twin=twin, answer=answer, provenance=provenance
        )


def make_pair(
    generator: GeneratorRef,
    family: ReasonCode,
    key: str,
    seed: int,
    *,
    item: dict[str, Any],
    twin: dict[str, Any],
    answer: Answer,
    provenance: dict[str, Any],
) -> Pair:
    """Build an unanswerable item `NAME:KEY:u` and its twin `NAME:KEY:t` (pair `NAME:KEY`)."""
    ids = f"{generator.name}:{key}"
    common = {"pair_id": ids, "family": family, "seed": seed, "generator": generator}
    unanswerable = Item(
        id=f"{ids}:u",
        answerable=False,
        twin_id=f"{ids}:t",
        expected=Expected(abstain=True, reason=family),
        provenance=provenance,
        **common,
        **item,
    )
    answerable = Item(
        id=f"{ids}:t",
        answerable=True,
        twin_id=f"{ids}:u",
        expected=Expected(abstain=False, answer=answer),
        provenance={"source_id": provenance.get("source_id")},
        **common,
        **twin,
    )
    return Pair(unanswerable, answerable)


REGISTRY: dict[str, type[Generator[Any]]] = {}
G = TypeVar("G", bound=type[Generator[Any]])


def register(cls: G) -> G:
    """Class decorator adding a generator to the registry under its `name`."""
    REGISTRY[cls.name] = cls
    return cls


def registered() -> list[type[Generator[Any]]]:
    """Registered generators in build order: by family (reason-code order), then by name."""
    families = list(ReasonCode)
    return sorted(REGISTRY.values(), key=lambda cls: (families.index(cls.family), cls.name))


def item_seed(seed: int, generator: str, key: str) -> int:
    """A 31-bit seed for one pair, derived from the build seed, generator and source key."""
    sequence = np.random.SeedSequence(
        [seed, zlib.crc32(generator.encode()), zlib.crc32(key.encode())]
    )
    return int(sequence.generate_state(1)[0] & 0x7FFFFFFF)


def permute_options(options: Sequence[T], seed: int, *others: Sequence[T]) -> tuple[list[T], ...]:
    """Shuffle `options` (and each of `others`, index-aligned) with one seeded permutation."""
    order = np.random.default_rng(seed).permutation(len(options))
    return tuple([list(seq)[i] for i in order] for seq in (options, *others))


def with_options(question: Question, options: list[str]) -> ChoiceQuestion:
    """A choice question like `question` with new options."""
    return ChoiceQuestion(instructions=question.instructions, options=options)


def join(sentences: Sequence[str], language: str = "en") -> str:
    """Join state sentences into the item's state text (no spaces for Chinese)."""
    return ("" if language == "zh" else " ").join(sentences)


def mentions(text: str, phrase: str) -> bool:
    """Whether `phrase` occurs in `text` as whole words after the published normalisation."""
    needle = normalize_option(phrase)
    if not needle:
        return False
    return re.search(rf"(?<!\w){re.escape(needle)}(?!\w)", normalize_option(text)) is not None


def revealing_phrases(scenario: Scenario) -> list[str]:
    """The answer string (choice questions) and the aliases: what must not survive an edit."""
    phrases = list(scenario.aliases)
    if isinstance(scenario.question, ChoiceQuestion) and isinstance(scenario.answer, str):
        phrases.append(scenario.answer)
    return phrases


def undenied(options: Sequence[str], provenance: dict[str, Any]) -> list[str]:
    """Options without a valid denying sentence in `provenance` (`denied_by`, `sentences`)."""
    return [
        o for o in options if not 0 <= provenance["denied_by"].get(o, -1) < provenance["sentences"]
    ]
