"""The System protocol, its card, the request a system sees, and response helpers."""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

from pydantic import BaseModel, ConfigDict, Field

from twinbench.records import Question, Response


class SystemCard(BaseModel):
    """What a system declares: identity, supported languages, limits, outputs."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str
    version: str = "0"
    languages: tuple[str, ...] = ("en",)
    max_options: int = 255
    confidences: bool = False
    abstains: bool = True
    notes: str = ""


class SystemOptions(BaseModel):
    """Options for adapters that talk to a server or need a seed (typed, not `k=v` strings)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    base_url: str | None = None
    model: str | None = None
    api_key_env: str | None = None
    timeout_s: float = Field(30.0, gt=0)
    concurrency: int = Field(4, ge=1)
    retries: int = Field(3, ge=0)
    seed: int = 0
    benchmark_languages: tuple[str, ...] = ("en",)


@dataclass(frozen=True)
class Request:
    """One item as a system sees it: the state and the question (options already permuted).

    Nothing else: no family, no expected answer, nothing a system could read the label from.
    """

    item_id: str
    state: str
    question: Question
    trial: int = 0
    permutation: int = 0
    extra: dict[str, Any] = field(default_factory=dict)


@runtime_checkable
class System(Protocol):
    """A decision system: a card and a batch call returning one Response per request."""

    card: SystemCard

    def respond(self, requests: Sequence[Request]) -> list[Response]:
        """Decide on each request; failures are statuses, never exceptions or abstentions."""
        ...


def response(request: Request, system: str, status: str = "ok", **fields: Any) -> Response:
    """A Response for `request` (item, trial, permutation filled in)."""
    return Response(
        item_id=request.item_id,
        system=system,
        trial=request.trial,
        permutation=request.permutation,
        status=status,
        **fields,
    )


def failure(
    request: Request,
    system: str,
    status: str,
    error: str,
    raw: Any = None,
    started: float | None = None,
) -> Response:
    """An invalid / rejected / error Response carrying its cause (never an abstention)."""
    latency = None if started is None else (time.perf_counter() - started) * 1000
    return response(request, system, status, error=error[:500], raw=raw, latency_ms=latency)
