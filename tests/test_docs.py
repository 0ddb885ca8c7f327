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
