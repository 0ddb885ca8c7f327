"""`openai`: any OpenAI-compatible chat endpoint (vLLM, SGLang, llama.cpp server, Ollama, ...).

The model is asked for one JSON object constrained by a JSON Schema (`response_format` of type
`json_schema`; servers that only know the llama.cpp form get `{"type": "json_object",
"schema": ...}` after the first refusal that names response_format), in one of two answer
formats (`--answer-format`, `SystemOptions.answer_format`):

* ``letters`` (`decision_letters`): the lettered prompt `smollm2` sees, replied as
  `{"letter": "B"}`; the default with `--logprobs`, since no two letters share a first token;
* ``json`` (`decision_json`): `{abstain, reason, answer}` with the answers written out; the
  default without `--logprobs`.

Both show the item's explicit abstain option where it has one, and record choosing it as an
abstention with `prompt.EXPLICIT_ABSTAIN_REASON`. With `--logprobs` the confidence is the
probability of the whole decision read from the reply's token log-probabilities
(`token_probabilities`); where they do not determine it, there is none and the response's
`error` says why.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from concurrent.futures import Future
from dataclasses import dataclass
from typing import Any

from twinbench.records import ReasonCode, Response
from twinbench.systems.base import (
    AnswerFormat,
    Request,
    SystemCard,
    SystemOptions,
    failure,
    response,
)
from twinbench.systems.decision_json import (
    decision_confidence,
    decision_schema,
    messages,
    read_decision,
)
from twinbench.systems.decision_letters import (
    letter_confidence,
    letter_messages,
    letter_schema,
    read_letter,
)
from twinbench.systems.http import HttpClient
from twinbench.systems.prompt import (
    MAX_ANSWER_OPTIONS,
    choice_fields,
    fits_letters,
    too_many_letters,
)
from twinbench.systems.token_probabilities import NoConfidence
from twinbench.systems.wire import OffContract, loads, mapping

PATH = "/chat/completions"
TOP_LOGPROBS = 10
Confidence = tuple[float, dict[str, float]]


@dataclass(frozen=True)
class Reading:
    """A reply read by its format: the Response's decision fields, and how to get its
    confidence from the tokens (raising NoConfidence with the reason where it cannot)."""

    decision: dict[str, Any]
    confidence: Callable[[Any], Confidence]


def read_json_reply(request: Request, data: Any, content: str) -> Reading:
    """The `json` format's reading of a parsed reply (OffContract outside the schema)."""
    _, reason, choice = read_decision(request, data)
    if choice is None:
        decision: dict[str, Any] = {"abstain": True, "reason": ReasonCode(str(reason))}
    else:
        decision = choice_fields(request.question, choice)
    return Reading(decision, lambda t: decision_confidence(request, content, t, reason, choice))


def read_letter_reply(request: Request, data: Any, content: str) -> Reading:
    """The `letters` format's reading of a parsed reply (OffContract outside the schema)."""
    choice = read_letter(request, data)
    decision = choice_fields(request.question, choice)
    return Reading(decision, lambda t: letter_confidence(request, content, t, choice))


@dataclass(frozen=True)
class Format:
    """One answer format: its schema, messages and reader."""

    schema: Callable[[Request, bool], dict[str, Any]]
    messages: Callable[[Request], list[dict[str, str]]]
    read: Callable[[Request, Any, str], Reading]


FORMATS: dict[str, Format] = {
    "json": Format(decision_schema, messages, read_json_reply),
    "letters": Format(letter_schema, letter_messages, read_letter_reply),
}


def parse_reply(
    request: Request,
    form: str,
    content: str,
    system: str,
    latency_ms: float,
    usage: Any = None,
    tokens: Any = None,
    logprobs: bool = False,
) -> Response:
    """Turn the model's JSON text into a Response (`invalid` when outside the schema); with
    `logprobs`, its confidence and probabilities from `tokens`, or an `error` saying why
    there are none."""
    try:
        data = loads(content)
    except (TypeError, ValueError):
        return failure(request, system, "invalid", "output is not JSON", raw=content)
    try:
        reading = FORMATS[form].read(request, data, content)
    except OffContract as exc:
        return failure(request, system, "invalid", f"output outside the schema: {exc}", raw=content)
    common: dict[str, Any] = {"raw": content, "latency_ms": latency_ms, "usage": usage}
    if logprobs:
        try:
            common["confidence"], common["probabilities"] = reading.confidence(tokens)
            common["confidence"] = round(common["confidence"], 6)
        except NoConfidence as exc:
            common["error"] = f"no confidence: {exc}"
    return response(request, system, **reading.decision, **common)


class OpenAICompatibleSystem:
    """Chat completions with a JSON-schema-constrained decision."""

    def __init__(self, options: SystemOptions) -> None:
        self.options = options
        self.http = HttpClient(options, "openai")
        self.model = options.model or "default"
        self.form: AnswerFormat = options.answer_format or (
            "letters" if options.logprobs else "json"
        )
        self.llama_cpp_format = False
        shown = {
            "letters": "the lettered prompt (answers, the item's abstain option, X/Y/Z), "
            'replied as {"letter"}',
            "json": "{abstain, reason, answer} with the answers (and the item's abstain option) "
            "written out",
        }[self.form]
        self.card = SystemCard(
            name=f"openai:{self.model}",
            version=f"{self.model}; answer format {self.form}",
            languages=("en",),
            max_options=MAX_ANSWER_OPTIONS if self.form == "letters" else 255,
            confidences=options.logprobs,
            abstains=True,
            notes=f"OpenAI-compatible chat at {self.http.endpoint.shown(PATH)}; {shown}; "
            + (
                "confidence = the probability of the decision from the reply's top "
                f"{TOP_LOGPROBS} token log-probabilities (none, with the reason in `error`, "
                "where they do not determine it)"
                if options.logprobs
                else "no confidences (add --logprobs where the server returns them)"
            ),
        )

    def _body(self, request: Request) -> dict[str, Any]:
        form = FORMATS[self.form]
        schema = form.schema(request, not self.llama_cpp_format)
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
            "messages": form.messages(request),
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
        latency = round(latency_ms, 3)
        return parse_reply(
            request,
            self.form,
            content,
            self.card.name,
            latency,
            usage,
            tokens,
            self.options.logprobs,
        )

    def _unfit(self, request: Request) -> Response | None:
        """A `rejected` response for a request the letters cannot show, else None."""
        if self.form == "letters" and not fits_letters(request.question):
            error = too_many_letters(request.question)
            return failure(request, self.card.name, "rejected", error)
        return None

    def respond(self, requests: Sequence[Request]) -> list[Response]:
        unfit = {i: res for i, r in enumerate(requests) if (res := self._unfit(r)) is not None}
        if unfit:
            sent = [r for i, r in enumerate(requests) if i not in unfit]
            answered = iter(self.respond(sent))
            return [unfit[i] if i in unfit else next(answered) for i in range(len(requests))]
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
        out: Future[Response] = Future()
        unfit = self._unfit(request)
        if unfit is not None:
            out.set_result(unfit)
            return out
        used_llama = self.llama_cpp_format
        (first,) = self.http.submit_all(
            [request], lambda r: PATH, self._body, self._parse, self.card.name
        )

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
