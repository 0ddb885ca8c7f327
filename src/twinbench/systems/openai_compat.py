"""`openai`: any OpenAI-compatible chat endpoint (vLLM, SGLang, llama.cpp server, Ollama, ...).

The model is asked for one JSON object `{abstain, reason, answer}` constrained by a JSON Schema
(`response_format` of type `json_schema`; servers that only know the llama.cpp form get
`{"type": "json_object", "schema": ...}` after the first refusal that names response_format).
Unparseable output, or output outside the schema, is `invalid`: exactly the keys abstain
(a boolean), reason and answer; an abstention has a known reason code and a null answer; an
answer has a null reason and is one of the listed answers, exactly as listed.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from concurrent.futures import Future
from typing import Any

from twinbench.records import NoulQuestion, ReasonCode, Response
from twinbench.systems.base import Request, SystemCard, SystemOptions, failure, response
from twinbench.systems.http import HttpClient
from twinbench.systems.prompt import ABSTAIN_TEXT, answer_choices
from twinbench.systems.wire import OffContract, flag, loads, mapping

PATH = "/chat/completions"
TOP_LOGPROBS = 10
REASON_CODES = {code.value for code in ReasonCode}

INSTRUCTIONS = (
    "You make typed decisions about a text. Reply with one JSON object: "
    '{"abstain": false, "reason": null, "answer": <one of the answers>} when the text supports '
    'one answer, or {"abstain": true, "reason": <code>, "answer": null} when it does not. '
    "Reason codes: " + "; ".join(f"{code.value} = {text}" for code, text in ABSTAIN_TEXT.items())
)


def answer_labels(request: Request) -> list[str]:
    """The strings the model may answer with: options, legend labels, or yes/no."""
    return [c.text for c in answer_choices(request.question)]


def decision_schema(request: Request, object_root: bool = True) -> dict[str, Any]:
    """The JSON Schema of a decision: an answer, or an abstention with a reason code.

    OpenAI's strict structured outputs need an object at the root, so that form allows null
    in each field; what it cannot forbid (a null answer without an abstention, an abstention
    with an answer) parses as `invalid`. The grammar-constrained llama.cpp form can say
    exactly "answer xor abstain" with anyOf.
    """
    if object_root:
        return {
            "type": "object",
            "properties": {
                "abstain": {"type": "boolean"},
                "reason": {"enum": [*(c.value for c in ReasonCode), None]},
                "answer": {"enum": [*answer_labels(request), None]},
            },
            "required": ["abstain", "reason", "answer"],
            "additionalProperties": False,
        }

    def shape(abstain: bool, reason: Any, answer: Any) -> dict[str, Any]:
        return {
            "type": "object",
            "properties": {"abstain": {"const": abstain}, "reason": reason, "answer": answer},
            "required": ["abstain", "reason", "answer"],
            "additionalProperties": False,
        }

    return {
        "anyOf": [
            shape(False, {"type": "null"}, {"enum": answer_labels(request)}),
            shape(True, {"enum": [c.value for c in ReasonCode]}, {"type": "null"}),
        ]
    }


def messages(request: Request) -> list[dict[str, str]]:
    """System and user messages for one request."""
    answers = "\n".join(f"- {label}" for label in answer_labels(request))
    user = (
        f"Text: {request.state}\n\nQuestion: {request.question.instructions}\n\n"
        f"Answers:\n{answers}\n\nReply with the JSON object only."
    )
    return [{"role": "system", "content": INSTRUCTIONS}, {"role": "user", "content": user}]


DECISION_KEYS = {"abstain", "reason", "answer"}


def _same(option: Any, answer: Any) -> bool:
    """Whether a choice's typed answer is the parsed one (a yes/no label's P(yes) is 1 or 0)."""
    if isinstance(option, bool):
        return bool(answer == (1.0 if option else 0.0))
    return bool(option == answer)


def read_decision(request: Request, data: Any) -> tuple[ReasonCode | None, Any]:
    """(reason, None) for an abstention, (None, typed answer) for an answer; raises
    OffContract for anything the object-root schema does not allow."""
    data = mapping(data, "output")
    if set(data) != DECISION_KEYS:
        raise OffContract(f"output keys are {sorted(data)}, not {sorted(DECISION_KEYS)}")
    abstain, reason, answer = flag(data["abstain"], "abstain"), data["reason"], data["answer"]
    if abstain:
        if answer is not None:
            raise OffContract("an abstention carries no answer")
        if not isinstance(reason, str) or reason not in REASON_CODES:
            raise OffContract(f"abstention with reason {reason!r}, not a known reason code")
        return ReasonCode(reason), None
    if reason is not None:
        raise OffContract("an answer carries no reason")
    labels = {choice.text: choice for choice in answer_choices(request.question)}
    choice = labels.get(answer) if isinstance(answer, str) else None
    if choice is None:
        raise OffContract(f"answer {answer!r} is not one of the allowed answers")
    if isinstance(request.question, NoulQuestion):
        return None, 1.0 if choice.answer else 0.0  # P(yes) of a yes/no label
    return None, choice.answer


def _spans(tokens: list[Any]) -> list[tuple[int, int, list[tuple[str, float]]]] | None:
    """(start, end, top candidates) per generated token; None when they are not text."""
    out, at = [], 0
    for entry in tokens:
        if not isinstance(entry, dict) or not isinstance(entry.get("token"), str):
            return None
        top = [
            (c["token"], float(c["logprob"]))
            for c in entry.get("top_logprobs") or []
            if isinstance(c, dict)
            and isinstance(c.get("token"), str)
            and isinstance(c.get("logprob"), int | float)
            and math.isfinite(c["logprob"])
        ]
        out.append((at, at + len(entry["token"]), top))
        at += len(entry["token"])
    return out


def _value_mass(
    content: str,
    spans: list[tuple[int, int, list[tuple[str, float]]]],
    key: str,
    values: list[str],
    quoted: bool,
) -> dict[str, float] | None:
    """Probability mass per value at the token where `key`'s value begins (each candidate
    token counted for the one value it can start; candidates that fit several are left out)."""
    found = re.search(rf'"{key}"\s*:\s*' + ('"' if quoted else ""), content)
    if found is None:
        return None
    start = found.end()
    at = next((s for s in spans if s[0] <= start < s[1] or (s[0] == start)), None)
    if at is None or not at[2]:
        return None
    before = content[at[0] : start]
    mass = dict.fromkeys(values, 0.0)
    for token, logprob in at[2]:
        if not token.startswith(before):
            continue
        rest = token[len(before) :]
        if quoted:
            rest = rest.split('"')[0] if '"' in rest else rest
        if not rest:
            continue
        fits = [v for v in values if v.startswith(rest) or (quoted and rest == v)]
        if len(fits) == 1:
            mass[fits[0]] += math.exp(logprob)
    return mass if sum(mass.values()) > 0 else None


def logprob_confidence(
    request: Request, content: str, tokens: Any, abstained: bool, chosen: str | None
) -> tuple[float, dict[str, float]] | None:
    """(confidence, probabilities) from the answer's token log-probabilities, or None.

    P(abstain) is read where the `abstain` value starts (true vs false); the split among
    answers where the `answer` string starts (or among reason codes where `reason` starts,
    for an abstention). Each is renormalised over the values its top candidates can begin;
    the probability of an answer is (1 − P(abstain)) × its share. Only the top candidates the
    server returned count, so this is a lower-resolution view than the embedded model's."""
    spans = _spans(tokens) if isinstance(tokens, list) else None
    if spans is None or "".join(content[a:b] for a, b, _ in spans) != content:
        return None
    flag = _value_mass(content, spans, "abstain", ["true", "false"], quoted=False)
    if flag is None:
        return None
    p_abstain = flag["true"] / (flag["true"] + flag["false"])
    probabilities: dict[str, float] = {}
    if abstained:
        codes = [c.value for c in ReasonCode]
        split = _value_mass(content, spans, "reason", codes, quoted=True)
        if split is None:
            return None
        total = sum(split.values())
        for code in codes:
            probabilities[f"abstain:{code}"] = round(p_abstain * split[code] / total, 6)
        return round(p_abstain, 6), probabilities
    labels = answer_labels(request)
    split = _value_mass(content, spans, "answer", labels, quoted=True)
    if split is None or chosen not in split:
        return None
    total = sum(split.values())
    for label in labels:
        probabilities[label] = round((1 - p_abstain) * split[label] / total, 6)
    return probabilities[chosen], probabilities


def parse_decision(
    request: Request,
    content: str,
    system: str,
    latency_ms: float,
    usage: Any = None,
    tokens: Any = None,
) -> Response:
    """Turn the model's JSON text into a Response (`invalid` when outside the schema);
    with the reply's token log-probabilities, its confidence and probabilities too."""
    try:
        data = loads(content)
    except (TypeError, ValueError):
        return failure(request, system, "invalid", "output is not JSON", raw=content)
    try:
        reason, answer = read_decision(request, data)
    except OffContract as exc:
        return failure(request, system, "invalid", f"output outside the schema: {exc}", raw=content)
    common: dict[str, Any] = {"raw": content, "latency_ms": latency_ms, "usage": usage}
    if tokens is not None:
        chosen = None
        if reason is None:
            chosen = next(
                (c.text for c in answer_choices(request.question) if _same(c.answer, answer)),
                None,
            )
        read = logprob_confidence(request, content, tokens, reason is not None, chosen)
        if read is not None:
            common["confidence"], common["probabilities"] = read
    if reason is not None:
        return response(request, system, abstain=True, reason=reason, **common)
    return response(request, system, abstain=False, answer=answer, **common)


class OpenAICompatibleSystem:
    """Chat completions with a JSON-schema-constrained decision."""

    def __init__(self, options: SystemOptions) -> None:
        self.options = options
        self.http = HttpClient(options, "openai")
        self.model = options.model or "default"
        self.llama_cpp_format = False
        self.card = SystemCard(
            name=f"openai:{self.model}",
            version=self.model,
            languages=("en",),
            max_options=255,
            confidences=options.logprobs,
            abstains=True,
            notes=f"OpenAI-compatible chat at {self.http.endpoint.shown(PATH)}; "
            + (
                f"confidences from the answer tokens' top {TOP_LOGPROBS} log-probabilities"
                " (none where the server returns no logprobs)"
                if options.logprobs
                else "no confidences (add --logprobs where the server returns them)"
            ),
        )

    def _body(self, request: Request) -> dict[str, Any]:
        schema = decision_schema(request, object_root=not self.llama_cpp_format)
        fmt: dict[str, Any] = (
            {"type": "json_object", "schema": schema}
            if self.llama_cpp_format
            else {
                "type": "json_schema",
                "json_schema": {"name": "decision", "schema": schema, "strict": True},
            }
        )
        return {
            "model": self.model,
            "messages": messages(request),
            "temperature": 0.0,
            "max_tokens": 96,
            "response_format": fmt,
            **({"logprobs": True, "top_logprobs": TOP_LOGPROBS} if self.options.logprobs else {}),
        }

    def _parse(self, request: Request, data: Any, latency_ms: float) -> Response:
        message = mapping(mapping(data, "reply")["choices"][0], "choice")["message"]
        content = mapping(message, "message")["content"]
        usage = data.get("usage")
        if not isinstance(content, str):
            raise OffContract(f"message content is {type(content).__name__}, not a string")
        if usage is not None and not isinstance(usage, dict):
            raise OffContract(f"usage is {type(usage).__name__}, not an object")
        tokens = None
        if self.options.logprobs:
            logprobs = mapping(data["choices"][0], "choice").get("logprobs")
            tokens = logprobs.get("content") if isinstance(logprobs, dict) else None
        return parse_decision(request, content, self.card.name, round(latency_ms, 3), usage, tokens)

    def respond(self, requests: Sequence[Request]) -> list[Response]:
        out = self.http.post_all(requests, lambda r: PATH, self._body, self._parse, self.card.name)
        # servers that only know {"type": "json_object", "schema": ...} name response_format
        # in their refusal (llama.cpp's Python server answers 500, others 400): switch once
        refused = [
            i
            for i, r in enumerate(out)
            if r.status in ("rejected", "error") and "response_format" in (r.error or "")
        ]
        if refused and not self.llama_cpp_format:
            self.llama_cpp_format = True
            again = self.respond([requests[i] for i in refused])
            for i, res in zip(refused, again, strict=True):
                out[i] = res
        return out

    def submit(self, requests: Sequence[Request]) -> list[Future[Response]]:
        """Start each request now (streaming runs); a refusal that names response_format
        switches to the llama.cpp form once and sends that request again."""
        return [self._submit_one(r) for r in requests]

    def _submit_one(self, request: Request) -> Future[Response]:
        used_llama = self.llama_cpp_format
        (first,) = self.http.submit_all(
            [request], lambda r: PATH, self._body, self._parse, self.card.name
        )
        out: Future[Response] = Future()

        def done(f: Future[Response]) -> None:
            try:
                got = f.result()
            except BaseException as exc:  # cancelled, or a bug: hand it on
                out.set_exception(exc)
                return
            refused = got.status in ("rejected", "error") and "response_format" in (got.error or "")
            if refused and not used_llama:
                self.llama_cpp_format = True
                self._submit_one(request).add_done_callback(
                    lambda again: out.set_result(again.result())
                )
                return
            out.set_result(got)

        first.add_done_callback(done)
        return out

    def close(self) -> None:
        """Close the streaming connection pool."""
        self.http.close()


def factory(arg: str | None, options: SystemOptions) -> OpenAICompatibleSystem:
    """Factory for `openai` (server from --base-url, model from --model or `openai:MODEL`)."""
    if arg:
        options = options.model_copy(update={"model": arg})
    return OpenAICompatibleSystem(options)
