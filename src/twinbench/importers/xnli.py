"""XNLI (official `xnli.test.tsv` or `xnli.test.jsonl`, or facebook/xnli via `hf:`) into
out_of_language pairs.

The construction of `nli.import_mnli` for each premise in English (the twin) and, for every
other XNLI language, an out_of_language item: the translated premise and hypotheses, the
instructions in that language (`xnli_languages`), its translated entailment as
`answer_if_supported`, the English answer's position kept. A translation whose letters are
less than `MIN_SCRIPT_SHARE` in its language's script is skipped (the tag is confirmed by
the Unicode script share, never by a detector).

On the hub, each language is a config of premise/hypothesis/label rows in the same order;
`hf:facebook/xnli` reads the `all_languages` config, `hf:facebook/xnli:en,es,ru` those
configs (English is added when missing), and a local folder holding one subfolder per
language (`FOLDER/en`, `FOLDER/es`, ... as `save_to_disk` or parquet files) reads them all.
Hub rows are grouped by identical premise within a language, keyed by the position of the
group's first row (`row12`), the same in every language.
"""

from __future__ import annotations

from pathlib import Path

from twinbench.generators.base import Pair, item_seed, make_pair
from twinbench.generators.scripts import MIN_SCRIPT_SHARE, script_share
from twinbench.importers._common import required
from twinbench.importers.nli import MNLI_COLUMNS, questions, read_rows, triples, unusable
from twinbench.importers.xnli_languages import XNLI_LANGUAGES
from twinbench.records import GeneratorRef, ReasonCode

XNLI = GeneratorRef(name="xnli_import", version="1.1.0")
#: the columns a tab-separated XNLI file must have
XNLI_COLUMNS = ("language", *MNLI_COLUMNS)


def hub_spec(path: Path | str) -> Path | str:
    """An `hf:` spec with its configs filled in (see the module docstring); others unchanged."""
    text = str(path)
    if not text.startswith("hf:"):
        return path
    name, _, rest = text[3:].partition(":")
    config, sep, split = rest.partition(":")
    if not config:
        folder = Path(name)
        if folder.is_dir():  # a local copy: its language subfolders, or the folder itself
            config = ",".join(sorted(p.name for p in folder.iterdir() if p.name in XNLI_LANGUAGES))
        else:
            config = "all_languages"
    elif config != "all_languages" and "en" not in config.split(","):
        config = f"en,{config}"
    return f"hf:{name}:{config}{sep}{split}" if config else text


def script_ok(text: str, language: str) -> bool:
    """Whether at least MIN_SCRIPT_SHARE of the letters of `text` are in `language`'s script."""
    script = XNLI_LANGUAGES.get(language, ("", ""))[0]
    return bool(script) and script_share(text, script) >= MIN_SCRIPT_SHARE


def import_xnli(path: Path | str, seed: int) -> list[Pair]:
    """Out-of-language pairs: each non-English XNLI premise against its English twin."""
    rows = read_rows(hub_spec(path), "test", XNLI_COLUMNS, "XNLI")
    for row in rows:  # a JSON Lines row has no header to check: each must name its language
        required(row, "language", str, str(row["_where"]))
    found = triples(rows)
    pairs = []
    for (prompt, language), triple in found.items():
        english = found.get((prompt, "en"))
        if language == "en" or english is None or unusable(triple) or unusable(english):
            continue
        if not script_ok(" ".join(triple.values()), language):
            continue
        key = f"{prompt}.{language}"
        pair_seed = item_seed(seed, XNLI.name, prompt)  # same option order in every language
        _, translated_q = questions(triple, pair_seed, XNLI_LANGUAGES[language][1])
        _, english_q = questions(english, pair_seed, XNLI_LANGUAGES["en"][1])
        pairs.append(
            make_pair(
                XNLI,
                ReasonCode.OUT_OF_LANGUAGE,
                key,
                pair_seed,
                item={
                    "state": triple["premise"],
                    "question": translated_q,
                    "language": language,
                    "answer_if_supported": triple["entailment"],
                },
                twin={"state": english["premise"], "question": english_q},
                answer=english["entailment"],
                provenance={
                    "source_id": prompt,
                    "language": language,
                    "edit": f"XNLI translation into {language}",
                },
            )
        )
    return pairs
