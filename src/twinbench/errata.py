"""Errata: versioned lists of items audited wrong, which builds honour by dropping their pairs."""

from __future__ import annotations

from pathlib import Path
from typing import Final, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from twinbench.jsonl import InputError, check_readable, describe_validation_error

ERRATA_SCHEMA: Final = "twinbench.errata/1"


class Erratum(BaseModel):
    """One item (or whole pair) audited wrong, and why."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    item_id: str | None = Field(None, min_length=1)
    pair_id: str | None = Field(None, min_length=1)
    reason: str = ""

    @model_validator(mode="after")
    def _names_something(self) -> Erratum:
        if self.item_id is None and self.pair_id is None:
            raise ValueError("an erratum names an item_id or a pair_id (this one neither)")
        return self


class Errata(BaseModel):
    """A versioned errata file."""

    model_config = ConfigDict(extra="forbid", frozen=True, populate_by_name=True)

    schema_: Literal["twinbench.errata/1"] = Field(ERRATA_SCHEMA, alias="schema")
    version: int = Field(ge=1)
    entries: list[Erratum]

    def drops(self, item_id: str, pair_id: str) -> bool:
        """Whether an item (by its id or its pair's id) is listed."""
        return any(e.item_id == item_id or e.pair_id == pair_id for e in self.entries)


def load_errata(path: Path) -> Errata:
    """Read an errata file; errors are one line naming the file."""
    check_readable(path)
    try:
        return Errata.model_validate_json(path.read_bytes())
    except ValidationError as exc:
        raise InputError(f"{path}: {describe_validation_error(exc)}") from None
