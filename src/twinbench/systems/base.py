"""The System protocol, its card, the request a system sees, and response helpers."""

from __future__ import annotations

import json
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol, runtime_checkable

import orjson
from pydantic import BaseModel, ConfigDict, Field

from twinbench.records import Question, Response

#: how the `openai` adapter asks for a decision (systems/openai_compat.py)
AnswerFormat = Literal["letters", "json"]
ANSWER_FORMATS: tuple[AnswerFormat, ...] = ("letters", "json")


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
    """Options for adapters that talk to a server or need a seed (typed, not `k=v` strings).

    `timeout_s` is a deadline for one HTTP call, retries and their waits included;
    `max_reply_bytes` is where reading a reply stops (a longer reply is `invalid`).
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    base_url: str | None = None
    model: str | None = None
    api_key_env: str | None = None
    timeout_s: float = Field(30.0, gt=0, allow_inf_nan=False)
    concurrency: int = Field(4, ge=1)
    retries: int = Field(3, ge=0)
    max_reply_bytes: int = Field(8 * 1024 * 1024, ge=1024)
    seed: int = 0
    benchmark_languages: tuple[str, ...] = ("en",)
    #: the `abstain-by-form` reference's rule fitted to the benchmark (question type -> code;
    #: `fitted.form_codes`); no other system reads it
    form_codes: dict[str, str] = Field(default_factory=dict)
    #: ask an OpenAI-compatible server for the answer tokens' log-probabilities
    logprobs: bool = False
    #: the `openai` answer format; None: letters with `logprobs`, json without
    answer_format: AnswerFormat | None = None


@dataclass(frozen=True)
class Request:
    """One item as a system sees it: the state and the question (options already permuted).

    Nothing else: no family, no expected answer, nothing a system could read the label from.
    `item_id` is an opaque token of the run (`twinbench.blinding`), not the item's id: a system
    copies it into its Response, keys per-run caches by it, and never draws randomness from it.
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


#: the most bytes of `raw` a stored response keeps (its UTF-8 text; JSON text for data)
RAW_CAP = 64 * 1024


def bounded_raw(raw: Any) -> Any:
    """`raw` as stored: itself when its text is at most RAW_CAP bytes, else a marker
    `{"truncated": true, "length": bytes, "kept": RAW_CAP, "head": first RAW_CAP bytes}`."""
    if raw is None or (isinstance(raw, str) and len(raw) <= RAW_CAP // 4):
        return raw
    if isinstance(raw, str):
        text = raw
    else:
        try:
            text = orjson.dumps(raw, default=str, option=orjson.OPT_NON_STR_KEYS).decode()
        except TypeError:
            text = json.dumps(raw, default=str)
    data = text.encode("utf-8", errors="replace")
    if len(data) <= RAW_CAP:
        return raw
    head = data[:RAW_CAP].decode("utf-8", errors="ignore")
    return {"truncated": True, "length": len(data), "kept": RAW_CAP, "head": head}


def response(request: Request, system: str, status: str = "ok", **fields: Any) -> Response:
    """A Response for `request` (item, trial, permutation filled in; raw bounded)."""
    if "raw" in fields:
        fields["raw"] = bounded_raw(fields["raw"])
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
