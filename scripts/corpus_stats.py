"""Print the seed corpus counts as the Markdown tables in docs/corpus.md.

Usage: python scripts/corpus_stats.py
"""

from __future__ import annotations

from collections import Counter

from twinbench.corpus import load_corpus
from twinbench.generators.scripts import LANGUAGE_SCRIPTS, script_name


def main() -> None:
    corpus = load_corpus()
    domains = sorted({s.domain for s in corpus.scenarios})
    types = Counter((s.domain, s.question.type) for s in corpus.scenarios)
    print("| domain | choice | score | noul | ambiguity | contradiction | false premise |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    amb = Counter(r.domain for r in corpus.ambiguity)
    con = Counter(r.domain for r in corpus.contradiction)
    fp = Counter(r.domain for r in corpus.false_premise)
    for d in domains:
        print(
            f"| {d} | {types[(d, 'choice')]} | {types[(d, 'score')]} | {types[(d, 'noul')]} "
            f"| {amb[d]} | {con[d]} | {fp[d]} |"
        )
    total = Counter(s.question.type for s in corpus.scenarios)
    print(
        f"| **total** | {total['choice']} | {total['score']} | {total['noul']} "
        f"| {len(corpus.ambiguity)} | {len(corpus.contradiction)} "
        f"| {len(corpus.false_premise)} |"
    )
    print()
    langs = Counter(t.language for t in corpus.translations)
    print("| language | script | translated scenarios |")
    print("|---|---|---:|")
    for lang in sorted(langs):
        print(f"| {lang} | {script_name(LANGUAGE_SCRIPTS.get(lang, '?'))} | {langs[lang]} |")
    print(
        f"\n{len(corpus.scenarios)} base scenarios over {len(domains)} domains; "
        f"{len(corpus.translations)} translations of "
        f"{len({t.scenario_id for t in corpus.translations})} scenarios into {len(langs)} "
        f"languages and {len({LANGUAGE_SCRIPTS[x] for x in langs})} scripts."
    )


if __name__ == "__main__":
    main()
