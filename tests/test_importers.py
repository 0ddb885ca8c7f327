"""Importers read small fixture files written in each dataset's official format.

Every expected value below is worked out by hand from the fixture (see
tests/data/sources/README.md); where a seeded draw picks among candidates, the candidate set
is fixed by the fixture and the test names the draw the seed makes.
"""

from __future__ import annotations

import csv
import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from conftest import shared_data
from twinbench.cli import app
from twinbench.generators.base import Pair
from twinbench.importers import IMPORTERS
from twinbench.importers._common import distinct_options, pick_distractors
from twinbench.importers.falseqa import rebuttals, statement
from twinbench.importers.nli import hub_rows, is_json_lines
from twinbench.importers.spans import overlaps, passage_spans, span_type
from twinbench.importers.xnli import hub_spec, script_ok
from twinbench.importers.xnli_languages import XNLI_LANGUAGES
from twinbench.jsonl import InputError
from twinbench.normalize import normalize_option
from twinbench.records import ChoiceQuestion
from twinbench.validate import validate_files

SOURCES = Path(__file__).parent / "data" / "sources"
FIXTURES = {
    "squad2": "squad2-dev-mini.json",
    "mnli": "multinli-dev-mini.jsonl",
    "xnli": "xnli-test-mini.tsv",
    "falseqa": "falseqa-test-mini.csv",
}


def _options(question: object) -> list[str]:
    assert isinstance(question, ChoiceQuestion)
    return question.options


def _import(kind: str) -> list[Pair]:
    return IMPORTERS[kind](SOURCES / FIXTURES[kind], 0)


# --- no colliding options, in any importer --------------------------------------------------


def test_distinct_options_and_distractors_dedupe_by_normalised_form() -> None:
    assert distinct_options(["Normans", "normans.", "the Normans", "", "NORMANS!"]) == [
        "Normans",
        "the Normans",
    ]
    picked = pick_distractors(["normans.", "Normans", "Franks", "franks"], ["NORMANS"], 3, 0)
    assert picked == ["Franks"]


@pytest.mark.parametrize("kind", sorted(FIXTURES))
def test_no_importer_emits_options_that_collide_after_normalisation(kind: str) -> None:
    for pair in _import(kind):
        for item in (pair.item, pair.twin):
            normalised = [normalize_option(o) for o in _options(item.question)]
            assert len(set(normalised)) == len(normalised), item.id


# --- SQuAD 2.0 ------------------------------------------------------------------------------


def test_span_types_and_passage_spans() -> None:
    assert [span_type(s) for s in ["1888", "in 1888", "March 1889", "10th century", "1990s"]] == [
        "date"
    ] * 5
    assert [span_type(s) for s in ["61 metres", "forty", "3.2 square kilometres", "12"]] == [
        "number"
    ] * 4
    assert [span_type(s) for s in ["Marrow Point", "the Kelport Railway Society"]] == ["name"] * 2
    assert [span_type(s) for s in ["the pits at Ashby", "Brown trout and char"]] == ["other"] * 2
    # sentence-initial "In", "Passenger", "The" are not names; "Kelport" is (mid-sentence too)
    assert passage_spans(
        "Kelport station opened in 1888 near the docks at Kelport. In 1921 it closed. "
        "Passenger trains ran to Marrow Point."
    ) == ["Kelport", "1888", "Kelport", "1921", "Marrow Point"]
    assert passage_spans("in the 10th and 11th centuries, from the 880s") == [
        "10th",
        "10th and 11th centuries",
        "11th",
        "880s",
    ]
    assert overlaps("1888", "in 1888") and overlaps("Anders Orrin", "Anders Orrin,")
    assert not overlaps("Lake Orrin", "Anders Orrin")


def test_squad2_pairs_each_unanswerable_question_within_its_paragraph() -> None:
    pairs = _import("squad2")
    ids = "5f1a00c0e5b1a3001b0a00", "6a2b00c0e5b1a3001b0a00"
    assert [(p.item.id, p.item.provenance["twin_source_id"]) for p in pairs] == [
        (f"squad2_import:{ids[1]}05:u", f"{ids[0]}01"),  # coal? -> when did it open (dates)
        (f"squad2_import:{ids[1]}06:u", f"{ids[0]}02"),  # ferry company -> extended to (names)
        (f"squad2_import:{ids[1]}07:u", f"{ids[0]}04"),  # passengers from? -> freight until
        (f"squad2_import:{ids[1]}0b:u", f"{ids[0]}08"),  # rebuilt by -> designed by (names)
        (f"squad2_import:{ids[1]}0c:u", f"{ids[0]}09"),  # platforms added -> wagons (numbers)
        (f"squad2_import:{ids[1]}11:u", f"{ids[0]}0d"),  # how wide -> how deep (numbers)
        (f"squad2_import:{ids[1]}12:u", f"{ids[0]}0e"),  # who swam -> named after (names)
        (f"squad2_import:{ids[1]}13:u", f"{ids[0]}0f"),  # which river -> which fish
    ]
    for pair in pairs:
        assert pair.item.state == pair.twin.state  # the same paragraph
        assert _options(pair.item.question) == _options(pair.twin.question)
        assert pair.item.family == "underspecified_state"
    expected = [
        ("1888", ["1888", "1921", "1958", "1971"]),  # + plausible 1971, then 1958, 1921
        ("Marrow Point", ["Ashby", "Edith Marlow", "Kelport", "Marrow Point"]),
        ("1971", ["1888", "1921", "1958", "1971"]),
        ("Edith Marlow", ["Ashby", "Edith Marlow", "Marrow Point", "the Kelport Railway Society"]),
        ("forty", ["12", "forty", "three", "two"]),
        ("61 metres", ["14 kilometres", "3.2 square kilometres", "61 metres"]),
        ("Anders Orrin", ["Anders Orrin", "Tolby", "Varden Hills"]),
        ("Brown trout and char", ["Brown trout and char", "Tolby", "the surveyor Anders Orrin"]),
    ]
    assert [(p.twin.expected.answer, sorted(_options(p.twin.question))) for p in pairs] == expected
    assert _options(pairs[0].twin.question) == ["1921", "1958", "1971", "1888"]


def test_squad2_uses_the_plausible_answer_unless_it_names_the_gold_answer() -> None:
    pairs = {p.item.provenance["source_id"][-2:]: p for p in _import("squad2")}
    assert pairs["0b"].item.provenance["plausible_answers"] == ["the Kelport Railway Society"]
    assert "the Kelport Railway Society" in _options(pairs["0b"].item.question)
    # "Anders Orrin," normalises to the gold "Anders Orrin": dropped, not shown twice
    assert pairs["12"].item.provenance["plausible_answers"] == ["Anders Orrin,"]
    assert "Anders Orrin," not in _options(pairs["12"].item.question)
    # a span named in either question ("Lake Orrin", "Kelport") is never a distractor
    assert "Lake Orrin" not in _options(pairs["12"].item.question)
    assert "Kelport" not in _options(pairs["0b"].item.question)


def test_squad2_rejects_a_file_that_is_not_squad(tmp_path: Path) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text('{"version": "v2.0", "data": [{"title": "x", "paragraphs": [{}]}]}', "utf-8")
    with pytest.raises(InputError, match=r"not a SQuAD 2\.0 JSON file"):
        IMPORTERS["squad2"](bad, 0)


# --- MultiNLI -------------------------------------------------------------------------------


def test_mnli_swaps_the_contradiction_for_the_entailment() -> None:
    pairs = _import("mnli")
    assert [p.item.id for p in pairs] == [f"mnli_import:{n}:u" for n in (101, 102, 104)]
    museum = pairs[0]  # promptID 103 has no gold label and only one hypothesis
    assert sorted(_options(museum.item.question)) == [
        "The museum has a large sculpture garden.",
        "The museum opens at noon on Mondays.",
    ]
    assert museum.twin.expected.answer == "The museum is closed on Mondays."
    assert museum.item.family == "contradictory_options"


def test_mnli_skips_a_premise_whose_hypotheses_collide(tmp_path: Path) -> None:
    rows = (
        (SOURCES / FIXTURES["mnli"])
        .read_text("utf-8")
        .replace(
            '"sentence2": "The budget raises spending on roads."',
            '"sentence2": "the council rejected the new budget"',
        )
    )
    path = tmp_path / "mnli.jsonl"
    path.write_text(rows, "utf-8")
    assert [p.item.id for p in IMPORTERS["mnli"](path, 0)] == [
        "mnli_import:101:u",
        "mnli_import:104:u",
    ]


@pytest.mark.parametrize("name", ["multinli-dev-mini.txt", "glue-mnli-dev_matched-mini.tsv"])
def test_mnli_reads_the_tab_separated_layouts_as_the_jsonl(name: str) -> None:
    pairs = IMPORTERS["mnli"](SOURCES / name, 0)
    assert pairs == _import("mnli")
    sign = pairs[2]  # its premise opens with a quote, left as it is (no CSV quoting)
    assert sign.item.state == '"Bring your own cup," reads the sign at the café door.'
    assert sign.twin.expected.answer == "The sign asks customers to bring a cup."
    assert sorted(_options(sign.item.question)) == [
        "The café sells its own mugs.",
        "The sign tells customers to leave their cups at home.",
    ]


def test_nli_layout_is_told_by_the_first_line_when_the_name_does_not(tmp_path: Path) -> None:
    jsonl = tmp_path / "dev_matched.txt"  # JSON Lines under a TSV name
    jsonl.write_bytes(b"\xef\xbb\xbf\n" + (SOURCES / FIXTURES["mnli"]).read_bytes())
    tsv = tmp_path / "dev_matched"  # no extension
    tsv.write_bytes((SOURCES / "glue-mnli-dev_matched-mini.tsv").read_bytes())
    assert is_json_lines(jsonl) and not is_json_lines(tsv)
    assert is_json_lines(tmp_path / "broken.jsonl")  # the name decides: "invalid JSON" errors
    assert IMPORTERS["mnli"](jsonl, 0) == IMPORTERS["mnli"](tsv, 0) == _import("mnli")


# --- XNLI -----------------------------------------------------------------------------------


def test_xnli_makes_out_of_language_items_with_english_twins() -> None:
    pairs = _import("xnli")
    assert [p.item.id for p in pairs] == [f"xnli_import:7.{x}:u" for x in ("es", "ru", "zh")]
    for pair in pairs:
        assert pair.twin.language == "en"
        assert pair.twin.expected.answer == "The shop is open before six on weekdays."
        index = _options(pair.twin.question).index("The shop is open before six on weekdays.")
        assert _options(pair.item.question)[index] == pair.item.answer_if_supported
    assert [p.item.question.instructions for p in pairs] == [
        "¿Qué afirmación es verdadera según el texto?",
        "Какое утверждение верно согласно тексту?",
        "根据文本，哪个陈述是正确的？",
    ]
    assert {p.twin.question.instructions for p in pairs} == {
        "Which statement is true according to the text?"
    }


def test_xnli_reads_the_official_jsonl_as_the_tsv() -> None:
    # every key of xnli.test.jsonl is there; the file is JSON Lines, not a TSV to find columns in
    assert IMPORTERS["xnli"](SOURCES / "xnli-test-mini.jsonl", 0) == _import("xnli")


def test_xnli_instruction_table_covers_the_15_languages_in_their_scripts() -> None:
    assert sorted(XNLI_LANGUAGES) == sorted(
        ["ar", "bg", "de", "el", "en", "es", "fr", "hi", "ru", "sw", "th", "tr", "ur", "vi", "zh"]
    )
    texts = [instructions for _, instructions in XNLI_LANGUAGES.values()]
    assert len(set(texts)) == 15
    for language, (_, instructions) in XNLI_LANGUAGES.items():
        assert script_ok(instructions, language), language
    assert not script_ok("Which statement is true?", "ru")


# --- FalseQA --------------------------------------------------------------------------------


def test_falseqa_pairs_row_i_with_row_i_plus_half() -> None:
    pairs = _import("falseqa")
    assert [p.item.id for p in pairs] == [f"falseqa_import:0000{i}:u" for i in range(6)]
    assert [p.item.provenance["source_rows"] for p in pairs] == [[i, i + 9] for i in range(6)]
    trees = pairs[0]
    assert trees.item.question.instructions == "How many eyes does a tree have?"
    assert trees.twin.question.instructions == "How many eyes does a spider usually have?"
    assert trees.twin.expected.answer == "Most spiders have eight eyes."
    assert trees.item.state == (
        "Trees have no eyes. Most spiders have eight eyes. Neil Armstrong landed on the moon in "
        "1969. A gas stove flame is usually blue."
    )
    assert trees.item.provenance["rebuttals"] == [
        "Trees have no eyes.",
        "A tree is a plant, and plants do not have eyes; they sense light with photoreceptor "
        "proteins.",
        "Trees do not have eyes.",
    ]
    assert _options(trees.item.question) == [
        "Most spiders have eight eyes.",
        "A gas stove flame is usually blue.",
        "Neil Armstrong landed on the moon in 1969.",
    ]
    # the rebuttal with an apostrophe is a double-quoted string inside the list
    assert pairs[3].item.provenance["rebuttals"][2] == (
        "Einstein didn't land on the moon; Neil Armstrong was the first person on the moon."
    )


def test_falseqa_options_are_statements_and_every_option_is_in_the_state() -> None:
    pairs = _import("falseqa")
    for pair in pairs:
        options = _options(pair.twin.question)
        assert _options(pair.item.question) == options and pair.item.state == pair.twin.state
        assert pair.twin.expected.answer in options
        assert all(len(option.split()) >= 4 for option in options)  # never "Three." or "In 1889."
        assert all(option in pair.twin.state for option in options)  # not the gold alone
    # the gold ends the state by the draw, not always (it did in every pair of version 2)
    ends = [p.twin.state.endswith(p.twin.expected.answer) for p in pairs]
    assert ends == [False, False, True, True, False, True]


def test_falseqa_drops_yes_no_and_skips_answers_that_are_no_statement() -> None:
    pairs = _import("falseqa")
    penguins = pairs[4]
    assert penguins.twin.expected.answer == "Penguins swim and dive to catch fish and krill."
    assert penguins.item.provenance["true_answer"] == (
        "Yes, penguins swim and dive to catch fish and krill."
    )
    options = {o for p in pairs for o in _options(p.item.question)}
    assert not [o for o in options if normalize_option(o).split()[0] in ("yes", "no")]
    # rows 6-8 answer "Three.", "In 1889." and "Yes, they are.": no pair, never an option
    assert max(p.item.provenance["source_rows"][0] for p in pairs) == 5
    assert statement("Yes, penguins swim and dive.") == "Penguins swim and dive."
    assert statement("No,  ice floats   on water.") == "Ice floats on water."
    assert [statement(a) for a in ("Three.", "In 1921.", "Yes, they are.", "")] == [None] * 4


def test_falseqa_rebuttals_are_literals_never_code() -> None:
    assert rebuttals("['No.', \"It isn't.\"]") == ["No.", "It isn't."]
    assert rebuttals("Trees have no eyes.") == ["Trees have no eyes."]
    code = "[__import__('os').getcwd()]"
    assert rebuttals(code) == [code]


def _csv(path: Path, rows: list[tuple[str, str, int]]) -> Path:
    with path.open("w", encoding="utf-8", newline="") as handle:
        writer = csv.writer(handle, lineterminator="\n")
        writer.writerow(["question", "answer", "label"])
        writer.writerows(rows)
    return path


def test_falseqa_dedupes_answers_that_normalise_alike(tmp_path: Path) -> None:
    path = _csv(
        tmp_path / "norm.csv",
        [
            ("Who founded Normandy in 1066?", "['Normandy was founded in 911.']", 1),
            ("Who ruled Normandy in 1066?", "['Normandy was ruled by a duke.']", 1),
            ("Who sailed from Norway in 1066?", "['Not only Norwegians sailed.']", 1),
            ("Who settled Normandy in 911?", "The Normans settled Normandy in 911.", 0),
            ("Who gave their name to Normandy?", "the normans settled normandy in 911", 0),
            ("Who raided England from Norway?", "The Vikings raided England from Norway.", 0),
        ],
    )
    pairs = IMPORTERS["falseqa"](path, 0)
    normans = "The Normans settled Normandy in 911."
    vikings = "The Vikings raided England from Norway."
    assert [sorted(_options(p.twin.question)) for p in pairs] == [
        [normans, vikings],
        [vikings, "the normans settled normandy in 911"],
        [normans, vikings],
    ]


def test_falseqa_reads_the_interleaved_layout_and_rejects_a_shuffled_one(tmp_path: Path) -> None:
    rows = [
        ("How many eyes does a tree have?", "Trees have no eyes.", 1),
        ("How many eyes does a spider have?", "Most spiders have eight eyes.", 0),
        ("Why do fish breathe air?", "Most fish take oxygen from water.", 1),
        ("Why do whales breathe air?", "Whales have lungs and breathe air.", 0),
    ]
    pairs = IMPORTERS["falseqa"](_csv(tmp_path / "inter.csv", rows), 0)
    assert [p.twin.question.instructions for p in pairs] == [rows[1][0], rows[3][0]]
    shuffled = _csv(tmp_path / "shuffled.csv", [rows[0], rows[2], rows[3], rows[1], rows[0]])
    with pytest.raises(InputError, match="expected the FalseQA layout"):
        IMPORTERS["falseqa"](shuffled, 0)


# --- hf: paths, on rows shaped as the hub serves them (built locally, no download) ----------

NLI_LABELS = ["entailment", "neutral", "contradiction"]


@pytest.fixture
def hf(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Any:
    """The `datasets` module, with its cache in tmp_path (skips when it is not installed)."""
    datasets = pytest.importorskip(
        "datasets", reason="hf: paths need Hugging Face `datasets` (the dev extra installs it)"
    )
    monkeypatch.setattr(datasets.config, "HF_DATASETS_CACHE", str(tmp_path / "hf-cache"))
    return datasets


def _label(datasets: Any) -> Any:
    return datasets.ClassLabel(names=NLI_LABELS)


def _mnli_hub(datasets: Any, folder: Path) -> Path:
    """nyu-mll/multi_nli's validation_matched fields, rows from the JSONL fixture, interleaved."""
    lines = (SOURCES / FIXTURES["mnli"]).read_text("utf-8").splitlines()
    official = [json.loads(line) for line in lines if line.strip()]
    rows = [
        {
            "promptID": int(r["promptID"]),
            "pairID": r["pairID"],
            "premise": r["sentence1"],
            "premise_binary_parse": "",
            "premise_parse": "",
            "hypothesis": r["sentence2"],
            "hypothesis_binary_parse": "",
            "hypothesis_parse": "",
            "genre": r["genre"],
            "label": NLI_LABELS.index(r["gold_label"]) if r["gold_label"] in NLI_LABELS else -1,
        }
        for r in [official[i] for i in (0, 3, 7, 1, 4, 8, 6, 2, 9, 5)]  # premises never contiguous
    ]
    features = datasets.Features(
        {
            **{k: datasets.Value("string") for k in rows[0] if k not in ("promptID", "label")},
            "promptID": datasets.Value("int32"),
            "label": _label(datasets),
        }
    )
    dataset = datasets.Dataset.from_list(rows, features=features)
    datasets.DatasetDict({"validation_matched": dataset}).save_to_disk(str(folder))
    return folder


XNLI_ROWS = {  # language -> (premise, entailment, neutral, contradiction) for two premises
    "en": [
        (
            "The shop closes at six on weekdays.",
            "The shop is open before six on weekdays.",
            "The shop sells fresh bread.",
            "The shop closes at nine on weekdays.",
        ),
        (
            "The bus leaves every ten minutes.",
            "Buses leave more than once an hour.",
            "The bus is always full.",
            "The bus leaves once a day.",
        ),
    ],
    "es": [
        (
            "La tienda cierra a las seis entre semana.",
            "La tienda está abierta antes de las seis entre semana.",
            "La tienda vende pan fresco.",
            "La tienda cierra a las nueve entre semana.",
        ),
        (
            "El autobús sale cada diez minutos.",
            "Los autobuses salen más de una vez por hora.",
            "El autobús siempre va lleno.",
            "El autobús sale una vez al día.",
        ),
    ],
    "ru": [
        (
            "Магазин закрывается в шесть по будним дням.",
            "Магазин открыт до шести по будним дням.",
            "Магазин продаёт свежий хлеб.",
            "Магазин закрывается в девять по будним дням.",
        ),
        (
            "Автобус уходит каждые десять минут.",
            "Автобусы уходят чаще раза в час.",
            "Автобус всегда переполнен.",
            "Автобус уходит раз в день.",
        ),
    ],
}
#: hub order: premise 1 as entailment, neutral, contradiction; premise 2 as contradiction,
#: entailment, neutral (label ids 2, 0, 1)
XNLI_ORDER = [(0, 0), (0, 1), (0, 2), (1, 2), (1, 0), (1, 1)]


def _xnli_per_language(datasets: Any, folder: Path) -> Path:
    """facebook/xnli's per-language configs (premise, hypothesis, label), one folder each."""
    features = datasets.Features(
        {
            "premise": datasets.Value("string"),
            "hypothesis": datasets.Value("string"),
            "label": _label(datasets),
        }
    )
    for language, premises in XNLI_ROWS.items():
        rows = [
            {"premise": premises[p][0], "hypothesis": premises[p][1 + label], "label": label}
            for p, label in XNLI_ORDER
        ]
        dataset = datasets.Dataset.from_list(rows, features=features)
        datasets.DatasetDict({"test": dataset}).save_to_disk(str(folder / language))
    return folder


def _xnli_all_languages(datasets: Any, folder: Path) -> Path:
    """facebook/xnli's all_languages config: Translation premise, translated hypotheses."""
    languages = sorted(XNLI_ROWS)
    features = datasets.Features(
        {
            "premise": datasets.Translation(languages=languages),
            "hypothesis": datasets.TranslationVariableLanguages(languages=languages),
            "label": _label(datasets),
        }
    )
    rows = [
        {
            "premise": {lang: XNLI_ROWS[lang][p][0] for lang in languages},
            "hypothesis": {lang: XNLI_ROWS[lang][p][1 + label] for lang in languages},
            "label": label,
        }
        for p, label in XNLI_ORDER
    ]
    dataset = datasets.Dataset.from_list(rows, features=features)
    datasets.DatasetDict({"test": dataset}).save_to_disk(str(folder))
    return folder


def _squad_hub(datasets: Any, folder: Path) -> Path:
    """rajpurkar/squad_v2's validation rows (no plausible answers), as parquet files."""
    official = json.loads((SOURCES / FIXTURES["squad2"]).read_text("utf-8"))
    rows = [
        {
            "id": qa["id"],
            "title": article["title"],
            "context": paragraph["context"],
            "question": qa["question"],
            "answers": {
                "text": [a["text"] for a in qa["answers"]],
                "answer_start": [a["answer_start"] for a in qa["answers"]],
            },
        }
        for article in official["data"]
        for paragraph in article["paragraphs"]
        for qa in paragraph["qas"]
    ]
    folder.mkdir()
    datasets.Dataset.from_list(rows).to_parquet(str(folder / "validation-00000-of-00001.parquet"))
    return folder


def test_hf_mnli_groups_hub_rows_by_prompt_id(hf: Any, tmp_path: Path) -> None:
    pairs = IMPORTERS["mnli"](f"hf:{_mnli_hub(hf, tmp_path / 'mnli')}", 0)
    assert pairs == _import("mnli")  # the same pairs as from the official JSONL


def test_hub_rows_group_by_pair_id_or_premise() -> None:
    rows = hub_rows(
        [
            {"pairID": "31193n", "premise": "P", "hypothesis": "H", "label": 1, "_row": 0},
            {"premise": "Q", "hypothesis": "H1", "label": 0, "_config": "es", "_row": 4},
            {"premise": "Q", "hypothesis": "H2", "label": 2, "_config": "es", "_row": 5},
            {"premise": "Q", "hypothesis": "H3", "label": -1, "_config": "es", "_row": 6},
            {"premise": "Q", "hypothesis": "H4", "label": "neutral", "_config": "es", "_row": 7},
        ]
    )
    assert [(r["promptID"], r["language"], r["gold_label"]) for r in rows] == [
        ("31193", "en", "neutral"),
        ("row4", "es", "entailment"),
        ("row4", "es", "contradiction"),
        ("row4", "es", "neutral"),
    ]


def test_hf_xnli_reads_per_language_configs_and_all_languages(hf: Any, tmp_path: Path) -> None:
    expected = [f"xnli_import:row{r}.{x}:u" for x in ("es", "ru") for r in (0, 3)]
    per_language = IMPORTERS["xnli"](f"hf:{_xnli_per_language(hf, tmp_path / 'xnli')}", 0)
    assert [p.item.id for p in per_language] == expected
    shop = per_language[0]
    assert shop.item.state == "La tienda cierra a las seis entre semana."
    assert shop.item.answer_if_supported == "La tienda está abierta antes de las seis entre semana."
    assert shop.item.question.instructions == "¿Qué afirmación es verdadera según el texto?"
    assert shop.twin.expected.answer == "The shop is open before six on weekdays."
    bus = per_language[3]  # premise 2 listed contradiction first: grouped all the same
    assert bus.twin.expected.answer == "Buses leave more than once an hour."
    assert bus.item.answer_if_supported == "Автобусы уходят чаще раза в час."
    # only some configs: English is added for the twins
    only_ru = IMPORTERS["xnli"](f"hf:{tmp_path / 'xnli'}:ru", 0)
    assert [p.item.id for p in only_ru] == expected[2:]
    together = IMPORTERS["xnli"](f"hf:{_xnli_all_languages(hf, tmp_path / 'all')}", 0)
    by_id = {p.item.id: p for p in together}
    assert [by_id[p.item.id] for p in per_language] == per_language


def test_hub_spec_fills_in_the_xnli_configs() -> None:
    assert hub_spec("hf:facebook/xnli") == "hf:facebook/xnli:all_languages"
    assert hub_spec("hf:facebook/xnli:es,ru") == "hf:facebook/xnli:en,es,ru"
    assert hub_spec("hf:facebook/xnli:all_languages:validation") == (
        "hf:facebook/xnli:all_languages:validation"
    )
    assert hub_spec("data/xnli.test.tsv") == "data/xnli.test.tsv"


def test_hf_squad2_pairs_within_paragraphs_without_plausible_answers(
    hf: Any, tmp_path: Path
) -> None:
    pairs = IMPORTERS["squad2"](f"hf:{_squad_hub(hf, tmp_path / 'squad')}", 0)
    official = _import("squad2")
    assert [(p.item.id, p.item.provenance["twin_source_id"]) for p in pairs] == [
        (p.item.id, p.item.provenance["twin_source_id"]) for p in official
    ]
    assert all(p.item.provenance["plausible_answers"] == [] for p in pairs)
    assert sorted(_options(pairs[0].twin.question)) == ["1888", "1921", "1958", "1971"]


def test_hf_folder_without_the_split_is_one_clear_error(hf: Any, tmp_path: Path) -> None:
    dataset = hf.Dataset.from_list([{"question": "q", "answer": "a", "label": 1}])
    hf.DatasetDict({"train": dataset, "validation": dataset}).save_to_disk(str(tmp_path / "two"))
    with pytest.raises(InputError, match=r"no split 'test' \(the folder has train, validation\)"):
        IMPORTERS["falseqa"](f"hf:{tmp_path / 'two'}", 0)


@pytest.mark.parametrize(
    ("kind", "build", "count"),
    [("mnli", _mnli_hub, 3), ("xnli", _xnli_per_language, 4), ("squad2", _squad_hub, 8)],
)
def test_import_cli_reads_hf_folders_into_valid_benchmarks(
    hf: Any, kind: str, build: Any, count: int, tmp_path: Path, runner: CliRunner
) -> None:
    source = f"hf:{build(hf, tmp_path / kind)}"
    out = tmp_path / "out"
    result = runner.invoke(app, ["import", kind, source, "--out", str(out)])
    assert result.exit_code == 0, result.output
    assert validate_files(out / "items.jsonl") == []
    assert len((out / "items.jsonl").read_text("utf-8").splitlines()) == 2 * count


# --- the CLI writes benchmarks that validate --------------------------------------------------


@pytest.mark.parametrize(
    ("kind", "name", "count"),
    [
        ("squad2", FIXTURES["squad2"], 8),
        ("mnli", FIXTURES["mnli"], 3),
        ("mnli", "multinli-dev-mini.txt", 3),
        ("mnli", "glue-mnli-dev_matched-mini.tsv", 3),
        ("xnli", FIXTURES["xnli"], 3),
        ("xnli", "xnli-test-mini.jsonl", 3),
        ("falseqa", FIXTURES["falseqa"], 6),
    ],
)
def test_import_cli_writes_a_valid_benchmark(
    kind: str, name: str, count: int, tmp_path: Path, runner: CliRunner
) -> None:
    source = str(SOURCES / name)
    result = runner.invoke(app, ["import", kind, source, "--out", str(tmp_path)])
    assert result.exit_code == 0, result.output
    assert validate_files(tmp_path / "items.jsonl") == []
    assert len((tmp_path / "items.jsonl").read_text("utf-8").splitlines()) == 2 * count
    assert (tmp_path / "manifest.json").is_file()


def test_import_cli_writes_a_valid_arcticqa_benchmark(tmp_path: Path, runner: CliRunner) -> None:
    release = shared_data("arcticqa-v1")
    result = runner.invoke(app, ["import", "arcticqa", str(release), "--out", str(tmp_path)])
    assert result.exit_code == 0, result.output
    assert validate_files(tmp_path / "benchmark" / "items.jsonl") == []


def test_import_cli_rejects_wrong_format(tmp_path: Path, runner: CliRunner) -> None:
    result = runner.invoke(
        app, ["import", "falseqa", str(SOURCES / "squad2-dev-mini.json"), "--out", str(tmp_path)]
    )
    assert result.exit_code == 2
    assert "expected FalseQA columns question, answer, label" in result.stderr
