"""`twinbench build`: deal the corpus pools, run the generators, write the benchmark folder."""

from __future__ import annotations

import shutil
import tempfile
from collections import Counter, defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from twinbench import __version__
from twinbench.build_record import (
    BuildOptions,
    BuildRecord,
    GeneratorRow,
    Split,
    generator_row,
    option_fields,
    read_build_record,
    reproduction_problems,
)
from twinbench.corpus import Corpus, load_corpus
from twinbench.errata import Errata
from twinbench.fitted import fitted_fields
from twinbench.generators import Generator, Pair, generator_classes, registered
from twinbench.generators.base import item_seed
from twinbench.generators.registry import builtin
from twinbench.item_index import INDEX_NAME, write_index
from twinbench.jsonl import InputError, sha256_file, write_json, write_jsonl
from twinbench.outputs import output_set
from twinbench.partition import partition
from twinbench.records import MANIFEST_SCHEMA, Item, ReasonCode

Progress = Callable[[str, int, int], None]
#: held out by `build --release`: one generator per family whose outputs never go public.
#: out_of_language has a single generator (translation), so holding it out would leave no
#: public slice; its outputs stay public.
RELEASE_HOLDOUT = ("reference_ambiguity", "false_premise")
#: every family's share of the default build's pairs: fixed and equal, so no family's
#: generators dominate pooled figures (before 1.1.0 translation was 60 % of all pairs)
FAMILY_SHARES: dict[str, float] = {code.value: 1 / 3 for code in ReasonCode}


@dataclass
class BuildResult:
    """What a build produced: public and held-out items, drops, and the manifest."""

    public: list[Item] = field(default_factory=list)
    holdout: list[Item] = field(default_factory=list)
    pairs: dict[str, list[Pair]] = field(default_factory=dict)
    dropped: dict[str, Counter[str]] = field(default_factory=lambda: defaultdict(Counter))
    manifest: dict[str, Any] = field(default_factory=dict)

    @property
    def record(self) -> BuildRecord:
        """The manifest's build fields, typed (what `--from` reads back)."""
        return BuildRecord.model_validate(self.manifest)


def parse_ratio(text: str) -> tuple[int, int]:
    """Parse `A:U` (answerable:unanswerable, A >= U >= 1)."""
    parts = text.split(":")
    if len(parts) != 2 or not all(p.strip().isdigit() for p in parts):
        raise InputError(f"--ratio: expected A:U with whole numbers, like 1:1 or 2:1, got {text!r}")
    answerable, unanswerable = (int(p) for p in parts)
    if unanswerable < 1 or answerable < unanswerable:
        raise InputError(
            f"--ratio: {text!r} needs A >= U >= 1 (every unanswerable item keeps its twin)"
        )
    return answerable, unanswerable


def default_generators() -> list[str]:
    """The default build's generators, in build order: twinbench's own, less retired ones."""
    return [cls.name for cls in registered() if cls.retired is None and builtin(cls)]


def _ordered(generator: Generator[Any], seed: int) -> list[Any]:
    """The generator's sources, shuffled with the build seed unless it keeps its own order."""
    sources = list(generator.sources())
    if not generator.shuffle_sources:
        return sources
    order = np.random.default_rng([seed, 2, *generator.name.encode()]).permutation(len(sources))
    return [sources[i] for i in order]


def run_generator(
    generator: Generator[Any], seed: int, per_generator: int | None, progress: Progress | None
) -> tuple[list[Pair], Counter[str]]:
    """The pairs that pass validity from the first `per_generator` sources, and the drops."""
    sources = _ordered(generator, seed)[:per_generator]
    kept: list[Pair] = []
    dropped: Counter[str] = Counter()
    for n, source in enumerate(sources, start=1):
        key = generator.source_key(source)
        pair = generator.generate(source, item_seed(seed, generator.name, key))
        if generator.validity(pair):
            dropped["validity"] += 1
        else:
            kept.append(pair)
        if progress:
            progress(generator.name, n, len(sources))
    return kept, dropped


def generate_all(
    corpus: Corpus,
    seed: int,
    per_generator: int | None,
    progress: Progress | None = None,
    generators: Sequence[str] | None = None,
) -> BuildResult:
    """Run the generators (default: the default build's); keep the pairs that pass validity."""
    return _generate(corpus, _chosen(generators), seed, per_generator, progress)


def _chosen(generators: Sequence[str] | None) -> list[type[Generator[Any]]]:
    """The generators a build runs, in build order (None: the default build's)."""
    names = list(generators) if generators is not None else default_generators()
    return generator_classes(names, "--generators")


def _generate(
    corpus: Corpus,
    classes: Sequence[type[Generator[Any]]],
    seed: int,
    per_generator: int | None,
    progress: Progress | None,
) -> BuildResult:
    result = BuildResult()
    pools = partition(corpus, seed, classes)
    for cls in classes:
        kept, dropped = run_generator(cls(pools[cls.name]), seed, per_generator, progress)
        result.pairs[cls.name] = kept
        result.dropped[cls.name].update(dropped)
    return result


def balance_families(
    pairs: dict[str, list[Pair]], per_family: int | None = None, *, by_type: bool = True
) -> dict[str, list[Pair]]:
    """Trim every family to its FAMILY_SHARES share of the pairs (at most `per_family` each).

    The family with the fewest pairs relative to its share sets the size; inside a family the
    pairs are spread as evenly as its generators allow (each keeps a prefix of its pairs).

    With `by_type` (the default build), every family also gets the same number of pairs of
    each question type (choice / score / noul): the smallest family's count for that type, so
    a type no family lacks. A rule that guesses the family from the question's form then gets
    chance and nothing more (issue 22); inside a type, each generator keeps a prefix of its
    pairs of that type.
    """
    by_family: dict[str, list[str]] = defaultdict(list)
    for name, kept in pairs.items():
        if kept:
            by_family[kept[0].item.family.value].append(name)
    if not by_family:
        return dict(pairs)
    if by_type and len(by_family) > 1:
        return _balance_types(pairs, by_family, per_family)
    totals = {f: sum(len(pairs[n]) for n in names) for f, names in by_family.items()}
    unit = min(totals[f] / FAMILY_SHARES[f] for f in totals)
    if per_family is not None:
        unit = min(unit, per_family / max(FAMILY_SHARES[f] for f in totals))
    out = {name: list(kept) for name, kept in pairs.items()}
    for family, names in by_family.items():
        target = int(unit * FAMILY_SHARES[family] + 1e-9)
        quota = _spread({n: len(pairs[n]) for n in names}, target)
        for name in names:
            out[name] = pairs[name][: quota[name]]
    return out


def _spread(available: dict[str, int], target: int) -> dict[str, int]:
    """Quotas summing to `target` (at most what is available), as even as `available` allows:
    one at a time to the generator with the smallest quota that has pairs left."""
    quota = dict.fromkeys(available, 0)
    while sum(quota.values()) < target:
        open_ = [n for n in available if quota[n] < available[n]]
        smallest = min(quota[n] for n in open_)
        quota[next(n for n in open_ if quota[n] == smallest)] += 1
    return quota


def _balance_types(
    pairs: dict[str, list[Pair]], by_family: dict[str, list[str]], per_family: int | None
) -> dict[str, list[Pair]]:
    """`balance_families` with the same question-type counts in every family."""
    if len(set(FAMILY_SHARES[f] for f in by_family)) != 1:
        raise ValueError("type balance needs equal family shares")  # equal counts per type
    available: dict[str, dict[str, Counter[str]]] = {}
    for family, names in by_family.items():
        available[family] = {n: Counter(p.item.question.type for p in pairs[n]) for n in names}
    kinds = sorted({k for gens in available.values() for c in gens.values() for k in c})
    per_kind = {
        kind: min(sum(c[kind] for c in gens.values()) for gens in available.values())
        for kind in kinds
    }
    if per_family is not None and sum(per_kind.values()) > per_family:
        per_kind = _scaled(per_kind, per_family)
    out = {name: list(kept) for name, kept in pairs.items()}
    for family, names in by_family.items():
        chosen: dict[str, set[int]] = {n: set() for n in names}
        for kind in kinds:
            quota = _spread({n: available[family][n][kind] for n in names}, per_kind[kind])
            for name in names:
                of_kind = [i for i, p in enumerate(pairs[name]) if p.item.question.type == kind]
                chosen[name].update(of_kind[: quota[name]])
        for name in names:
            out[name] = [p for i, p in enumerate(pairs[name]) if i in chosen[name]]
    return out


def _scaled(counts: dict[str, int], total: int) -> dict[str, int]:
    """`counts` scaled to sum to `total` by largest remainders (ties: the first key)."""
    whole = sum(counts.values())
    exact = {k: v * total / whole for k, v in counts.items()}
    out = {k: int(v) for k, v in exact.items()}
    for k in sorted(exact, key=lambda k: -(exact[k] - out[k]))[: total - sum(out.values())]:
        out[k] += 1
    return out


def question_types(pairs: dict[str, list[Pair]]) -> dict[str, Any]:
    """Pairs per family and question type (the mix `balance_families` makes equal), and whether
    every family has the same mix (what the manifest publishes)."""
    table: dict[str, Counter[str]] = defaultdict(Counter)
    for kept in pairs.values():
        for pair in kept:
            table[pair.item.family.value][pair.item.question.type] += 1
    per_family = {f: dict(sorted(c.items())) for f, c in sorted(table.items())}
    same = len({tuple(c.items()) for c in per_family.values()}) <= 1
    return {"same_mix": same, "pairs": per_family}


def family_shares(pairs: dict[str, list[Pair]]) -> dict[str, dict[str, float]]:
    """Pairs per family and each family's share of all pairs (what the manifest publishes)."""
    counts: Counter[str] = Counter()
    for kept in pairs.values():
        for pair in kept:
            counts[pair.item.family.value] += 1
    total = sum(counts.values()) or 1
    return {
        f: {"pairs": counts[f], "share": round(counts[f] / total, 4), "target": round(s, 4)}
        for f, s in FAMILY_SHARES.items()
    }


def _apply_ratio(pairs: Sequence[Pair], ratio: tuple[int, int]) -> list[Item]:
    """Keep every twin and the first round(n * U / A) items; the other twins go unpaired."""
    keep = round(len(pairs) * ratio[1] / ratio[0])
    items: list[Item] = []
    for n, pair in enumerate(pairs):
        if n < keep:
            items += [pair.item, pair.twin]
        else:
            unpaired = {**pair.twin.provenance, "unpaired_by_ratio": True}
            items.append(pair.twin.model_copy(update={"twin_id": None, "provenance": unpaired}))
    return items


def _drop_errata(pairs: list[Pair], errata: Errata) -> list[Pair]:
    """The pairs of which neither item is listed in `errata`."""
    return [
        p
        for p in pairs
        if not (errata.drops(p.item.id, p.item.pair_id) or errata.drops(p.twin.id, p.twin.pair_id))
    ]


def _counts(items: Sequence[Item]) -> dict[str, Any]:
    def tally(key: Callable[[Item], str]) -> dict[str, dict[str, int]]:
        table: dict[str, Counter[str]] = defaultdict(Counter)
        for item in items:
            table[key(item)]["answerable" if item.answerable else "unanswerable"] += 1
        return {k: dict(sorted(v.items())) for k, v in sorted(table.items())}

    return {
        "family": tally(lambda i: i.family.value),
        "generator": tally(lambda i: i.generator.name),
        "language": tally(lambda i: i.language),
        "question_type": tally(lambda i: i.question.type),
    }


def build(
    out: Path,
    *,
    seed: int = 0,
    per_generator: int | None = None,
    ratio: tuple[int, int] = (1, 1),
    holdout: Sequence[str] = (),
    errata: Errata | None = None,
    progress: Progress | None = None,
    strict_bound: float | None = None,
    generators: Sequence[str] | None = None,
) -> BuildResult:
    """Build a benchmark into `out` (`build_benchmark` with these options)."""
    options = BuildOptions(
        seed=seed,
        per_generator=per_generator,
        ratio=ratio,
        holdout=tuple(holdout),
        errata=errata,
        strict_bound=strict_bound,
        generators=None if generators is None else tuple(generators),
    )
    return build_benchmark(out, options, progress)


def build_benchmark(
    out: Path, options: BuildOptions, progress: Progress | None = None
) -> BuildResult:
    """Build a benchmark into `out`: items.jsonl, holdout/items.jsonl, manifest.json.

    `options.paired` builds the answer-removal benchmark instead. Families are trimmed to
    their fixed FAMILY_SHARES (`balance_families`). With `strict_bound`, the similarity audit
    runs first and the build refuses (InputError, nothing written) if a generator version's
    probe AUC exceeds the bound on any probe.
    """
    if options.paired:
        return _build_paired(out, options, progress)
    generator_classes(options.holdout, "--holdout")
    classes = _chosen(options.generators)
    result = _generate(load_corpus(), classes, options.seed, options.per_generator, progress)
    balanced = balance_families(result.pairs)
    for name, pairs in result.pairs.items():
        if len(pairs) > len(balanced[name]):
            result.dropped[name]["family_balance"] += len(pairs) - len(balanced[name])
    result.pairs = balanced
    rows: list[GeneratorRow] = []
    for cls in classes:
        pairs = result.pairs[cls.name]
        if options.errata is not None:
            kept = _drop_errata(pairs, options.errata)
            result.dropped[cls.name]["errata"] += len(pairs) - len(kept)
            result.pairs[cls.name] = pairs = kept
        split: Split = "holdout" if cls.name in options.holdout else "public"
        items = [i.model_copy(update={"split": split}) for i in _apply_ratio(pairs, options.ratio)]
        (result.holdout if split == "holdout" else result.public).extend(items)
        rows.append(generator_row(cls, split, pairs, result.dropped[cls.name]))
    if options.strict_bound is not None:
        refuse_leaky([*result.public, *result.holdout], options.strict_bound, options.seed)
    fields = option_fields(options, rows, sum(d["errata"] for d in result.dropped.values()))
    fields["family_shares"] = family_shares(result.pairs)
    fields["question_types"] = question_types(result.pairs)
    result.manifest = write_benchmark(out, result.public, result.holdout, fields)
    return result


def build_paired(out: Path, *, seed: int = 0, per_generator: int | None = None) -> BuildResult:
    """Build the answer-removal benchmark (paired present/absent protocol) into `out`."""
    return build_benchmark(out, BuildOptions(seed=seed, per_generator=per_generator, paired=True))


def _build_paired(out: Path, options: BuildOptions, progress: Progress | None) -> BuildResult:
    from twinbench.generators.answer_removal import AnswerRemoval

    unused = [
        flag
        for flag, value, default in (
            ("--ratio", options.ratio, (1, 1)),
            ("--holdout", options.holdout, ()),
            ("--errata", options.errata, None),
            ("--strict", options.strict_bound, None),
            ("--generators", options.generators, None),
        )
        if value != default
    ]
    if unused:
        raise InputError(f"--paired builds answer_removal alone; drop {', '.join(unused)}")
    seed, per_generator = options.seed, options.per_generator
    result = _generate(load_corpus(), [AnswerRemoval], seed, per_generator, progress)
    kept = result.pairs[AnswerRemoval.name]
    result.public = [item for pair in kept for item in (pair.item, pair.twin)]
    row = generator_row(AnswerRemoval, "public", kept, result.dropped[AnswerRemoval.name])
    result.manifest = write_benchmark(out, result.public, [], option_fields(options, [row], 0))
    return result


def rebuild(manifest: Path, out: Path, progress: Progress | None = None) -> BuildResult:
    """Rebuild into `out`, byte for byte, the benchmark that `manifest` describes.

    Refused (InputError, nothing written) when the installed twinbench, corpus or generator
    versions are not the ones that made it; after the build, every file must have the sha256
    the manifest records.
    """
    record = read_build_record(manifest)
    options = record.options(str(manifest))
    problems = reproduction_problems(record, str(manifest))
    if problems:
        raise InputError(f"{manifest}: cannot rebuild byte for byte: " + "; ".join(problems))
    # built aside and checked first: a refusal leaves `out` as it was (or absent)
    with tempfile.TemporaryDirectory(prefix="twinbench-rebuild-") as scratch:
        built = Path(scratch) / "benchmark"
        result = build_benchmark(built, options, progress)
        files = result.manifest["files"]
        written = list(files)  # the order build writes them: items.jsonl first
        names = sorted(
            record.files, key=lambda n: written.index(n) if n in written else len(written)
        )
        differ = [n for n in names if files.get(n) != record.files[n]]
        if differ:
            raise InputError(
                f"{manifest}: the rebuilt {', '.join(differ)} differ from the sha256 it "
                f"records (a hand-edited manifest, or a generator that is not deterministic); "
                f"nothing was written to {out}"
            )
        with output_set(out) as stage:
            for path in sorted(built.rglob("*")):
                if path.is_file():
                    shutil.copyfile(path, stage(str(path.relative_to(built))))
    return result


def write_benchmark(
    out: Path, public: Sequence[Item], holdout: Sequence[Item], fields: dict[str, Any]
) -> dict[str, Any]:
    """Write items.jsonl, its index, holdout/items.jsonl and manifest.json as one set; return
    the manifest.

    The manifest records each file's sha256, and readers check it (`run.check_manifest`). The
    index (`item_index.py`) is what a shard reads instead of every item.
    """
    names = ("items.jsonl", INDEX_NAME, "holdout/items.jsonl")
    with output_set(out) as stage:
        staged = {name: stage(name) for name in names}
        write_jsonl(staged["items.jsonl"], public)
        ids = [item.id for item in public]
        write_index(staged[INDEX_NAME], staged["items.jsonl"], ids, fitted_fields(public))
        write_jsonl(staged["holdout/items.jsonl"], holdout)
        manifest = {
            "schema": MANIFEST_SCHEMA,
            "twinbench_version": __version__,
            **fields,
            "counts": {"public": _counts(public), "holdout": _counts(holdout)},
            "files": {name: sha256_file(path) for name, path in staged.items()},
        }
        write_json(stage("manifest.json"), manifest)
    return manifest


def refuse_leaky(items: Sequence[Item], bound: float, seed: int) -> None:
    """Raise InputError naming every generator version whose probe AUC exceeds `bound`."""
    from twinbench.audit.similarity import audit_similarity, probe_auc

    report = audit_similarity(items, bound=bound, seed=seed, skip_exempt=True)
    failing = []
    for name, g in report["generators"].items():
        if not g["passes"]:
            aucs = ", ".join(f"{p} AUC {probe_auc(g, p):.2f}" for p in g["over_bound"])
            failing.append(f"{name} ({aucs})")
    if failing:
        raise InputError(
            f"--strict: similarity audit over the bound {bound:g}: " + "; ".join(failing)
        )
