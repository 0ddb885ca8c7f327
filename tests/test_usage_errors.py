"""Usage errors are one `error:` line naming the command, the option, the value and what is
allowed, exit 2: the style of every other twinbench error, never typer's framed panel."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from twinbench.cli import app

RUN = ["run", "-b", "bench", "-s", "always-answer", "-o", "out"]


@pytest.mark.parametrize(
    ("args", "option", "value", "allowed"),
    [
        ([*RUN, "--concurrency", "0"], "--concurrency", "0", "greater than or equal to 1"),
        ([*RUN, "--max-rps", "-1"], "--max-rps", "-1", "greater than or equal to 0.001"),
        ([*RUN, "--max-rps", "0"], "--max-rps", "0", "greater than or equal to 0.001"),
        ([*RUN, "--max-rps", "nan"], "--max-rps", "nan", ""),
        ([*RUN, "--max-tokens-per-s", "0"], "--max-tokens-per-s", "0", "greater than or equal"),
        ([*RUN, "--shards", "0"], "--shards", "0", "greater than or equal to 1"),
        ([*RUN, "--batch-size", "0"], "--batch-size", "0", "greater than or equal to 1"),
        ([*RUN, "--timeout", "0"], "--timeout", "0", "greater than or equal to 0.1"),
        ([*RUN, "--timeout", "nan"], "--timeout", "nan", ""),
        ([*RUN, "--timeout", "inf"], "--timeout", "inf", "finite"),
        ([*RUN, "--max-error-rate", "nan"], "--max-error-rate", "nan", ""),
        (["rag", "fuse", "a", "b", "--offset", "-1"], "--offset", "-1", "greater than or equal"),
        (["rag", "compare", "a", "b", "--resamples", "5"], "--resamples", "5", "100"),
        ([*RUN, "--no-such-option"], "--no-such-option", "", "No such option"),
    ],
)
def test_a_usage_error_is_one_line_naming_option_value_and_range(
    args: list[str], option: str, value: str, allowed: str
) -> None:
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 2, result.output
    lines = result.output.strip().splitlines()
    assert len(lines) == 1, result.output
    (line,) = lines
    assert line.startswith("error: ") and option in line and value in line and allowed in line
    assert "╭" not in line and "Usage:" not in line


def test_a_folder_or_missing_file_given_to_validate_is_one_line(tmp_path: Path) -> None:
    # validate's own style: one `FILE: problem` line per problem found
    for target, problem in ((tmp_path, "not a file"), (tmp_path / "none.jsonl", "no such file")):
        result = CliRunner().invoke(app, ["validate", str(target)])
        assert result.exit_code == 2
        assert result.output.strip() == f"{target}: {problem}"


def test_help_and_version_still_exit_0() -> None:
    assert CliRunner().invoke(app, ["run", "--help"]).exit_code == 0
    assert CliRunner().invoke(app, ["--version"]).exit_code == 0
