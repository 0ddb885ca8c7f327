"""`typed-decisions`: the typed-decisions package, in process or through its `POST /v1/ask`.

In process (no `--base-url`) it wraps the embedded SmolLM2 in the package's own
`TransformersBackend` and `Decider`; with `--base-url` it calls a running
`python -m typed_decisions.server`. It has no abstain output: evaluate it through a gate
(`gate:typed-decisions@0.5`). A choice item's explicit abstain option is sent as its last
criterion (the package's questions have no abstain field); choosing it is an abstention with
`contradictory_options`, the rule of `prompt.lettered`.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from concurrent.futures import Future
from dataclasses import asdict
from typing import Any

from twinbench.jsonl import InputError
from twinbench.records import ChoiceQuestion, NoulQuestion, Response
from twinbench.systems.base import Request, SystemCard, SystemOptions, failure, response
from twinbench.systems.http import HttpClient
from twinbench.systems.prompt import EXPLICIT_ABSTAIN_REASON, choice_fields, criteria_choices
from twinbench.systems.wire import OffContract, mapping, real

PATH = "/v1/ask"


def wire_question(request: Request) -> dict[str, Any]:
    """The question in typed-decisions' wire shape `{type, instructions, criteria}`."""
    question = request.question
    wire: dict[str, Any] = {"type": question.type, "instructions": question.instructions}
    if isinstance(question, ChoiceQuestion):
        wire["criteria"] = [c.text for c in criteria_choices(question)]
    elif not isinstance(question, NoulQuestion):
        wire["criteria"] = dict(question.legend)
    return wire


def read_answer(
    request: Request, answer: Any
) -> tuple[dict[str, Any], float, dict[str, float] | None]:
    """(decision fields, confidence, probabilities) from one typed-decisions answer; raises
    OffContract when a field is missing or of the wrong type (a string probability, a choice
    not an option). Choosing the explicit abstain option is an abstention, its probability
    keyed `abstain:option`."""
    answer = mapping(answer, "answer")
    question = request.question
    if isinstance(question, NoulQuestion):
        p_yes = real(answer.get("noul"), "noul")
        wire = answer.get("probabilities")
        return {"abstain": False, "answer": p_yes}, max(p_yes, 1.0 - p_yes), wire
    probabilities = mapping(answer.get("probabilities"), "probabilities")
    probabilities = {str(k): real(v, f"probability of {k!r}") for k, v in probabilities.items()}
    confidence = real(answer.get("confidence"), "confidence")
    if isinstance(question, ChoiceQuestion):
        choices = {c.text: c for c in criteria_choices(question)}
        picked = answer.get("choice")
        choice = choices.get(picked) if isinstance(picked, str) else None
        if choice is None:
            raise OffContract(f"choice {answer.get('choice')!r} is not an option")
        if set(probabilities) - set(choices):
            raise OffContract(f"probabilities keyed {sorted(probabilities)}, not the options")
        named = {choices[k].key: p for k, p in probabilities.items()}
        return choice_fields(question, choice), confidence, named
    unknown = set(probabilities) - set(question.legend)
    if unknown or not probabilities:
        raise OffContract(f"probabilities keyed {sorted(probabilities)}, not the legend labels")
    label = max(probabilities, key=lambda k: probabilities[k])
    return {"abstain": False, "answer": question.legend[label]}, confidence, probabilities


class TypedDecisionsSystem:
    """typed-decisions' Decider (local) or server (HTTP)."""

    def __init__(self, options: SystemOptions) -> None:
        self.options = options
        self.http = HttpClient(options, "typed-decisions") if options.base_url else None
        self._decider: Any = None
        where = (
            self.http.endpoint.shown(PATH) if self.http else "in process on the embedded SmolLM2"
        )
        self.card = SystemCard(
            name="typed-decisions",
            version=_version(),
            languages=("en",),
            max_options=255,
            confidences=True,
            abstains=False,
            notes=f"typed-decisions {where}; no abstain output (an item's explicit abstain "
            f"option is sent as its last criterion, and choosing it is an abstention with "
            f"{EXPLICIT_ABSTAIN_REASON.value})",
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
        decision, confidence, probabilities = read_answer(request, answer)
        return response(
            request,
            self.card.name,
            **decision,
            confidence=round(confidence, 6),
            raw=answer,
            probabilities=probabilities,
            latency_ms=round(latency_ms, 3),
            usage=usage,
        )

    def _reply(self, request: Request, data: Any, latency_ms: float) -> Response:
        data = mapping(data, "reply")
        usage = data.get("usage")
        if usage is not None:
            usage = mapping(usage, "usage")
        answer = mapping(mapping(data.get("answers"), "answers").get("q"), "answer")
        return self._typed(request, answer, latency_ms, usage)

    @property
    def streams(self) -> bool:
        """Whether this instance talks to a server (only then can calls be streamed)."""
        return self.http is not None

    def submit(self, requests: Sequence[Request]) -> list[Future[Response]]:
        """Start each server call now (streaming runs; server mode only)."""
        if self.http is None:
            raise TypeError("typed-decisions runs in-process here; use respond()")
        return self.http.submit_all(
            requests,
            lambda r: PATH,
            lambda r: {"state": r.state, "questions": {"q": wire_question(r)}},
            self._reply,
            self.card.name,
        )

    def respond(self, requests: Sequence[Request]) -> list[Response]:
        if self.http is not None:
            return self.http.post_all(
                requests,
                lambda r: PATH,
                lambda r: {"state": r.state, "questions": {"q": wire_question(r)}},
                self._reply,
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
            except OffContract as exc:
                out.append(failure(req, self.card.name, "invalid", str(exc), started=started))
            except (ValueError, KeyError) as exc:
                out.append(failure(req, self.card.name, "rejected", str(exc), started=started))
            except Exception as exc:  # the model failed (memory, a backend bug): a status
                error = f"{type(exc).__name__}: {exc}"
                out.append(failure(req, self.card.name, "error", error, started=started))
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
