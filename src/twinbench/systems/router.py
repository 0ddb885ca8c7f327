"""`router:LANG=SPEC[+LANG=SPEC...]`: route each item by detected language.

The detector is lingua, built from only the benchmark's languages that lingua knows (it has
no Khmer: such text is detected as one of the others or not at all). An item detected as a
language without a route, or not detected, is an `out_of_language` abstention by the router.
The router is part of the system and is scored end to end.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from twinbench.jsonl import InputError
from twinbench.records import ReasonCode, Response
from twinbench.systems.base import Request, System, SystemCard, SystemOptions, response


def build_detector(languages: Sequence[str]) -> Any:
    """A lingua detector restricted to `languages` (codes lingua does not know are skipped)."""
    from lingua import IsoCode639_1, Language, LanguageDetectorBuilder

    known = [
        Language.from_iso_code_639_1(getattr(IsoCode639_1, code.upper()))
        for code in sorted(set(languages))
        if hasattr(IsoCode639_1, code.upper())
    ]
    if len(known) < 2:
        known.append(Language.ENGLISH if Language.ENGLISH not in known else Language.SPANISH)
    return LanguageDetectorBuilder.from_languages(*known).build()


class LanguageRouter:
    """Sends each request to the system for its detected language."""

    def __init__(self, routes: dict[str, System], benchmark_languages: Sequence[str]) -> None:
        self.routes = routes
        self.detector = build_detector([*benchmark_languages, *routes])
        inner = "+".join(f"{lang}={s.card.name}" for lang, s in routes.items())
        self.card = SystemCard(
            name=f"router({inner})",
            version="lingua",
            languages=tuple(routes),
            max_options=min(s.card.max_options for s in routes.values()),
            confidences=all(s.card.confidences for s in routes.values()),
            abstains=True,
            notes="routes by lingua-detected language; unrouted languages abstain out_of_language",
        )

    def detect(self, text: str) -> str | None:
        """The ISO 639-1 code lingua detects for `text`, or None."""
        found = self.detector.detect_language_of(text)
        return None if found is None else str(found.iso_code_639_1.name.lower())

    def respond(self, requests: Sequence[Request]) -> list[Response]:
        out: dict[int, Response] = {}
        groups: dict[str, list[int]] = {}
        for i, req in enumerate(requests):
            language = self.detect(req.state)
            if language in self.routes:
                groups.setdefault(language, []).append(i)
            else:
                out[i] = response(
                    req,
                    self.card.name,
                    abstain=True,
                    reason=ReasonCode.OUT_OF_LANGUAGE,
                    raw={"detected": language},
                    latency_ms=0.0,
                )
        for language, indices in groups.items():
            answers = self.routes[language].respond([requests[i] for i in indices])
            for i, res in zip(indices, answers, strict=True):
                raw = {"detected": language, "inner_raw": res.raw}
                out[i] = res.model_copy(update={"system": self.card.name, "raw": raw})
        return [out[i] for i in range(len(requests))]


def parse_router(spec: str, options: SystemOptions, make: Callable[..., System]) -> LanguageRouter:
    """Build a router from `router:LANG=SPEC[+LANG=SPEC...]`."""
    routes: dict[str, System] = {}
    for part in spec.removeprefix("router:").split("+"):
        language, eq, inner = part.partition("=")
        if not eq or not language or not inner:
            raise InputError(f"--system: {spec!r} must look like router:en=SPEC+es=SPEC")
        routes[language.strip()] = make(inner.strip(), options)
    return LanguageRouter(routes, options.benchmark_languages)
