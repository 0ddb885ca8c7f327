"""A shard read through the items index is the shard of a plan of every item, and holds only
its slice: the same tasks in the same order, the same run.json, the same bytes."""

from __future__ import annotations

import hashlib
import json
import pickle
import shutil
from pathlib import Path

import orjson
import pytest

from twinbench.blinding import order_key, order_keys
from twinbench.builder import build
from twinbench.fitted import form_codes
from twinbench.item_index import INDEX_NAME, IndexedItems, write_index
from twinbench.jsonl import InputError, dumps_line, record_dict, sha256_file
from twinbench.runner import RunPlan, items_digest, load_benchmark, run
from twinbench.shards import load_shard, open_items, shard_slice, shard_slices
from twinbench.slicing import LoadedItems, SliceTasks, plan_order
from twinbench.systems import SystemOptions, make_system

TRIALS, PERMUTATIONS = 2, 3


@pytest.fixture(scope="module")
def bench(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("bench")
    build(out, per_generator=2)
    return out


def _without_index(bench: Path, out: Path) -> Path:
    """A copy of `bench` as a build before the index wrote it: no index, none in the manifest."""
    shutil.copytree(bench, out)
    (out / INDEX_NAME).unlink()
    manifest = json.loads((out / "manifest.json").read_text())
    del manifest["files"][INDEX_NAME]
    (out / "manifest.json").write_text(json.dumps(manifest))
    return out


def _keys(plan: RunPlan) -> list[tuple[str, int, int]]:
    return [(item.id, trial, permutation) for item, trial, permutation in plan.tasks()]


def _run(plan: RunPlan, out: Path) -> tuple[bytes, dict[str, object]]:
    system = make_system("always-answer:random", SystemOptions(seed=3))
    record = run(system, plan, out, seed=3)
    return (out / "responses.jsonl").read_bytes(), {
        "items": record.items,
        "items_sha256": record.items_sha256,
        "shard": record.shard,
        "responses": record.responses,
    }


def test_the_index_digest_is_the_items_digest(bench: Path) -> None:
    items = load_benchmark(bench)
    manifest = json.loads((bench / "manifest.json").read_text())
    header, *rows = (orjson.loads(line) for line in (bench / INDEX_NAME).read_bytes().splitlines())
    assert header["items_sha256"] == manifest["files"]["items.jsonl"] == items_digest(items)
    assert header["items"] == len(rows) == len(items)
    assert [row[0] for row in rows] == [item.id for item in items]
    lines = (bench / "items.jsonl").read_bytes()
    assert rows[0][1] == 0 and rows[-1][1] + rows[-1][2] == len(lines)
    _, offset, length = rows[3]
    assert lines[offset : offset + length] == dumps_line(record_dict(items[3]))
    assert header["options"] == {
        "benchmark_languages": sorted({item.language for item in items}),
        "form_codes": form_codes(items),
    }


def test_order_keys_are_the_blake2b_of_the_task_text() -> None:
    digest, ids = "ab" * 32, ["redaction:fin-018:u", "translation:x:ü"]
    text = [f"{digest}\0{i}\0{2}\0{1}".encode() for i in ids]
    expected = b"".join(hashlib.blake2b(t, digest_size=16).digest() for t in text)
    assert order_keys(digest, ids, 2, 1) == expected
    assert order_key(digest, ids[1], 2, 1) == expected[16:]


def test_plan_order_is_the_order_of_a_plan_of_every_item(bench: Path) -> None:
    items = load_benchmark(bench)
    plan = RunPlan(items, trials=TRIALS, permutations=PERMUTATIONS)
    order = plan_order(open_items(bench), TRIALS, PERMUTATIONS)
    n = len(items)
    from_numbers = [
        (items[t % n].id, t // n // PERMUTATIONS, t // n % PERMUTATIONS) for t in order.tolist()
    ]
    assert from_numbers == [(i.id, t, p) for i, t, p in plan.all_tasks()]


@pytest.mark.parametrize("count", [1, 3, 4])
def test_a_shard_read_through_the_index_equals_a_shard_of_every_item(
    bench: Path, tmp_path: Path, count: int
) -> None:
    items = load_benchmark(bench)
    old = _without_index(bench, tmp_path / "old")
    for index in range(count):
        whole = RunPlan(items, TRIALS, PERMUTATIONS, shard=(index, count))
        sliced = load_shard(bench, (index, count), TRIALS, PERMUTATIONS)
        loaded = load_shard(old, (index, count), TRIALS, PERMUTATIONS)  # no index: loads all
        assert _keys(sliced) == _keys(loaded) == _keys(whole)
        assert [i for i, _, _ in sliced.tasks()] == [i for i, _, _ in whole.tasks()]
        assert (sliced.count, sliced.digest) == (len(items), items_digest(items))
        assert sliced.task_count() == whole.task_count() == len(_keys(whole))
        ran = [_run(p, tmp_path / f"{name}{index}") for name, p in (("w", whole), ("s", sliced))]
        assert ran[0] == ran[1]
        assert ran[1][1]["shard"] == f"{index}/{count}" and ran[1][1]["items"] == len(items)


def test_a_shard_parses_only_its_slice(bench: Path, tmp_path: Path) -> None:
    """One item made invalid (the index and manifest rewritten to match): loading every item
    fails on it, the three shards without it run, the one with it names its line."""
    broken = tmp_path / "broken"
    shutil.copytree(bench, broken)
    items = load_benchmark(bench)
    victim = items[5]
    lines = (bench / "items.jsonl").read_bytes().splitlines(keepends=True)
    flag = b'"answerable":' + (b"true" if victim.answerable else b"false")
    assert lines[5].count(flag) == 1
    lines[5] = lines[5].replace(flag, b'"answerable":"no"')
    (broken / "items.jsonl").write_bytes(b"".join(lines))
    fitted = orjson.loads((bench / INDEX_NAME).read_bytes().splitlines()[0])["options"]
    write_index(broken / INDEX_NAME, broken / "items.jsonl", [i.id for i in items], fitted)
    manifest = json.loads((broken / "manifest.json").read_text())
    for name in ("items.jsonl", INDEX_NAME):
        manifest["files"][name] = sha256_file(broken / name)
    (broken / "manifest.json").write_text(json.dumps(manifest))

    with pytest.raises(InputError, match=r"items\.jsonl:6: answerable"):
        load_benchmark(broken)
    plans = [load_shard(broken, (index, 4)) for index in range(4)]  # nothing parsed yet
    holders = [plan for plan in plans if plan.part is not None and victim.id in plan.part.ids]
    assert len(holders) == 1
    for index, plan in enumerate(plans):
        assert plan.part is not None
        assert len(plan.part.lines) == plan.task_count() < len(items) / 2
        if plan is holders[0]:
            with pytest.raises(InputError, match=r"items\.jsonl:6: answerable"):
                list(plan.tasks())
        else:
            assert _run(plan, tmp_path / f"s{index}")[1]["responses"] == plan.task_count()


def test_a_slice_holds_lines_and_parses_an_item_when_its_task_is_read(bench: Path) -> None:
    plan = load_shard(bench, (1, 3), TRIALS, PERMUTATIONS)
    part = plan.part
    assert part is not None
    assert all(isinstance(line, bytes) for line in part.lines)
    assert len(set(part.ids)) == len(part.ids) < len(load_benchmark(bench))
    pending = plan.pending({next(plan.keys())})
    assert isinstance(pending, SliceTasks) and len(pending) == plan.task_count() - 1
    assert [i for i, _, _ in pending[2:4]] == [i for i, _, _ in list(plan.tasks())[3:5]]


def test_slices_pickle_small_and_partition_the_plan(bench: Path) -> None:
    items = load_benchmark(bench)
    every = RunPlan(items, TRIALS, PERMUTATIONS)
    parts = list(shard_slices(bench, 4, TRIALS, PERMUTATIONS))
    back = [pickle.loads(pickle.dumps(part)) for part in parts]
    keys = [list(RunPlan.of_slice(part).keys()) for part in back]
    together = [key for part in keys for key in part]
    assert together and sorted(together) == sorted(every.keys())  # disjoint, complete
    assert keys[3] == list(every.keys())[3::4]
    alone = shard_slice(bench, (1, 4), TRIALS, PERMUTATIONS)
    assert keys[1] == list(RunPlan.of_slice(alone).keys())
    quarter = next(shard_slices(bench, 4))  # one trial, one order: a quarter of the items
    assert len(quarter.lines) == 3 == len(items) / 4
    pickled = pickle.dumps(quarter)  # what a Ray task receives: its items' lines, no others
    lines = (bench / "items.jsonl").read_bytes().splitlines(keepends=True)
    assert [line in pickled for line in lines] == [item.id in quarter.ids for item in items]


def test_limit_and_a_file_path_load_every_item(bench: Path) -> None:
    items = load_benchmark(bench, 5)
    for source in (open_items(bench, 5), open_items(bench / "items.jsonl", 5)):
        assert isinstance(source, LoadedItems) and list(source.ids()) == [i.id for i in items]
        assert source.digest == items_digest(items)
    assert isinstance(open_items(bench), IndexedItems)
    whole = RunPlan(items, shard=(1, 2))
    assert _keys(load_shard(bench, (1, 2), limit=5)) == _keys(whole)
