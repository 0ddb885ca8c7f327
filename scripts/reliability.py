"""The tried/handled table of docs/reliability.md, from the tests that try each hostile input.

Usage: python scripts/reliability.py [--write]

Runs the hostile-input, fault and fuzz tests (pytest, JUnit XML into a temp folder) and counts,
per area, the cases tried (each test case, parametrised cases one by one) and handled (the
case passed: the test asserts exit 2 with a located one-line error, a status of its own, a
4xx reply, or an intact output set). Prints the Markdown table; with --write replaces the table
between the markers in docs/reliability.md.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DOC = ROOT / "docs" / "reliability.md"
BEGIN, END = "<!-- reliability-table:begin -->", "<!-- reliability-table:end -->"
# area -> pytest node ids (files, or file::test prefixes)
AREAS: dict[str, list[str]] = {
    "response rows and items (grade, validate, report, compare)": [
        "tests/test_integrity.py::test_grade_and_validate",
        "tests/test_integrity.py::test_a_repeated",
        "tests/test_integrity.py::test_loose_item",
        "tests/test_integrity.py::test_blank",
        "tests/test_integrity.py::test_a_byte_order",
        "tests/test_integrity.py::test_grade_reads",
    ],
    "runs and benchmarks (resume, manifest hashes, requests, output paths)": [
        "tests/test_integrity.py::test_resum",
        "tests/test_integrity.py::test_a_benchmark",
        "tests/test_integrity.py::test_requests",
        "tests/test_integrity.py::test_an_output_path",
        "tests/test_run.py",
    ],
    "output sets under kill -9 (build, report, grade --out, eval, rag import, rag retrieve, "
    "export lm-eval)": ["tests/test_kill_outputs.py"],
    "newer surfaces: build --from, merge, rag fuse, RAG records, inspect logs": [
        "tests/test_build_record.py::test_from_",
        "tests/test_shards.py::test_bad_merges",
        "tests/test_shards.py::test_a_refused_merge",
        "tests/rag/test_fusion.py::test_a_refused",
        "tests/rag/test_trec.py",
        "tests/rag/test_cases_validate.py::test_each_problem",
        "tests/integrations/test_inspect.py::test_import_refuses",
    ],
    "usage errors (one error: line naming option, value, range)": ["tests/test_usage_errors.py"],
    "importers, audit score, --costs": [
        "tests/test_bad_inputs_import.py",
        "tests/audit/test_human.py",
        "tests/metrics/test_cost_and_pairs.py",
    ],
    "annotation page (audit serve)": ["tests/audit/test_serve.py"],
    "adapters: contracts, misbehaving servers, deadlines, secrets": [
        "tests/systems/test_contracts.py",
        "tests/systems/test_http_limits.py",
        "tests/systems/test_secrets.py",
    ],
    "property tests (hypothesis, derandomized)": [
        "tests/test_fuzz.py",
        "tests/rag/test_reader_properties.py",
    ],
}


def _files(area: list[str]) -> list[str]:
    return sorted({node.split("::")[0] for node in area})


def _area_of(classname: str, name: str, areas: dict[str, list[str]]) -> str | None:
    path = classname.replace(".", "/") + ".py"
    node = f"tests/{path}::{name}" if not path.startswith("tests/") else f"{path}::{name}"
    for area, prefixes in areas.items():
        if any(node.startswith(prefix) for prefix in prefixes):
            return area
    return None


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--write", action="store_true", help="update docs/reliability.md")
    args = parser.parse_args()
    files = sorted({f for area in AREAS.values() for f in _files(area)})
    with tempfile.TemporaryDirectory() as tmp:
        report = Path(tmp) / "junit.xml"
        subprocess.run(
            [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *files,
             f"--junitxml={report}", "-o", "junit_family=xunit1"],
            cwd=ROOT,
            check=False,
        )
        tree = ET.parse(report)
    tried: Counter[str] = Counter()
    handled: Counter[str] = Counter()
    skipped: Counter[str] = Counter()
    for case in tree.iter("testcase"):
        area = _area_of(case.get("classname", ""), case.get("name", ""), AREAS)
        if area is None:
            continue
        if case.find("skipped") is not None:
            skipped[area] += 1
            continue
        tried[area] += 1
        if case.find("failure") is None and case.find("error") is None:
            handled[area] += 1
    lines = ["| area | tried | handled | skipped |", "|---|---:|---:|---:|"]
    for area in AREAS:
        lines.append(f"| {area} | {tried[area]} | {handled[area]} | {skipped[area]} |")
    total_t, total_h, total_s = sum(tried.values()), sum(handled.values()), sum(skipped.values())
    lines.append(f"| **all** | **{total_t}** | **{total_h}** | {total_s} |")
    table = "\n".join(lines)
    print(table)
    if args.write:
        text = DOC.read_text("utf-8")
        start, end = text.index(BEGIN) + len(BEGIN), text.index(END)
        DOC.write_text(text[:start] + "\n" + table + "\n" + text[end:], "utf-8")
        print(f"wrote {DOC}")


if __name__ == "__main__":
    main()
