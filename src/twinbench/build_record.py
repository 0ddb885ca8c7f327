"""What a build records of itself in its manifest, written and read back in this one module.

`BuildOptions` is every option of a build; `option_fields` writes them into the manifest (with
`generator_row`, the generator table) and `read_build_record` + `BuildRecord.options` read them
back, which is how `twinbench build --from manifest.json` rebuilds a benchmark byte for byte.
The generator names and the held-out ones are read from the table (`split`), so a release
build needs no flag of its own; the similarity bound and the errata entries are recorded only
when a build used them.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import numpy as np
import orjson
from pydantic import BaseModel, ConfigDict, ValidationError

from twinbench import __version__
from twinbench.corpus import corpus_dir
from twinbench.errata import Errata, Erratum
from twinbench.generators import Generator, Pair
from twinbench.generators.registry import generator_classes
from twinbench.jsonl import InputError, check_readable, describe_validation_error

#: the manifest's `protocol` of a paired (answer-present / answer-absent) build
PAIRED_PROTOCOL = "paired answer removal"


@dataclass(frozen=True)
class BuildOptions:
    """Every option of a build (`twinbench build`'s flags, less --out and --release)."""

    seed: int = 0
    #: at most this many pairs per generator (None: every source)
    per_generator: int | None = None
    #: answerable:unanswerable
    ratio: tuple[int, int] = (1, 1)
    #: generators whose outputs go only to holdout/
    holdout: tuple[str, ...] = ()
    errata: Errata | None = None
    #: refuse versions whose similarity-audit AUC exceeds it (None: no audit)
    strict_bound: float | None = None
    #: the generators to run (None: the default build's)
    generators: tuple[str, ...] | None = None
    #: build the paired answer-removal benchmark instead (seed and per_generator only)
    paired: bool = False


Split = Literal["public", "holdout"]


class _Record(BaseModel):
    model_config = ConfigDict(frozen=True)


class GeneratorRow(_Record):
    """One row of the manifest's generator table."""

    model_config = ConfigDict(extra="forbid")

    name: str
    version: str
    family: str
    split: Split
    pairs: int
    dropped: dict[str, int]
    length_ratio_item_to_twin: float | None


class RatioRecord(_Record):
    """The answerable:unanswerable ratio."""

    answerable: int
    unanswerable: int


class ErrataRecord(_Record):
    """The errata a build honoured: version, pairs dropped, and (since --from) the entries."""

    version: int
    dropped_pairs: int
    entries: list[Erratum] | None = None


class BuildRecord(_Record):
    """The manifest fields of a `twinbench build` (the rest of the manifest is ignored)."""

    model_config = ConfigDict(extra="ignore")

    twinbench_version: str
    seed: int
    per_generator: int | None
    generators: list[GeneratorRow]
    ratio: RatioRecord
    errata: ErrataRecord | None = None
    strict_bound: float | None = None
    protocol: str | None = None
    corpus: dict[str, str]
    files: dict[str, str]

    def options(self, where: str) -> BuildOptions:
        """The options that built it (InputError naming `where` if they cannot be read)."""
        errata = None
        if self.errata is not None:
            if self.errata.entries is None:
                raise InputError(
                    f"{where}: records errata version {self.errata.version} but not its "
                    "entries (made before builds recorded them); build it with --errata"
                )
            errata = Errata(version=self.errata.version, entries=self.errata.entries)
        return BuildOptions(
            seed=self.seed,
            per_generator=self.per_generator,
            ratio=(self.ratio.answerable, self.ratio.unanswerable),
            holdout=tuple(g.name for g in self.generators if g.split == "holdout"),
            errata=errata,
            strict_bound=self.strict_bound,
            generators=None if self.paired else tuple(g.name for g in self.generators),
            paired=self.paired,
        )

    @property
    def paired(self) -> bool:
        """Whether it is a paired answer-removal build."""
        return self.protocol == PAIRED_PROTOCOL


def generator_row(
    cls: type[Generator[Any]], split: Split, pairs: Sequence[Pair], dropped: Mapping[str, int]
) -> GeneratorRow:
    """The generator table's row for one generator of a build."""
    return GeneratorRow(
        name=cls.name,
        version=cls.version,
        family=cls.family.value,
        split=split,
        pairs=len(pairs),
        dropped=dict(sorted(dropped.items())),
        length_ratio_item_to_twin=length_ratio(pairs),
    )


def length_ratio(pairs: Sequence[Pair]) -> float | None:
    """The mean of item state length / twin state length (None without pairs)."""
    ratios = [len(p.item.state) / len(p.twin.state) for p in pairs if p.twin.state]
    return round(float(np.mean(ratios)), 4) if ratios else None


def option_fields(
    options: BuildOptions, rows: Sequence[GeneratorRow], errata_dropped: int
) -> dict[str, Any]:
    """The manifest fields that record `options` (with the generator table `rows`)."""
    fields: dict[str, Any] = {
        "seed": options.seed,
        "per_generator": options.per_generator,
        "generators": [row.model_dump() for row in rows],
        "ratio": {"answerable": options.ratio[0], "unanswerable": options.ratio[1]},
        "corpus": corpus_hashes(options.paired),
    }
    if options.paired:
        fields["protocol"] = PAIRED_PROTOCOL
        return fields
    fields["errata"] = None
    if options.errata is not None:
        fields["errata"] = {
            "version": options.errata.version,
            "dropped_pairs": errata_dropped,
            "entries": [e.model_dump() for e in options.errata.entries],
        }
    if options.strict_bound is not None:
        fields["strict_bound"] = options.strict_bound
    return fields


def corpus_hashes(paired: bool = False) -> dict[str, str]:
    """sha256 of the corpus files a build reads: all of them (paired: the pool it reads)."""
    from twinbench.generators.answer_removal import AnswerRemoval

    patterns = [r.pool.files for r in AnswerRemoval.inputs] if paired else ["*.jsonl"]
    paths = sorted({p for pattern in patterns for p in corpus_dir().glob(pattern)})
    return {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in paths}


def read_build_record(path: Path) -> BuildRecord:
    """The build fields of a manifest.json (InputError: unreadable, or not a build's)."""
    check_readable(path)
    try:
        raw = orjson.loads(path.read_bytes())
    except orjson.JSONDecodeError as exc:
        raise InputError(f"{path}: not JSON ({exc})") from None
    if not isinstance(raw, dict):
        raise InputError(f"{path}: not a benchmark manifest (expected a JSON object)")
    if "source" in raw:
        raise InputError(f"{path}: made by `twinbench import`; --from rebuilds builds only")
    try:
        return BuildRecord.model_validate(raw)
    except ValidationError as exc:
        problem = describe_validation_error(exc)
        raise InputError(f"{path}: not a build manifest: {problem}") from None


def reproduction_problems(record: BuildRecord, where: str) -> list[str]:
    """What differs between what made `record` and what is installed (empty: it can be
    rebuilt byte for byte): twinbench version, corpus files, generator versions."""
    problems = []
    if record.twinbench_version != __version__:
        problems.append(
            f"twinbench {record.twinbench_version} in the manifest, {__version__} installed"
        )
    installed = corpus_hashes(record.paired)
    for name in sorted(record.corpus.keys() | installed.keys()):
        made, here = record.corpus.get(name), installed.get(name)
        if made != here:
            problems.append(
                f"corpus file {name} differs ({_short(made)} in the manifest, "
                f"{_short(here)} installed)"
            )
    if record.paired:
        from twinbench.generators.answer_removal import AnswerRemoval

        versions = {AnswerRemoval.name: AnswerRemoval.version}
    else:
        names = [g.name for g in record.generators]
        versions = {cls.name: cls.version for cls in generator_classes(names, where)}
    for row in record.generators:
        if versions.get(row.name) != row.version:
            problems.append(
                f"generator {row.name} {row.version} in the manifest, "
                f"{versions.get(row.name, 'none')} installed"
            )
    return problems


def _short(digest: str | None) -> str:
    return f"sha256 {digest[:12]}…" if digest else "absent"
