"""Deal the corpus pools out among a build's generators, from the inputs each one declares.

No record feeds two generators, so no state appears in two generators' outputs (which is what
lets a held-out generator stay hidden). A generator says which pools it reads and how much of
each (`Generator.inputs`, `Reads`); this module only follows those declarations.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Sequence
from typing import Any

import numpy as np
from pydantic import BaseModel

from twinbench.corpus import Corpus
from twinbench.generators.base import CorpusPool, Generator, Pool, Reads

Readers = list[tuple[type[Generator[Any]], Reads]]


def partition(
    corpus: Corpus, seed: int, generators: Sequence[type[Generator[Any]]]
) -> dict[str, Pool]:
    """Each generator's Pool: its share of every corpus pool it declares.

    A pool read by one generator without a fixed share goes to it whole, in corpus order. A
    pool read by several is shuffled per domain with default_rng([seed, 1]) and dealt
    round-robin across domains (`deal`), then split by `split`.
    """
    readers: dict[CorpusPool, Readers] = defaultdict(list)
    for cls in generators:
        for reads in cls.inputs:
            readers[reads.pool].append((cls, reads))
    shares: dict[str, dict[CorpusPool, Sequence[BaseModel]]] = {g.name: {} for g in generators}
    for pool, group in readers.items():
        records = pool.records(corpus)
        if len(group) == 1 and group[0][1].share is None:
            shares[group[0][0].name][pool] = records
            continue
        if pool is CorpusPool.TRANSLATIONS:
            names = ", ".join(cls.name for cls, _ in group)
            raise ValueError(f"the translations pool cannot be shared ({names} read it)")
        for name, dealt in split(deal(records, seed), group).items():
            shares[name][pool] = dealt
    return {cls.name: Pool(corpus, shares[cls.name]) for cls in generators}


def deal(records: Sequence[BaseModel], seed: int) -> list[BaseModel]:
    """The records shuffled within each domain, then taken one domain at a time in turn
    (domains in name order), so that any prefix spreads over the domains."""
    rng = np.random.default_rng([seed, 1])
    by_domain: dict[str, list[BaseModel]] = defaultdict(list)
    for record in records:
        by_domain[_domain(record)].append(record)
    queues = [
        [group[i] for i in rng.permutation(len(group))] for _, group in sorted(by_domain.items())
    ]
    longest = max(map(len, queues), default=0)
    return [q[i] for i in range(longest) for q in queues if i < len(q)]


def split(dealt: Sequence[BaseModel], readers: Readers) -> dict[str, list[BaseModel]]:
    """Split dealt records among their readers.

    Each record goes to the first reader with a fixed share that `accepts` it and holds fewer
    than round(share x pool size) records; otherwise to the readers without a share that
    accept it, alternately within each domain (each reader's turn counted per domain).
    """
    fixed = [(cls, round(r.share * len(dealt))) for cls, r in readers if r.share is not None]
    even = [cls for cls, r in readers if r.share is None]
    if sum(r.share or 0 for _, r in readers) > 1 + 1e-9:
        names = ", ".join(cls.name for cls, _ in readers)
        raise ValueError(f"the fixed shares of {names} add up to more than the whole pool")
    out: dict[str, list[BaseModel]] = {cls.name: [] for cls, _ in readers}
    turn: Counter[str] = Counter()
    for record in dealt:
        taker = next(
            (cls for cls, quota in fixed if len(out[cls.name]) < quota and cls.accepts(record)),
            None,
        )
        if taker is None:
            open_ = [cls for cls in even if cls.accepts(record)]
            if not open_:
                continue
            domain = _domain(record)
            taker = open_[turn[domain] % len(open_)]
            turn[domain] += 1
        out[taker.name].append(record)
    return out


def _domain(record: BaseModel) -> str:
    domain = getattr(record, "domain", None)
    if not isinstance(domain, str):
        raise TypeError(f"a {type(record).__name__} has no domain to deal it by")
    return domain
