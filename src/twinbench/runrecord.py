"""`run.json`: what a run folder holds, as one typed, versioned record read and written here.

Written by the runner at the start and the end of every session (and by importers for the
runs they bring); read by resume, by every command that grades (the declared languages of the
system card) and by compare (the benchmark the run used).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Final, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from twinbench.jsonl import InputError, describe_validation_error, read_json, write_json
from twinbench.systems.base import SystemCard

RUN_SCHEMA: Final = "twinbench.run/1"
RUN_FILE = "run.json"


class RunRecord(BaseModel):
    """run.json: the system card, versions, the plan (seed, trials, permutations, items and
    their sha256), the status and the counts per response status."""

    model_config = ConfigDict(extra="forbid", populate_by_name=True)

    schema_: Literal["twinbench.run/1"] = Field(RUN_SCHEMA, alias="schema")
    system: SystemCard
    status: Literal["running", "interrupted", "finished", "imported"]
    versions: dict[str, str] = Field(default_factory=dict)
    seed: int = 0
    trials: int = Field(1, ge=1)
    permutations: int = Field(1, ge=1)
    items: int | None = Field(None, ge=0)
    items_sha256: str | None = None
    benchmark: str | None = None
    resumed_from: int = Field(0, ge=0)
    sent_this_session: int | None = Field(None, ge=0)
    seconds_this_session: float | None = Field(None, ge=0)
    counts: dict[str, int] | None = None
    responses: int | None = Field(None, ge=0)
    source: str | None = None
    #: "I/N": this run is slice I of N of the plan (task positions p with p % N == I)
    shard: str | None = Field(None, pattern=r"^\d+/\d+$")
    #: the shard folders a merged run was made from, in shard order
    merged_from: list[str] | None = None
    #: `error` rows dropped and sent again on resume, over every session
    resent_errors: int = Field(0, ge=0)
    #: share of the rows that are `error` or `invalid` (set when a session finishes)
    failure_rate: float | None = Field(None, ge=0, le=1)
    #: why the run failed its --max-error-rate (None: it did not)
    failed: str | None = None
    #: a run spread over processes (shards, Ray): the whole run's limits (`whole_run`), how
    #: many processes share them and this process's exact share (`runner.split_limits`)
    limits: dict[str, Any] | None = None

    @field_validator("system")
    @classmethod
    def _declares_languages(cls, card: SystemCard) -> SystemCard:
        if not card.languages or not all(code.strip() for code in card.languages):
            raise ValueError("system.languages must be a non-empty list of language codes")
        return card

    @property
    def languages(self) -> tuple[str, ...]:
        """The languages the run's system declares it supports."""
        return self.system.languages


def load_run(folder: Path) -> RunRecord | None:
    """The run.json of `folder` (None when there is none); an invalid one is an InputError."""
    path = folder / RUN_FILE
    if not path.is_file():
        return None
    data = read_json(path)
    try:
        return RunRecord.model_validate(data)
    except ValidationError as exc:
        raise InputError(f"{path}: {describe_validation_error(exc)}") from None


def write_run(folder: Path, record: RunRecord) -> None:
    """Write `folder/run.json` atomically."""
    write_json(folder / RUN_FILE, record.model_dump(mode="json", by_alias=True))
