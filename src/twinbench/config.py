"""`twinbench.toml`: defaults for `twinbench eval`, so a team writes its server once.

Read from `--config PATH`, else from `twinbench.toml` in the working directory when there is
one. Only the `[eval]` table is read; every key is an `eval` option (dashes as underscores),
and an option given on the command line wins over the file:

    [eval]
    system = ["openai", "shortcut"]      # or one spec as a string
    base_url = "http://127.0.0.1:8000"   # the server root; /v1/chat/completions is added
    model = "Qwen2.5-7B-Instruct"
    api_key_env = "OPENAI_API_KEY"       # the variable's name, never the key
    concurrency = 16
    timeout = 60.0
    per_family = 120
    seed = 0

An unknown key, a wrong type or unreadable TOML is one `FILE: problem` error (exit 2).
"""

from __future__ import annotations

import tomllib
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from twinbench.jsonl import InputError, describe_validation_error

CONFIG_FILE = "twinbench.toml"


class EvalConfig(BaseModel):
    """The `[eval]` table: defaults for `twinbench eval`'s options."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    out: str | None = None
    system: str | list[str] | None = None
    seed: int | None = None
    per_family: int | None = Field(None, ge=0)
    languages: str | None = None
    base_url: str | None = None
    model: str | None = None
    api_key_env: str | None = None
    timeout: float | None = Field(None, gt=0, allow_inf_nan=False)
    concurrency: int | None = Field(None, ge=1)
    logprobs: bool | None = None
    answer_format: str | None = None

    @property
    def systems(self) -> list[str]:
        """`system` as a list (empty when the file names none)."""
        if self.system is None:
            return []
        return [self.system] if isinstance(self.system, str) else list(self.system)


def load_eval_config(path: Path | None) -> tuple[EvalConfig, Path | None]:
    """The `[eval]` table of `path` (None: ./twinbench.toml if present) and the file read."""
    chosen = path if path is not None else Path(CONFIG_FILE)
    if path is None and not chosen.is_file():
        return EvalConfig(), None
    try:
        data: dict[str, Any] = tomllib.loads(chosen.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise InputError(f"{chosen}: no such file") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise InputError(f"{chosen}: cannot read it ({exc})") from None
    except tomllib.TOMLDecodeError as exc:
        raise InputError(f"{chosen}: not valid TOML ({exc})") from None
    unknown = sorted(set(data) - {"eval"})
    if unknown:
        raise InputError(f"{chosen}: unknown table {unknown[0]!r} (only [eval] is read)")
    table = data.get("eval", {})
    if not isinstance(table, dict):
        raise InputError(f"{chosen}: `eval` must be a table ([eval])")
    try:
        return EvalConfig.model_validate(table), chosen
    except ValidationError as exc:
        raise InputError(f"{chosen}: [eval] {describe_validation_error(exc)}") from None
