"""`twinbench rag label`: a local page where one annotator labels a blind package's answers.

It shows the next unlabelled item (the question, the numbered passages, the answer) with, per
claim, the three support labels, a checkbox per passage for evidence, a quote box and a
severity, plus relevance (and, for an abstention, whether abstaining was appropriate). Each
answer is checked by the rules of `read_labels` and saved at once to
`labels/<annotator>.jsonl` in the package folder, replaced atomically under an `fcntl.flock`
lock file. Only `items.jsonl` is read: nothing on the page names a variant or a model.

Bound to 127.0.0.1 with the audit page's hardening (`twinbench.audit.serve`): the Host header
must name this server, a POST's Origin or Referer must be this page, every form carries a
per-server token, and a body is at most `MAX_BODY` bytes. Standard library only, no scripts.
"""

from __future__ import annotations

import contextlib
import fcntl
import re
import secrets
from collections.abc import Iterator
from html import escape
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl, urlsplit

from twinbench.audit.serve import HEADERS, MAX_BODY, Refused, _page, _shown
from twinbench.jsonl import InputError, iter_json_lines, write_jsonl
from twinbench.rag.annotation import RUBRIC, Item, open_package
from twinbench.rag.answers import Severity, SupportLabel
from twinbench.rag.labels import check_row, read_labels

#: what an annotator name may be (it names the labels file)
ANNOTATOR = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,63}")
INTRO = (
    "Label each claim against the numbered passages only. Every answer is saved when you "
    "press <b>Save and next</b>, so you can stop and come back later."
)


class LabelSession:
    """One annotator's state: the package's items, the labels file, its lock, the form token."""

    def __init__(self, folder: Path, annotator: str) -> None:
        if not ANNOTATOR.fullmatch(annotator):
            raise InputError(f"--annotator {annotator!r}: use letters, digits, '.', '_', '-'")
        self.blind = open_package(folder)
        self.annotator = annotator
        self.path = folder / "labels" / f"{annotator}.jsonl"
        self.lock_path = folder / "labels" / f".{annotator}.lock"
        #: returned by every form of this server; a POST without it is refused
        self.token = secrets.token_urlsafe(32)
        self.rows()  # a broken labels file is an error now, not at the first request

    def rows(self) -> dict[str, dict[str, Any]]:
        """The labels file's rows by blind id, each checked as `read_labels` does."""
        if not self.path.exists():
            return {}
        read_labels(self.path, self.blind)
        return {row["blind_id"]: row for _, row in iter_json_lines(self.path)}

    def todo(self) -> list[Item]:
        """The items not labelled yet, in package order."""
        rows = self.rows()
        return [
            item
            for bid, item in self.blind.items.items()
            if bid not in rows or check_row(rows[bid], item) is None
        ]

    @contextlib.contextmanager
    def locked(self) -> Iterator[None]:
        """Hold the annotator's lock file: one writer across servers and threads."""
        self.lock_path.parent.mkdir(parents=True, exist_ok=True)
        with self.lock_path.open("a") as handle:  # closing it releases the lock
            fcntl.flock(handle, fcntl.LOCK_EX)
            yield

    def save(self, blind_id: str, form: dict[str, str]) -> None:
        """Store one item's labels now, or raise Refused (nothing stored)."""
        item = self.blind.items.get(blind_id)
        if item is None:
            raise Refused(HTTPStatus.NOT_FOUND, f"no item {_shown(blind_id)} in the package")
        row = form_row(form, item, self.annotator)
        try:
            labels = check_row(row, item)
        except ValueError as exc:
            raise Refused(HTTPStatus.BAD_REQUEST, str(exc)) from None
        if labels is None:
            raise Refused(HTTPStatus.BAD_REQUEST, "nothing to save: label every claim")
        with self.locked():
            rows = self.rows()
            rows[blind_id] = row
            write_jsonl(self.path, [rows[b] for b in self.blind.items if b in rows])


def form_row(form: dict[str, str], item: Item, annotator: str) -> dict[str, Any]:
    """The labels row a form gives for `item` (Refused for a field the form does not have)."""
    names = {"relevance", *(["abstention_appropriate"] if item.abstained else [])}
    for c in item.claims:
        names |= {f"c{c.number}.label", f"c{c.number}.quote", f"c{c.number}.severity"}
        names |= {f"c{c.number}.evidence.{p.number}" for p in item.passages}
    unknown = sorted(set(form) - names)
    if unknown:
        raise Refused(HTTPStatus.BAD_REQUEST, f"unknown field {_shown(unknown[0])}")
    relevance = form.get("relevance", "")
    row: dict[str, Any] = {
        "blind_id": item.blind_id,
        "annotator": annotator,
        "relevance": int(relevance) if relevance in ("0", "1", "2") else relevance or None,
    }
    if item.abstained:
        given = form.get("abstention_appropriate", "")
        row["abstention_appropriate"] = {"yes": True, "no": False}.get(given, given or None)
    row["claims"] = [
        {
            "claim": c.number,
            "support_label": form.get(f"c{c.number}.label") or None,
            "evidence_ids": [
                p.passage_id for p in item.passages if form.get(f"c{c.number}.evidence.{p.number}")
            ],
            "evidence_quote": form.get(f"c{c.number}.quote", "").strip() or None,
            "severity": form.get(f"c{c.number}.severity") or None,
        }
        for c in item.claims
    ]
    return row


def _radios(name: str, values: list[tuple[str, str]]) -> str:
    return "".join(
        f'<label><input type="radio" name="{escape(name)}" value="{escape(v)}" required> '
        f"{escape(text)}</label> "
        for v, text in values
    )


def _claim_fields(item: Item) -> str:
    parts = []
    severities = "".join(f'<option value="{s.value}">{s.value}</option>' for s in Severity)
    for c in item.claims:
        n = c.number
        cites = f" <i>(cites {escape(', '.join(c.cited_ids))})</i>" if c.cited_ids else ""
        evidence = "".join(
            f'<label><input type="checkbox" name="c{n}.evidence.{p.number}" value="1"> '
            f"[{p.number}] {escape(p.passage_id)}</label> "
            for p in item.passages
        )
        parts.append(
            f"<fieldset><legend>Claim {n}: {escape(c.text)}{cites}</legend>"
            + _radios(f"c{n}.label", [(s.value, s.value) for s in SupportLabel])
            + f"<p>Evidence: {evidence or 'no passages'}</p>"
            f'<p><label>Quote <input type="text" name="c{n}.quote" size="60"></label></p>'
            f'<p><label>Severity (when not supported) <select name="c{n}.severity">'
            f'<option value="">-</option>{severities}</select></label></p></fieldset>'
        )
    return "".join(parts)


def render(session: LabelSession) -> str:
    """The page for the next unlabelled item (or a done message)."""
    todo, total = session.todo(), len(session.blind.items)
    title = f"Labelling — {session.annotator}"
    if not todo:
        return _page(title, f"<p>All {total} answers saved to {escape(str(session.path))}.</p>")
    item = todo[0]
    passages = "".join(
        f"<p><b>[{p.number}] {escape(p.passage_id)}</b> {escape(p.title)}<br>{escape(p.text)}</p>"
        for p in item.passages
    )
    abstention = (
        "<fieldset><legend>The assistant abstained. Was abstaining appropriate?</legend>"
        + _radios("abstention_appropriate", [("yes", "yes"), ("no", "no")])
        + "</fieldset>"
        if item.abstained
        else ""
    )
    relevance = [("0", "0 off-topic"), ("1", "1 partial"), ("2", "2 every requested part")]
    hidden = {"token": session.token, "blind_id": item.blind_id}
    body = (
        f'<p class="intro">{INTRO}</p><details><summary>Rubric</summary>'
        f'<pre style="white-space:pre-wrap">{escape(RUBRIC)}</pre></details>'
        f"<p>Answer {total - len(todo) + 1} of {total} — {escape(item.blind_id)}</p>"
        f'<div class="box"><h3>Question</h3><p>{escape(item.question)}</p></div>'
        f'<div class="box"><h3>Passages</h3>{passages or "<p>none</p>"}</div>'
        f'<div class="box"><h3>Answer</h3><p>{escape(item.answer)}</p></div>'
        '<form method="post" action="/labels">'
        + "".join(
            f'<input type="hidden" name="{k}" value="{escape(v)}">' for k, v in hidden.items()
        )
        + _claim_fields(item)
        + f"<fieldset><legend>Relevance</legend>{_radios('relevance', relevance)}</fieldset>"
        + abstention
        + '<p><button type="submit" id="save">Save and next</button></p></form>'
    )
    return _page(title, body)


def make_server(session: LabelSession, port: int = 0) -> ThreadingHTTPServer:
    """An HTTP server on 127.0.0.1 for one annotator's labelling (port 0: the OS picks one)."""
    hosts: set[str] = set()  # the Host values that name this server, once it is bound

    class Handler(BaseHTTPRequestHandler):
        timeout = 10  # seconds a client may take over one request

        def log_message(self, *args: Any) -> None:
            pass

        def _send(self, status: int, html: str) -> None:
            data = html.encode("utf-8")
            self.send_response(status)
            self.send_header("Content-Type", "text/html; charset=utf-8")
            self.send_header("Content-Length", str(len(data)))
            for name, value in HEADERS.items():
                self.send_header(name, value)
            self.end_headers()
            self.wfile.write(data)

        def _refuse(self, refused: Refused) -> None:
            status = refused.status
            back = '<p><a href="/">Back to the page</a></p>'
            page = _page(f"{status.value} {status.phrase}", f"<p>{escape(str(refused))}</p>{back}")
            self._send(status, page)
            self.close_connection = True

        def _check_host(self) -> None:
            given = self.headers.get_all("Host") or []
            if len(given) != 1 or given[0].lower() not in hosts:
                got = ", ".join(map(_shown, given)) or "none"
                raise Refused(HTTPStatus.FORBIDDEN, f"Host {got} is not this page")

        def _check_origin(self) -> None:
            origin, referer = self.headers.get("Origin"), self.headers.get("Referer")
            if origin is not None and origin.lower() not in {f"http://{h}" for h in hosts}:
                raise Refused(HTTPStatus.FORBIDDEN, f"a post from {_shown(origin)} is refused")
            if origin is None and referer is not None:
                parts = urlsplit(referer)
                if parts.scheme != "http" or parts.netloc.lower() not in hosts:
                    raise Refused(HTTPStatus.FORBIDDEN, f"a post from {_shown(referer)} is refused")

        def _form(self) -> dict[str, str]:
            raw = (self.headers.get("Content-Length") or "").strip()
            if self.headers.get("Transfer-Encoding") is not None or not raw.isdigit():
                raise Refused(HTTPStatus.LENGTH_REQUIRED, "a POST needs a Content-Length")
            if int(raw) > MAX_BODY:
                raise Refused(HTTPStatus.REQUEST_ENTITY_TOO_LARGE, f"over {MAX_BODY} bytes")
            body = self.rfile.read(int(raw))
            try:
                pairs = parse_qsl(body.decode("utf-8"), keep_blank_values=True, strict_parsing=True)
            except (UnicodeDecodeError, ValueError) as exc:
                raise Refused(HTTPStatus.BAD_REQUEST, f"not a form body ({exc})") from None
            form = dict(pairs)
            if len(form) < len(pairs):
                raise Refused(HTTPStatus.BAD_REQUEST, "a field is given twice")
            return form

        def do_GET(self) -> None:
            try:
                self._check_host()
                if self.path.partition("?")[0] != "/":
                    raise Refused(HTTPStatus.NOT_FOUND, f"no page {_shown(self.path)}")
                self._send(200, render(session))
            except Refused as refused:
                self._refuse(refused)

        def do_POST(self) -> None:
            try:
                form = self._form()
                self._check_host()
                self._check_origin()
                if self.path != "/labels":
                    raise Refused(HTTPStatus.NOT_FOUND, f"no form {_shown(self.path)}")
                token = form.pop("token", "")
                if not secrets.compare_digest(token.encode(), session.token.encode()):
                    raise Refused(HTTPStatus.FORBIDDEN, "missing or stale form token; reload")
                session.save(form.pop("blind_id", ""), form)
            except Refused as refused:
                self._refuse(refused)
                return
            self.send_response(303)
            self.send_header("Location", "/")
            self.send_header("Content-Length", "0")
            self.end_headers()

    server = ThreadingHTTPServer(("127.0.0.1", port), Handler)
    hosts.update({f"127.0.0.1:{server.server_port}", f"localhost:{server.server_port}"})
    return server


def label_server(folder: Path, annotator: str, port: int = 0) -> ThreadingHTTPServer:
    """The labelling page of package `folder` for `annotator`, bound (call serve_forever)."""
    return make_server(LabelSession(folder, annotator), port)
