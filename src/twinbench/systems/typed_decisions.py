"""`typed-decisions`: the typed-decisions package, in process or through its `POST /v1/ask`.

In process (no `--base-url`) it wraps the embedded SmolLM2 in the package's own
`TransformersBackend` and `Decider`; with `--base-url` it calls a running
`python -m typed_decisions.server`. It has no abstain output: evaluate it through a gate
(`gate:typed-decisions@0.5`).
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import asdict
from typing import Any

from twinbench.jsonl import InputError
from twinbench.records import ChoiceQuestion, NoulQuestion, Response
from twinbench.systems.base import Request, SystemCard, SystemOptions, failure, response
from twinbench.systems.http import post_all


def wire_question(request: Request) -> dict[str, Any]:
    """The question in typed-decisions' wire shape `{type, instructions, criteria}`."""
    question = request.question
    wire: dict[str, Any] = {"type": question.type, "instructions": question.instructions}
    if isinstance(question, ChoiceQuestion):
        wire["criteria"] = list(question.options)
    elif not isinstance(question, NoulQuestion):
        wire["criteria"] = dict(question.legend)
    return wire


def read_answer(request: Request, answer: dict[str, Any]) -> tuple[Any, float]:
    """(typed answer, confidence) from one typed-decisions answer."""
    question = request.question
    if isinstance(question, NoulQuestion):
        p_yes = float(answer["noul"])
        return p_yes, max(p_yes, 1.0 - p_yes)
    probabilities = {str(k): float(v) for k, v in answer["probabilities"].items()}
    if isinstance(question, ChoiceQuestion):
        choice = answer["choice"]
        if choice not in question.options:
            raise ValueError(f"choice {choice!r} is not an option")
        return choice, float(answer["confidence"])
    label = max(probabilities, key=lambda k: probabilities[k])
    return question.legend[label], float(answer["confidence"])


class TypedDecisionsSystem:
    """typed-decisions' Decider (local) or server (HTTP)."""

    def __init__(self, options: SystemOptions) -> None:
        self.options = options
        self.url = options.base_url.rstrip("/") + "/v1/ask" if options.base_url else None
        self._decider: Any = None
        where = self.url or "in process on the embedded SmolLM2"
        self.card = SystemCard(
            name="typed-decisions",
            version=_version(),
            languages=("en",),
            max_options=255,
            confidences=True,
            abstains=False,
            notes=f"typed-decisions {where}; no abstain output",
        )

    def _local(self) -> Any:
        if self._decider is None:
            try:
                from typed_decisions import Calibration, Decider
                from typed_decisions.backend_impls.transformers import TransformersBackend
            except ImportError:
                raise InputError(
                    "typed-decisions is not installed: pip install 'twinbench[all]'"
                ) from None
            from twinbench.systems.local_model import load_smollm2

            model, tokenizer = load_smollm2()
            backend = TransformersBackend(model, tokenizer, "cpu")
            self._decider = Decider(
                backend, calibration=Calibration(permutations=1, contextual=False)
            )
        return self._decider

    def _typed(
        self, request: Request, answer: dict[str, Any], latency_ms: float, usage: Any = None
    ) -> Response:
        value, confidence = read_answer(request, answer)
        return response(
            request,
            self.card.name,
            abstain=False,
            answer=value,
            confidence=round(confidence, 6),
            raw=answer,
            probabilities=answer.get("probabilities"),
            latency_ms=round(latency_ms, 3),
            usage=usage,
        )

    def respond(self, requests: Sequence[Request]) -> list[Response]:
        if self.url is not None:
            url = self.url
            return post_all(
                requests,
                lambda r: url,
                lambda r: {"state": r.state, "questions": {"q": wire_question(r)}},
                lambda r, data, ms: self._typed(r, data["answers"]["q"], ms, data.get("usage")),
                self.options,
                self.card.name,
            )
        from typed_decisions.types import question_from_dict

        decider = self._local()
        out = []
        for req in requests:
            started = time.perf_counter()
            try:
                result = decider.ask(req.state, {"q": question_from_dict(wire_question(req))})
                answer = asdict(result.answers["q"])
                out.append(
                    self._typed(
                        req, answer, (time.perf_counter() - started) * 1000, asdict(result.usage)
                    )
                )
            except (ValueError, KeyError) as exc:
                out.append(failure(req, self.card.name, "rejected", str(exc), started=started))
        return out


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("typed-decisions")
    except PackageNotFoundError:
        return "not installed"


def factory(arg: str | None, options: SystemOptions) -> TypedDecisionsSystem:
    """Factory for `typed-decisions` (HTTP when --base-url is given)."""
    return TypedDecisionsSystem(options)
