"""`twinbench build`: partition the corpus, run every generator, write the benchmark folder."""

from __future__ import annotations

import hashlib
from collections import Counter, defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from twinbench import __version__
from twinbench.corpus import Corpus, Scenario, corpus_dir, load_corpus
from twinbench.errata import Errata
from twinbench.generators import REGISTRY, Generator, Pair, Pool, registered
from twinbench.generators.base import item_seed
from twinbench.jsonl import InputError, write_json, write_jsonl
from twinbench.outputs import output_set
from twinbench.records import MANIFEST_SCHEMA, ChoiceQuestion, Item, ReasonCode

#: share of the free base scenarios (choice questions only) given to exact_duplicate
DUPLICATE_SHARE = 0.33
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
    """The generators of the default build, in build order (retired ones left out)."""
    return [cls.name for cls in registered() if cls.retired is None]


def partition(
    corpus: Corpus, seed: int, generators: Sequence[str] | None = None
) -> dict[str, list[Scenario]]:
    """Split the base scenarios so no scenario (hence no state) feeds two generators.

    Translated scenarios go to `translation` (their English originals are its twins). The rest
    are shuffled per domain with `seed` and dealt round-robin across domains: choice scenarios
    to `exact_duplicate` until it holds DUPLICATE_SHARE of them, the others to `redaction`, or
    alternately to `redaction` and `rematch` within each domain when `generators` (default:
    all registered) includes rematch.
    """
    readers = (
        ("redaction", "rematch")
        if generators is None or "rematch" in generators
        else ("redaction",)
    )
    translated = {t.scenario_id for t in corpus.translations}
    rng = np.random.default_rng([seed, 1])
    by_domain: dict[str, list[Scenario]] = defaultdict(list)
    for scenario in corpus.scenarios:
        if scenario.id not in translated:
            by_domain[scenario.domain].append(scenario)
    queues = [
        [group[i] for i in rng.permutation(len(group))] for _, group in sorted(by_domain.items())
    ]
    dealt = [q[i] for i in range(max(map(len, queues), default=0)) for q in queues if i < len(q)]
    shares: dict[str, list[Scenario]] = {"redaction": [], "rematch": [], "exact_duplicate": []}
    duplicate_quota = round(DUPLICATE_SHARE * len(dealt))
    toggle: Counter[str] = Counter()
    for scenario in dealt:
        if (
            isinstance(scenario.question, ChoiceQuestion)
            and scenario.extra_option
            and (len(shares["exact_duplicate"]) < duplicate_quota)
        ):
            shares["exact_duplicate"].append(scenario)
            continue
        name = readers[toggle[scenario.domain] % len(readers)]
        toggle[scenario.domain] += 1
        shares[name].append(scenario)
    shares["translation"] = [s for s in corpus.scenarios if s.id in translated]
    return shares


def _ordered(generator: Generator[Any], seed: int) -> list[Any]:
    """The generator's sources, shuffled with the build seed unless it keeps its own order."""
    sources = list(generator.sources())
    if not generator.shuffle_sources:
        return sources
    order = np.random.default_rng([seed, 2, *generator.name.encode()]).permutation(len(sources))
    return [sources[i] for i in order]


def generate_all(
    corpus: Corpus,
    seed: int,
    per_generator: int | None,
    progress: Progress | None = None,
    generators: Sequence[str] | None = None,
) -> BuildResult:
    """Run the generators (default: the default build's); keep the pairs that pass validity."""
    result = BuildResult()
    chosen = list(generators) if generators is not None else default_generators()
    shares = partition(corpus, seed, chosen)
    for cls in registered():
        name = cls.name
        if name not in chosen:
            continue
        generator = cls(Pool(corpus, shares.get(name, [])))
        sources = _ordered(generator, seed)
        sources = sources[:per_generator] if per_generator is not None else sources
        kept: list[Pair] = []
        for n, source in enumerate(sources, start=1):
            pair = generator.generate(source, item_seed(seed, name, generator.source_key(source)))
            if generator.validity(pair):
                result.dropped[name]["validity"] += 1
            else:
                kept.append(pair)
            if progress:
                progress(name, n, len(sources))
        result.pairs[name] = kept
    return result


def balance_families(
    pairs: dict[str, list[Pair]], per_family: int | None = None
) -> dict[str, list[Pair]]:
    """Trim every family to its FAMILY_SHARES share of the pairs (at most `per_family` each).

    The family with the fewest pairs relative to its share sets the size; inside a family the
    pairs are spread as evenly as its generators allow (each keeps a prefix of its pairs).
    """
    by_family: dict[str, list[str]] = defaultdict(list)
    for name, kept in pairs.items():
        if kept:
            by_family[kept[0].item.family.value].append(name)
    if not by_family:
        return dict(pairs)
    totals = {f: sum(len(pairs[n]) for n in names) for f, names in by_family.items()}
    unit = min(totals[f] / FAMILY_SHARES[f] for f in totals)
    if per_family is not None:
        unit = min(unit, per_family / max(FAMILY_SHARES[f] for f in totals))
    out = {name: list(kept) for name, kept in pairs.items()}
    for family, names in by_family.items():
        target = int(unit * FAMILY_SHARES[family] + 1e-9)
        quota = dict.fromkeys(names, 0)
        while sum(quota.values()) < target:
            open_ = [n for n in names if quota[n] < len(pairs[n])]
            smallest = min(quota[n] for n in open_)
            quota[next(n for n in open_ if quota[n] == smallest)] += 1
        for name in names:
            out[name] = pairs[name][: quota[name]]
    return out


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


def sha256(path: Path) -> str:
    """The hex sha256 of a file."""
    return hashlib.sha256(path.read_bytes()).hexdigest()


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


def _length_ratio(pairs: Sequence[Pair]) -> float | None:
    ratios = [len(p.item.state) / len(p.twin.state) for p in pairs if p.twin.state]
    return round(float(np.mean(ratios)), 4) if ratios else None


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
    """Build a benchmark into `out`: items.jsonl, holdout/items.jsonl, manifest.json.

    Families are trimmed to their fixed FAMILY_SHARES (`balance_families`). With
    `strict_bound`, the similarity audit runs first and the build refuses (InputError, nothing
    written) if a generator version's probe AUC exceeds the bound on any probe.
    """
    for option, names in (("--holdout", holdout), ("--generators", generators or ())):
        unknown = sorted(set(names) - set(REGISTRY))
        if unknown:
            raise InputError(
                f"{option}: unknown generator {unknown[0]!r}; choose from {', '.join(REGISTRY)}"
            )
    corpus = load_corpus()
    result = generate_all(corpus, seed, per_generator, progress, generators)
    balanced = balance_families(result.pairs)
    for name, pairs in result.pairs.items():
        if len(pairs) > len(balanced[name]):
            result.dropped[name]["family_balance"] += len(pairs) - len(balanced[name])
    result.pairs = balanced
    summary = []
    for name, pairs in result.pairs.items():
        if errata is not None:
            before = len(pairs)
            pairs = [
                p
                for p in pairs
                if not (
                    errata.drops(p.item.id, p.item.pair_id)
                    or errata.drops(p.twin.id, p.twin.pair_id)
                )
            ]
            result.dropped[name]["errata"] += before - len(pairs)
            result.pairs[name] = pairs
        split = "holdout" if name in holdout else "public"
        items = [i.model_copy(update={"split": split}) for i in _apply_ratio(pairs, ratio)]
        (result.holdout if split == "holdout" else result.public).extend(items)
        cls = REGISTRY[name]
        summary.append(
            {
                "name": name,
                "version": cls.version,
                "family": cls.family.value,
                "split": split,
                "pairs": len(pairs),
                "dropped": dict(sorted(result.dropped[name].items())),
                "length_ratio_item_to_twin": _length_ratio(pairs),
            }
        )
    if strict_bound is not None:
        refuse_leaky([*result.public, *result.holdout], strict_bound, seed)
    result.manifest = write_benchmark(
        out,
        result.public,
        result.holdout,
        {
            "seed": seed,
            "per_generator": per_generator,
            "generators": summary,
            "family_shares": family_shares(result.pairs),
            "ratio": {"answerable": ratio[0], "unanswerable": ratio[1]},
            "errata": None
            if errata is None
            else {
                "version": errata.version,
                "dropped_pairs": sum(d["errata"] for d in result.dropped.values()),
            },
            "corpus": {p.name: sha256(p) for p in sorted(corpus_dir().glob("*.jsonl"))},
        },
    )
    return result


def write_benchmark(
    out: Path, public: Sequence[Item], holdout: Sequence[Item], fields: dict[str, Any]
) -> dict[str, Any]:
    """Write items.jsonl, holdout/items.jsonl and manifest.json as one set; return the manifest.

    The manifest records each file's sha256, and readers check it (`run.check_manifest`).
    """
    names = ("items.jsonl", "holdout/items.jsonl")
    with output_set(out) as stage:
        staged = {name: stage(name) for name in names}
        write_jsonl(staged["items.jsonl"], public)
        write_jsonl(staged["holdout/items.jsonl"], holdout)
        manifest = {
            "schema": MANIFEST_SCHEMA,
            "twinbench_version": __version__,
            **fields,
            "counts": {"public": _counts(public), "holdout": _counts(holdout)},
            "files": {name: sha256(path) for name, path in staged.items()},
        }
        write_json(stage("manifest.json"), manifest)
    return manifest


def build_paired(out: Path, *, seed: int = 0, per_generator: int | None = None) -> BuildResult:
    """Build the answer-removal benchmark (paired present/absent protocol) into `out`."""
    from twinbench.generators.answer_removal import AnswerRemoval

    corpus = load_corpus()
    generator = AnswerRemoval(Pool(corpus))
    result = BuildResult()
    sources = _ordered(generator, seed)[:per_generator]
    kept = []
    for source in sources:
        pair = generator.generate(
            source, item_seed(seed, generator.name, generator.source_key(source))
        )
        if generator.validity(pair):
            result.dropped[generator.name]["validity"] += 1
        else:
            kept.append(pair)
    result.pairs[generator.name] = kept
    result.public = [item for pair in kept for item in (pair.item, pair.twin)]
    result.manifest = write_benchmark(
        out,
        result.public,
        [],
        {
            "seed": seed,
            "per_generator": per_generator,
            "protocol": "paired answer removal",
            "generators": [
                {
                    "name": generator.name,
                    "version": generator.version,
                    "family": generator.family.value,
                    "split": "public",
                    "pairs": len(kept),
                    "dropped": dict(result.dropped[generator.name]),
                    "length_ratio_item_to_twin": _length_ratio(kept),
                }
            ],
            "ratio": {"answerable": 1, "unanswerable": 1},
            "corpus": {p.name: sha256(p) for p in sorted(corpus_dir().glob("contradiction.jsonl"))},
        },
    )
    return result


def refuse_leaky(items: Sequence[Item], bound: float, seed: int) -> None:
    """Raise InputError naming every generator version whose probe AUC exceeds `bound`."""
    from twinbench.audit.similarity import audit_similarity

    report = audit_similarity(items, bound=bound, seed=seed, skip_exempt=True)
    failing = []
    for name, g in report["generators"].items():
        if not g["passes"]:
            aucs = ", ".join(f"{p} AUC {g['auc'][p]['auc']:.2f}" for p in g["over_bound"])
            failing.append(f"{name} ({aucs})")
    if failing:
        raise InputError(
            f"--strict: similarity audit over the bound {bound:g}: " + "; ".join(failing)
        )
