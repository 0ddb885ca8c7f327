"""The scripts the docs show run as they stand."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

DOCS = Path(__file__).resolve().parents[1] / "docs"


def test_the_api_page_script_runs(tmp_path: Path) -> None:
    text = (DOCS / "api.md").read_text("utf-8")
    script = re.search(r"```python\n(.*?)```", text, flags=re.S)
    assert script is not None
    lines = [line for line in script.group(1).splitlines() if line.strip()]
    assert len(lines) <= 22  # the page promises a short script (15 lines of system + 4 of job)
    done = subprocess.run(
        [sys.executable, "-c", script.group(1)], cwd=tmp_path, capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr
    recall, twin_accuracy = (float(x) for x in done.stdout.split())
    assert 0.0 <= recall <= 1.0 and 0.0 <= twin_accuracy <= 1.0
    assert (tmp_path / "runs" / "cautious" / "responses.jsonl").is_file()


ROOT = DOCS.parent


def _readme_commands() -> list[str]:
    """The README's ```bash blocks, in order (the first is the main job, the second the tests)."""
    text = (ROOT / "README.md").read_text("utf-8")
    return re.findall(r"^```bash\n(.*?)\n```$", text, flags=re.S | re.M)


def test_ci_runs_the_readme_commands_and_sets_only_the_two_skip_variables() -> None:
    main, tests = _readme_commands()[:2]
    ci = (ROOT / ".ci" / "run").read_text("utf-8")
    # CI runs both as lines of its own, exactly as the README writes them
    assert main in ci.splitlines() and tests in ci.splitlines()
    assert main.startswith("python3 -m venv .venv") and main.endswith("twinbench eval")
    # the portable llama.cpp build is the README's, not a CI setting
    assert 'CMAKE_ARGS="-DGGML_NATIVE=OFF" pip install' in tests
    assert tests.endswith("python -m pytest")
    exported = re.findall(r"^\s*export\s+(.+)$", ci, flags=re.M)
    names = {word.split("=")[0] for line in exported for word in line.split()}
    assert names == {"TWINBENCH_REQUIRE_SHARED_DATA", "TWINBENCH_REQUIRE_TOOLS"}
    # nothing else sets a build flag or an offline switch the README's commands lack
    own = [line for line in ci.splitlines() if line not in (main, tests)]
    code = "\n".join(line for line in own if not line.lstrip().startswith("#"))
    assert "CMAKE_ARGS" not in code and "OFFLINE" not in code
