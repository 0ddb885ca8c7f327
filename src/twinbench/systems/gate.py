"""`gate:SPEC@THRESHOLD[:CODE]`: abstain when the wrapped system's confidence is too low.

For a system without an abstain output (Jev, typed-decisions, a plain classifier) the gate is
what makes it gradable: an answer whose confidence is below the threshold becomes an abstention
with one fixed reason code (default `underspecified_state`). The card says a gate did it, with
which threshold and code, and the original answer is kept in `raw`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from twinbench.jsonl import InputError
from twinbench.records import ReasonCode, Response
from twinbench.systems.base import Request, System, SystemCard, SystemOptions


class ConfidenceGate:
    """Wraps a system; answers below `threshold` confidence become abstentions with `code`."""

    def __init__(self, inner: System, threshold: float, code: ReasonCode) -> None:
        self.inner, self.threshold, self.code = inner, threshold, code
        card = inner.card
        self.card = SystemCard(
            name=f"gate({card.name})@{threshold:g}:{code.value}",
            version=card.version,
            languages=card.languages,
            max_options=card.max_options,
            confidences=True,
            abstains=True,
            notes=(
                f"a confidence gate abstains with code {code.value} below {threshold:g}; "
                f"the wrapped system {'also abstains' if card.abstains else 'has no abstain'}"
                " output"
            ),
        )

    def respond(self, requests: Sequence[Request]) -> list[Response]:
        out = []
        for res in self.inner.respond(requests):
            gated = (
                res.status == "ok"
                and not res.abstain
                and res.confidence is not None
                and res.confidence < self.threshold
            )
            if gated:
                res = res.model_copy(
                    update={
                        "abstain": True,
                        "reason": self.code,
                        "answer": None,
                        "raw": {"gated_answer": res.answer, "inner_raw": res.raw},
                    }
                )
            out.append(res.model_copy(update={"system": self.card.name}))
        return out


def parse_gate(spec: str, options: SystemOptions, make: Callable[..., System]) -> ConfidenceGate:
    """Build a gate from `gate:SPEC@THRESHOLD[:CODE]`."""
    inner_spec, at, tail = spec.removeprefix("gate:").rpartition("@")
    threshold_text, _, code_text = tail.partition(":")
    try:
        threshold = float(threshold_text)
    except ValueError:
        threshold = -1.0
    if not at or not inner_spec or not 0.0 <= threshold <= 1.0:
        raise InputError(
            f"--system: {spec!r} must look like gate:SPEC@THRESHOLD[:CODE] with "
            "a threshold in [0, 1]"
        )
    if code_text and code_text not in ReasonCode.__members__.values():
        raise InputError(f"--system: unknown reason code {code_text!r} in {spec!r}")
    code = ReasonCode(code_text) if code_text else ReasonCode.UNDERSPECIFIED_STATE
    return ConfidenceGate(make(inner_spec, options), threshold, code)
