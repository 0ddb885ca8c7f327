"""Partitioning follows what the generators declare they read; no record feeds two of them."""

from __future__ import annotations

from collections.abc import Sequence

import pytest
from pydantic import BaseModel

from twinbench.builder import default_generators
from twinbench.corpus import Corpus, load_corpus
from twinbench.generators import CorpusPool, Generator, Pair, Reads, generator_classes
from twinbench.partition import deal, partition, split
from twinbench.records import ReasonCode


@pytest.fixture(scope="module")
def corpus() -> Corpus:
    return load_corpus()


class Record(BaseModel):
    id: str
    domain: str


class _Reader(Generator[Record]):
    """A reader that split() deals to; never built."""

    version = "0"
    family = ReasonCode.UNDERSPECIFIED_STATE

    def sources(self) -> Sequence[Record]:
        return []

    def generate(self, source: Record, seed: int) -> Pair:
        raise NotImplementedError

    def validity(self, pair: Pair) -> list[str]:
        return []


class Picky(_Reader):
    """A fixed 40 % share, of the records a2, b1 and a3 only."""

    name = "picky"
    inputs = (Reads(CorpusPool.SCENARIOS, share=0.4),)

    @classmethod
    def accepts(cls, source: Record) -> bool:
        return source.id in {"a2", "b1", "a3"}


class First(_Reader):
    name = "first"
    inputs = (Reads(CorpusPool.SCENARIOS),)


class Second(_Reader):
    name = "second"
    inputs = (Reads(CorpusPool.SCENARIOS),)


def test_split_by_hand() -> None:
    # dealt a1 b1 a2 b2 a3; picky's quota is round(0.4 x 5) = 2:
    # a1: picky refuses it -> first (domain a's turn 0); b1 -> picky; a2 -> picky (now full);
    # b2: refused -> first (domain b's turn 0); a3: picky is full -> second (domain a's turn 1)
    dealt = [Record(id=i, domain=i[0]) for i in ("a1", "b1", "a2", "b2", "a3")]
    readers = [(cls, cls.inputs[0]) for cls in (Picky, First, Second)]
    out = {name: [r.id for r in records] for name, records in split(dealt, readers).items()}
    assert out == {"picky": ["b1", "a2"], "first": ["a1", "b2"], "second": ["a3"]}


def test_deal_takes_the_domains_in_turn() -> None:
    records = [Record(id=i, domain=i[0]) for i in ("b1", "a1", "a2", "b2", "a3")]
    dealt = deal(records, 0)
    assert [r.domain for r in dealt] == ["a", "b", "a", "b", "a"]
    assert sorted(r.id for r in dealt) == ["a1", "a2", "a3", "b1", "b2"]
    assert [r.id for r in deal(records, 0)] == [r.id for r in dealt]  # seeded


def test_the_default_build_deals_the_base_scenarios_as_declared(corpus: Corpus) -> None:
    classes = generator_classes(default_generators(), "test")
    pools = partition(corpus, 0, classes)
    translated = {t.scenario_id for t in corpus.translations}
    duplicate, redaction = pools["exact_duplicate"].scenarios, pools["redaction"].scenarios
    assert len(duplicate) == round(0.33 * 216) == 71  # its declared share, dealt first
    assert len(redaction) == 216 - 71  # the rest: redaction is the only reader without one
    assert {s.id for s in duplicate} | {s.id for s in redaction} == {
        s.id for s in corpus.scenarios if s.id not in translated
    }
    assert not {s.id for s in duplicate} & {s.id for s in redaction}
    # pools with a single reader go to it whole, in corpus order
    assert pools["state_contradiction"].contradiction == corpus.contradiction
    assert pools["translation"].translations == corpus.translations
    with pytest.raises(LookupError, match="the scenarios pool was not dealt"):
        _ = pools["translation"].scenarios


def test_rematch_alternates_with_redaction_within_each_domain(corpus: Corpus) -> None:
    pools = partition(corpus, 0, generator_classes(["redaction", "rematch"], "test"))
    redaction, rematch = pools["redaction"].scenarios, pools["rematch"].scenarios
    assert len(redaction) + len(rematch) == 216  # no fixed share: the whole pool is split
    for domain in {s.domain for s in redaction}:
        mine = sum(s.domain == domain for s in redaction)
        assert mine - sum(s.domain == domain for s in rematch) in (0, 1)


def test_impossible_declarations_are_refused(corpus: Corpus) -> None:
    class Greedy(First):
        name = "greedy"
        inputs = (Reads(CorpusPool.SCENARIOS, share=0.8),)

    with pytest.raises(ValueError, match="add up to more than the whole pool"):
        partition(corpus, 0, [Greedy, Picky])

    class Reader(First):
        name = "reader"
        inputs = (Reads(CorpusPool.TRANSLATIONS),)

    (translation,) = generator_classes(["translation"], "test")
    with pytest.raises(ValueError, match=r"translations pool cannot be shared \(translation, "):
        partition(corpus, 0, [translation, Reader])
