from pathlib import Path

import pytest

from twinbench.jsonl import InputError, atomic_write, iter_json_lines, write_jsonl
from twinbench.records import Item


def test_atomic_write_leaves_nothing_on_failure(tmp_path: Path) -> None:
    target = tmp_path / "out.jsonl"
    target.write_text("old\n")
    with pytest.raises(RuntimeError), atomic_write(target) as handle:
        handle.write("half")
        raise RuntimeError("boom")
    assert target.read_text() == "old\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out.jsonl"]


def test_write_then_read_round_trip(tmp_path: Path, example_items: list[dict]) -> None:
    items = [Item.model_validate(row) for row in example_items]
    path = tmp_path / "items.jsonl"
    assert write_jsonl(path, items) == 12
    back = [obj for _, obj in iter_json_lines(path)]
    assert back == example_items


def test_reader_names_file_and_line(tmp_path: Path) -> None:
    path = tmp_path / "bad.jsonl"
    path.write_text('{"a": 1}\n\n{"a": \n')
    with pytest.raises(InputError, match=r"bad.jsonl:3: invalid JSON"):
        list(iter_json_lines(path))
