"""The human audit: hand-worked statistics and a 3-annotator, two-pass round trip."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from typer.testing import CliRunner

from conftest import read_rows, write_rows
from twinbench.audit.human import (
    extend_errata,
    fleiss_kappa_yesno,
    package,
    reweighted_error,
    sample,
    threshold_analysis,
)
from twinbench.cli import app
from twinbench.jsonl import InputError


def test_fleiss_kappa_by_hand() -> None:
    # 4 items x 3 raters. Item agreement P_i = (sum n_ij^2 - 3) / 6: 1, 1, 1/3, 1/3 -> mean 2/3.
    # p(yes) = 6/12 = 0.5 -> chance agreement 0.5. kappa = (2/3 - 1/2) / (1 - 1/2) = 1/3.
    votes = np.array([[1, 1, 1], [0, 0, 0], [1, 1, 0], [1, 0, 0]])
    assert fleiss_kappa_yesno(votes) == pytest.approx(1 / 3)


def test_fleiss_kappa_is_undefined_when_every_vote_agrees() -> None:
    # chance agreement is 1, so kappa = 0/0: reported as None (null in JSON), not NaN
    assert fleiss_kappa_yesno(np.ones((5, 3), dtype=int)) is None


def test_reweighted_error_rate_by_hand() -> None:
    # stratum A: share 0.9, 1 wrong of 10; stratum B (over-drawn): share 0.1, 5 wrong of 10.
    # raw rate 6/20 = 0.30, reweighted 0.9 * 0.1 + 0.1 * 0.5 = 0.14
    wrong = np.array([True] + [False] * 9 + [True] * 5 + [False] * 5)
    strata = np.array(["A"] * 10 + ["B"] * 10)
    result = reweighted_error(wrong, strata, {"A": 0.9, "B": 0.1}, 2_000, 0)
    assert result["estimate"] == pytest.approx(0.14)
    assert result["low"] < 0.14 < result["high"]


def test_threshold_analysis_by_hand() -> None:
    # items scored 4 and 5 were audited wrong, 6, 8 and 9 right: keeping >= 6 makes no error
    values = np.array([4.0, 5, 6, 8, 9])
    wrong = np.array([True, True, False, False, False])
    result = threshold_analysis(values, wrong)
    assert (result["best_threshold"], result["errors_at_best"]) == (6.0, 0)


def test_three_annotators_two_passes_end_to_end(tmp_path: Path, runner: CliRunner) -> None:
    bench = tmp_path / "bench"
    assert runner.invoke(app, ["build", "--out", str(bench)]).exit_code == 0
    sample_file = tmp_path / "sample.jsonl"
    result = runner.invoke(
        app,
        [
            "audit",
            "sample",
            str(bench / "items.jsonl"),
            "--strata",
            "family,generator.name",
            "--n",
            "60",
            "--seed",
            "3",
            "--out",
            str(sample_file),
        ],
    )
    assert result.exit_code == 0, result.output
    drawn = read_rows(sample_file)
    # one stratum per (family, generator) of the default build: six generators
    assert len(drawn) >= 60 and len({json.dumps(d["stratum"]) for d in drawn}) == 6
    shares = {json.dumps(d["stratum"]): d["stratum_share"] for d in drawn}
    assert sum(shares.values()) == pytest.approx(1.0)
    package = tmp_path / "package"
    result = runner.invoke(
        app,
        [
            "audit",
            "package",
            str(sample_file),
            "--annotators",
            "a,b,c",
            "--out",
            str(package),
            "--seed",
            "3",
        ],
    )
    assert result.exit_code == 0, result.output
    blind = json.loads((package / "a_pass1.json").read_text())
    # pass one shows what a model sees, nothing about construction
    assert set(blind["items"][0]) == {"blind_id", "item", "twin"}
    assert set(blind["items"][0]["item"]) == {"state", "question"}
    orders = {
        a: [r["blind_id"] for r in json.loads((package / f"{a}_pass1.json").read_text())["items"]]
        for a in "abc"
    }
    assert orders["a"] != orders["b"] and sorted(orders["a"]) == sorted(orders["b"])
    # fill the pass-two verdicts: everyone agrees except on the first 3 blind ids, where a
    # and b say the item is answerable after all (majority: audited wrong)
    key = json.loads((package / "KEY.json").read_text())
    wrong_ids = sorted(key["items"])[:3]
    for annotator in "abc":
        for number in (1, 2):
            path = package / "verdicts" / f"{annotator}_pass{number}.jsonl"
            rows = read_rows(path)
            for row in rows:
                flagged = row["blind_id"] in wrong_ids and annotator in "ab"
                row["answers"] = {
                    "item_unanswerable": "no" if flagged else "yes",
                    "twin_answerable": "yes",
                    "why": "checked",
                }
            write_rows(path, rows)
    errata = tmp_path / "errata.json"
    result = runner.invoke(app, ["audit", "score", str(package), "--errata", str(errata)])
    assert result.exit_code == 0, result.output
    scored = json.loads((package / "audit-score.json").read_text())
    assert scored["audited_wrong"] == 3
    listed = json.loads(errata.read_text())
    assert listed["version"] == 1 and len(listed["entries"]) == 3
    rebuilt = tmp_path / "rebuilt"
    result = runner.invoke(app, ["build", "--out", str(rebuilt), "--errata", str(errata)])
    assert result.exit_code == 0, result.output
    ids = {r["id"] for r in read_rows(rebuilt / "items.jsonl")}
    assert not {e["item_id"] for e in listed["entries"]} & ids
    assert json.loads((rebuilt / "manifest.json").read_text())["errata"]["dropped_pairs"] == 3


# --- `audit score` on bad input: exit 2, one `FILE:LINE: problem` line, nothing written -----


def _package(tmp_path: Path) -> Path:
    """A 4-item, 3-annotator package with every pass-two verdict filled in (all yes)."""
    rows = [
        {"id": f"g:{n}:u", "twin_id": None, "pair_id": f"g:{n}", "family": "fam", "score": n,
         "state": f"State {n}.", "question": {"type": "noul", "instructions": "Is it?"}}
        for n in range(4)
    ]  # fmt: skip
    folder = tmp_path / "package"
    package(sample(rows, ["family"], 4, 0), {}, ["a", "b", "c"], folder, 0)
    for annotator in "abc":
        path = folder / "verdicts" / f"{annotator}_pass2.jsonl"
        filled = [
            {**r, "answers": {"item_unanswerable": "yes", "twin_answerable": "yes", "why": "ok"}}
            for r in read_rows(path)
        ]
        write_rows(path, filled)
    return folder


def _score_refused(runner: CliRunner, folder: Path, message: str, *extra: str) -> str:
    errata = folder.parent / "errata.json"
    before = errata.read_bytes() if errata.exists() else None
    result = runner.invoke(app, ["audit", "score", str(folder), "--errata", str(errata), *extra])
    assert result.exit_code == 2, result.output
    assert "Traceback" not in result.output
    (line,) = result.stderr.strip().splitlines()
    assert re.search(message, line), line
    assert not (folder / "audit-score.json").exists()
    assert (errata.read_bytes() if errata.exists() else None) == before
    return line


def test_a_filled_package_scores_and_extends_its_errata(tmp_path: Path, runner: CliRunner) -> None:
    folder = _package(tmp_path)
    errata = tmp_path / "errata.json"
    for version in (1, 2):
        result = runner.invoke(app, ["audit", "score", str(folder), "--errata", str(errata)])
        assert result.exit_code == 0, result.output
        assert json.loads(errata.read_text())["version"] == version


def _edit_key(folder: Path, edit: Any) -> None:
    path = folder / "KEY.json"
    key = json.loads(path.read_text("utf-8"))
    edit(key)
    path.write_text(json.dumps(key, indent=2), "utf-8")


def _first(key: dict[str, Any]) -> dict[str, Any]:
    entry: dict[str, Any] = key["items"][sorted(key["items"])[0]]
    return entry


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        (lambda k: k.pop("items"), r"KEY\.json: items: Field required$"),
        (
            lambda k: k.update(annotators="abc"),
            r"KEY\.json: annotators: Input should be a valid list$",
        ),
        (
            lambda k: _first(k).pop("stratum_share"),
            r"KEY\.json: items\.b-\w+\.stratum_share: Field required$",
        ),
        (
            lambda k: _first(k).update(stratum_share=float("nan")),
            r"KEY\.json: items\.b-\w+\.stratum_share: Input should be a finite number$",
        ),
        (
            lambda k: _first(k).update(id=7),
            r"KEY\.json: items\.b-\w+\.id: Input should be a valid string$",
        ),
    ],
    ids=["items", "annotators", "share", "nan-share", "id"],
)
def test_audit_score_names_the_bad_field_of_the_key(
    edit: Any, message: str, tmp_path: Path, runner: CliRunner
) -> None:
    folder = _package(tmp_path)
    _edit_key(folder, edit)
    _score_refused(runner, folder, message)


def test_audit_score_names_the_line_of_a_key_that_is_not_json(
    tmp_path: Path, runner: CliRunner
) -> None:
    folder = _package(tmp_path)
    path = folder / "KEY.json"
    lines = path.read_text("utf-8").splitlines()
    lines[3] += " oops"
    path.write_text("\n".join(lines), "utf-8")
    _score_refused(runner, folder, r"KEY\.json:4: invalid JSON \(")
    path.write_bytes(b'{\n"seed": 0,\n"x": "\xff"\n}')
    _score_refused(runner, folder, r"KEY\.json:3: not UTF-8 text \(byte 0xff\)$")


def _edit_verdict(folder: Path, line: int, edit: Any) -> Path:
    path = folder / "verdicts" / "b_pass2.jsonl"
    rows = read_rows(path)
    edit(rows[line - 1])
    write_rows(path, rows)
    return path


@pytest.mark.parametrize(
    ("line", "edit", "message"),
    [
        (2, lambda r: r.pop("blind_id"), r"b_pass2\.jsonl:2: missing key 'blind_id'$"),
        (3, lambda r: r.update(blind_id=3), r"b_pass2\.jsonl:3: 'blind_id' must be a string$"),
        (1, lambda r: r.update(answers=None), r"b_pass2\.jsonl:1: 'answers' must be an object$"),
        (
            4,
            lambda r: r["answers"].update(twin_answerable=None),
            r"b_pass2\.jsonl:4: twin_answerable: expected yes or no, got None$",
        ),
        (
            2,
            lambda r: r["answers"].update(item_unanswerable="maybe"),
            r"b_pass2\.jsonl:2: item_unanswerable: expected yes or no, got 'maybe'$",
        ),
    ],
    ids=["no-blind-id", "blind-id-type", "answers", "null", "maybe"],
)
def test_audit_score_names_the_line_of_a_bad_verdict(
    line: int, edit: Any, message: str, tmp_path: Path, runner: CliRunner
) -> None:
    folder = _package(tmp_path)
    _edit_verdict(folder, line, edit)
    _score_refused(runner, folder, message)


def test_audit_score_names_the_file_missing_a_verdict(tmp_path: Path, runner: CliRunner) -> None:
    folder = _package(tmp_path)
    path = folder / "verdicts" / "c_pass2.jsonl"
    write_rows(path, read_rows(path)[1:])
    _score_refused(runner, folder, r"c_pass2\.jsonl: no verdict for b-\w+ \(KEY\.json lists it\)$")
    path.unlink()
    _score_refused(runner, folder, r"c_pass2\.jsonl: no such file$")


def test_audit_score_names_a_threshold_field_that_is_not_a_number(
    tmp_path: Path, runner: CliRunner
) -> None:
    folder = _package(tmp_path)
    _edit_key(folder, lambda k: _first(k)["row"].update(score="high"))
    message = r"KEY\.json: items\.b-\w+\.row\.score: expected a number, got 'high'$"
    _score_refused(runner, folder, message, "--threshold-field", "score")


BAD_ERRATA = [
    (b'{"schema": "twinbench.errata/1",\n "version": 1,\n "entries": [}\n', r":3: invalid JSON \("),
    (
        b'{"schema": "twinbench.errata/1", "version": 0, "entries": []}',
        r": version: Input should be greater than or equal to 1$",
    ),
    (
        b'{"schema": "twinbench.errata/1", "version": 1, "entries": [{"item": "x"}]}',
        r": entries\.0\.item: Extra inputs are not permitted$",
    ),
    (
        b'{"schema": "twinbench.errata/1", "version": 1, "entries": [{"reason": "x"}]}',
        r": entries\.0: Value error, an erratum names an item_id or a pair_id \(this one "
        r"neither\)$",
    ),
    (
        b'{"schema": "twinbench.errata/1", "version": 1, "entries": [{"item_id": ""}]}',
        r": entries\.0\.item_id: String should have at least 1 character$",
    ),
    (
        b'{"schema": "other/1", "version": 1, "entries": []}',
        r": schema: Input should be 'twinbench\.errata/1'$",
    ),
    (b'{"version": 1,\n "entries": ["\xe9"]}', r":2: not UTF-8 text \(byte 0xe9\)$"),
    (b"", r": file is empty \(expected one JSON document\)$"),
]


@pytest.mark.parametrize(("text", "message"), BAD_ERRATA)
def test_extend_errata_names_an_invalid_existing_file(
    text: bytes, message: str, tmp_path: Path
) -> None:
    path = tmp_path / "errata.json"
    path.write_bytes(text)
    with pytest.raises(InputError, match=re.escape(str(path)) + message):
        extend_errata(path, [])


def test_extend_errata_keeps_earlier_entries_not_listed_again(tmp_path: Path) -> None:
    path = tmp_path / "errata.json"
    assert extend_errata(path, [{"item_id": "a"}])["version"] == 1
    path.write_text(json.dumps(extend_errata(path, [{"item_id": "a"}, {"item_id": "b"}])))
    extended = extend_errata(path, [{"item_id": "b", "reason": "again"}, {"item_id": "c"}])
    assert extended["version"] == 2
    assert extended["entries"] == [
        {"item_id": "a"},
        {"item_id": "b", "reason": "again"},
        {"item_id": "c"},
    ]


def test_audit_score_refuses_an_invalid_existing_errata_file(
    tmp_path: Path, runner: CliRunner
) -> None:
    folder = _package(tmp_path)
    (tmp_path / "errata.json").write_bytes(BAD_ERRATA[0][0])
    _score_refused(runner, folder, r"errata\.json:3: invalid JSON \(")


def test_audit_score_refuses_an_existing_errata_without_ids_and_leaves_it(
    tmp_path: Path, runner: CliRunner
) -> None:
    folder = _package(tmp_path)
    errata = folder.parent / "errata.json"
    errata.write_text(
        '{"schema": "twinbench.errata/1", "version": 1, "entries": [{"reason": "x"}]}'
    )
    _score_refused(runner, folder, r"errata\.json: entries\.0: Value error, an erratum names")
