"""`twinbench audit serve`: a small local page where one annotator gives verdicts.

It shows one blind item at a time (pass one: the item and its twin as a model sees them;
pass two: with the construction shown), saves each verdict to the annotator's verdict file the
moment it is given, and refuses pass two until every pass-one verdict is in; once pass two has
opened, pass one is read-only. Bound to 127.0.0.1; standard library only (http.server), no
scripts.

Hardened against the rest of the machine's browser (issue 11): every request must name this
server in its Host header (no DNS rebinding), a POST whose Origin or Referer is another site is
refused, and every form carries a per-server random token that a POST must return. A verdict
is checked before it is stored (known blind id, allowed values only, body at most `MAX_BODY`
bytes). Each save is a read-modify-write of the verdict file under an `fcntl.flock` lock file
beside it, shared by every server and thread of that annotator, and the file is replaced
atomically, so two servers lose nothing and a kill -9 leaves the old file or the new one.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import secrets
import socket
from collections.abc import Iterator
from html import escape
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, parse_qsl, urlsplit

from twinbench.jsonl import InputError, iter_json_lines, write_jsonl

#: the largest request body read (a verdict is a few hundred bytes)
MAX_BODY = 64 * 1024
#: the most of a refused body read and thrown away, so the client still gets the reply
MAX_DISCARD = 64 * 1024 * 1024
YESNO = ("yes", "no")
STYLE = (
    "body{font-family:system-ui,sans-serif;max-width:760px;margin:2rem auto;color:#222}"
    ".box{border:1px solid #ccc;padding:.8rem;margin:.6rem 0;border-radius:6px}"
    "fieldset{margin:.6rem 0}button{font-size:1rem;padding:.4rem 1.2rem}"
    ".intro{background:#f4f6fa;padding:.6rem .8rem;border-radius:6px}"
)
#: sent with every page: no scripts, no frames, forms post only back here
HEADERS = {
    "Content-Security-Policy": "default-src 'none'; style-src 'unsafe-inline'; "
    "form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
    "X-Frame-Options": "DENY",
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "same-origin",
    "Cache-Control": "no-store",
}


class Refused(Exception):
    """A request the page does not act on: the HTTP status and a one-line reason."""

    def __init__(self, status: HTTPStatus, reason: str) -> None:
        super().__init__(reason)
        self.status = status


def _shown(value: str, limit: int = 40) -> str:
    """A value quoted for a message, cut to `limit` characters."""
    return repr(value if len(value) <= limit else value[:limit] + "...")


class Session:
    """One annotator's package state: pass files, verdict files, the lock, the form token."""

    def __init__(self, folder: Path, annotator: str) -> None:
        self.folder, self.annotator = folder, annotator
        #: returned by every form of this server; a POST without it is refused
        self.token = secrets.token_urlsafe(32)
        self.passes = {number: self._read_pass(number) for number in (1, 2)}
        self.lock_path = folder / "verdicts" / f"{annotator}.lock"
        for number in (1, 2):
            self.load(number)  # readable now, not at the first request

    def _read_pass(self, number: int) -> dict[str, Any]:
        path = self.folder / f"{self.annotator}_pass{number}.json"
        if not path.is_file():
            raise InputError(f"{path}: no such file; is {self.annotator!r} in the package?")
        try:
            data = json.loads(path.read_text("utf-8"))
        except (json.JSONDecodeError, UnicodeDecodeError) as exc:
            raise InputError(f"{path}: not a pass file ({exc})") from None
        if not isinstance(data, dict) or not {"questions", "items"} <= data.keys():
            raise InputError(f"{path}: not a pass file (expected questions and items)")
        return data

    def verdict_path(self, number: int) -> Path:
        """The annotator's verdict file for a pass."""
        return self.folder / "verdicts" / f"{self.annotator}_pass{number}.jsonl"

    def load(self, number: int) -> tuple[dict[str, Any], list[dict[str, Any]]]:
        """(pass file, verdict rows) for a pass."""
        rows = [row for _, row in iter_json_lines(self.verdict_path(number))]
        return self.passes[number], rows

    def yesno(self, number: int) -> list[str]:
        """The ids of a pass's yes/no questions."""
        return [q["id"] for q in self.passes[number]["questions"] if q["type"] == "yesno"]

    def complete(self, number: int) -> bool:
        """Whether every verdict of a pass has every yes/no question answered."""
        _, rows = self.load(number)
        yesno = self.yesno(number)
        return all(row["answers"].get(q) in YESNO for row in rows for q in yesno)

    @contextlib.contextmanager
    def locked(self) -> Iterator[None]:
        """Hold the annotator's lock file (fcntl.flock): one writer across servers and threads."""
        self.lock_path.parent.mkdir(parents=True, exist_ok=True)
        with self.lock_path.open("a") as handle:  # closing it releases the lock
            fcntl.flock(handle, fcntl.LOCK_EX)
            yield

    def answers(self, number: int, form: dict[str, str]) -> dict[str, str]:
        """A pass's answers from a form, or Refused (400) for an unknown field or value."""
        kinds = {q["id"]: q["type"] for q in self.passes[number]["questions"]}
        unknown = sorted(set(form) - set(kinds))
        if unknown:
            raise Refused(HTTPStatus.BAD_REQUEST, f"unknown field {_shown(unknown[0])}")
        for qid in self.yesno(number):
            if form.get(qid) not in YESNO:
                got = _shown(form[qid]) if qid in form else "nothing"
                raise Refused(HTTPStatus.BAD_REQUEST, f"{qid}: expected yes or no, got {got}")
        return {qid: v for qid, v in form.items() if kinds[qid] == "yesno" or v.strip()}

    def save(self, number: int, blind_id: str, form: dict[str, str]) -> None:
        """Store one verdict now, or raise Refused (nothing stored)."""
        answers = self.answers(number, form)
        with self.locked():
            if number == 1 and self.complete(1):
                raise Refused(HTTPStatus.FORBIDDEN, "pass one is read-only: pass two has opened")
            if number == 2 and not self.complete(1):
                raise Refused(HTTPStatus.CONFLICT, "pass two is locked until pass one is done")
            _, rows = self.load(number)
            row = next((r for r in rows if r["blind_id"] == blind_id), None)
            if row is None:
                raise Refused(HTTPStatus.NOT_FOUND, f"no item {_shown(blind_id)} in pass {number}")
            row["answers"] = {**row["answers"], **answers}
            write_jsonl(self.verdict_path(number), rows)  # temp file + rename


def _view(title: str, item: dict[str, Any] | None) -> str:
    if item is None:
        return ""
    question = item.get("question", {})
    options = "".join(f"<li>{escape(str(o))}</li>" for o in question.get("options", []))
    legend = "".join(
        f"<li>{escape(str(k))} = {escape(str(v))}</li>"
        for k, v in question.get("legend", {}).items()
    )
    return (
        f'<div class="box"><h3>{escape(title)}</h3><p>{escape(str(item.get("state", "")))}</p>'
        f"<p><b>{escape(str(question.get('instructions', '')))}</b></p>"
        f"<ul>{options}{legend}</ul></div>"
    )


#: what an annotator needs to know, on the page itself (no docs to read first)
INTRO = {
    1: "You see an item and its twin exactly as a model would see them. Answer the questions "
    "below from this text alone; do not look anything up. Each answer is saved when you press "
    "<b>Save and next</b>, so you can stop and come back later. Pass two, which also shows how "
    "each item was built, opens once every item of pass one is answered.",
    2: "The same items again, now with how each one was built. Answer the questions again; "
    "you may change your mind. Each answer is saved when you press <b>Save and next</b>.",
}


def _fields(questions: list[dict[str, Any]]) -> str:
    fields = []
    for q in questions:
        name, text = escape(str(q["id"])), escape(str(q["text"]))
        if q["type"] == "yesno":
            choices = "".join(
                f'<label><input type="radio" name="{name}" value="{v}" required> {v}</label> '
                for v in YESNO
            )
            fields.append(f"<fieldset><legend>{text}</legend>{choices}</fieldset>")
        else:
            fields.append(f'<label>{text}<br><input type="text" name="{name}" size="60"></label>')
    return "".join(fields)


def render(session: Session, number: int) -> str:
    """The page for the next unanswered item of a pass (or a done / refused message)."""
    if number == 2 and not session.complete(1):
        return _page(
            "Pass two is locked",
            "<p>Finish every item of pass one first.</p>"
            '<p><a href="/?pass=1">Back to pass one</a></p>',
        )
    data, rows = session.load(number)
    yesno = session.yesno(number)
    todo = [r for r in rows if any(r["answers"].get(q) not in YESNO for q in yesno)]
    if not todo:
        link = (
            'Pass one is now read-only. <a href="/?pass=2">Start pass two</a>'
            if number == 1
            else "You are done."
        )
        return _page(f"Pass {number} complete", f"<p>All {len(rows)} items saved. {link}</p>")
    current = todo[0]
    item = next(i for i in data["items"] if i["blind_id"] == current["blind_id"])
    construction = item.get("construction")
    shown = (
        f'<div class="box"><h3>How it was built</h3><pre>'
        f"{escape(json.dumps(construction, indent=1, ensure_ascii=False))}</pre></div>"
        if construction
        else ""
    )
    hidden = {"token": session.token, "pass": str(number), "blind_id": current["blind_id"]}
    body = (
        f'<p class="intro">{INTRO[number]}</p>'
        f"<p>Item {len(rows) - len(todo) + 1} of {len(rows)} (pass {number}) — "
        f"{escape(current['blind_id'])}</p>"
        + _view("Item", item.get("item"))
        + _view("Twin", item.get("twin"))
        + shown
        + '<form method="post" action="/verdict">'
        + "".join(
            f'<input type="hidden" name="{k}" value="{escape(v)}">' for k, v in hidden.items()
        )
        + _fields(data["questions"])
        + '<p><button type="submit" id="save">Save and next</button></p></form>'
    )
    return _page(f"Audit — {session.annotator}, pass {number}", body)


def _page(title: str, body: str) -> str:
    return (
        f'<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><title>'
        f"{escape(title)}</title><style>{STYLE}</style></head><body><h1>{escape(title)}"
        f"</h1>{body}</body></html>"
    )


def _pass_number(value: str | None) -> int:
    if value not in ("1", "2"):
        got = "nothing" if value is None else _shown(value)
        raise Refused(HTTPStatus.BAD_REQUEST, f"pass: expected 1 or 2, got {got}")
    return int(value)


def make_server(session: Session, port: int = 0) -> ThreadingHTTPServer:
    """An HTTP server on 127.0.0.1 for one annotator's session (port 0: the OS picks one)."""

    hosts: set[str] = set()  # the Host values that name this server, once it is bound

    class Handler(BaseHTTPRequestHandler):
        timeout = 10  # seconds a client may take over one request (no slow-loris threads)
        body_read = True  # False while a POST's body is still unread

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
            self._send(
                status,
                _page(f"{status.value} {status.phrase}", f"<p>{escape(str(refused))}</p>{back}"),
            )
            self.close_connection = True
            if not self.body_read:  # read and drop the rest, or the client may miss the reply
                with contextlib.suppress(OSError):
                    self.wfile.flush()
                    self.connection.shutdown(socket.SHUT_WR)
                    self.connection.settimeout(2)
                    for _ in range(MAX_DISCARD // 65536):
                        if not self.connection.recv(65536):
                            break

        def _check_host(self) -> None:
            given = self.headers.get_all("Host") or []
            if len(given) != 1 or given[0].lower() not in hosts:
                got = ", ".join(map(_shown, given)) or "none"
                raise Refused(
                    HTTPStatus.FORBIDDEN,
                    f"Host {got} is not this page; open http://{min(hosts)}/",
                )

        def _check_origin(self) -> None:
            origin, referer = self.headers.get("Origin"), self.headers.get("Referer")
            if origin is not None:
                if origin.lower() not in {f"http://{h}" for h in hosts}:
                    raise Refused(HTTPStatus.FORBIDDEN, f"a post from {_shown(origin)} is refused")
            elif referer is not None:
                parts = urlsplit(referer)
                if parts.scheme != "http" or parts.netloc.lower() not in hosts:
                    raise Refused(HTTPStatus.FORBIDDEN, f"a post from {_shown(referer)} is refused")

        def _form(self) -> dict[str, str]:
            if self.headers.get("Transfer-Encoding") is not None:
                raise Refused(
                    HTTPStatus.LENGTH_REQUIRED, "a chunked body is refused; send Content-Length"
                )
            lengths = self.headers.get_all("Content-Length") or []
            if not lengths:
                raise Refused(HTTPStatus.LENGTH_REQUIRED, "a POST needs a Content-Length")
            raw = lengths[0].strip()
            if len(lengths) > 1 or not (raw.isascii() and raw.isdigit()):
                got = ", ".join(map(_shown, lengths))
                raise Refused(HTTPStatus.BAD_REQUEST, f"Content-Length {got} is not a byte count")
            length = int(raw)
            if length > MAX_BODY:
                raise Refused(
                    HTTPStatus.REQUEST_ENTITY_TOO_LARGE,
                    f"a body of {length} bytes is over the limit of {MAX_BODY} bytes",
                )
            body = self.rfile.read(length)
            self.body_read = True
            if len(body) < length:
                raise Refused(
                    HTTPStatus.BAD_REQUEST,
                    f"body of {len(body)} bytes, shorter than its Content-Length {length}",
                )
            try:
                pairs = parse_qsl(
                    body.decode("utf-8"),
                    keep_blank_values=True,
                    strict_parsing=True,
                    max_num_fields=64,
                )
            except (UnicodeDecodeError, ValueError) as exc:
                raise Refused(HTTPStatus.BAD_REQUEST, f"not a form body ({exc})") from None
            form = dict(pairs)
            if len(form) < len(pairs):
                twice = next(k for k, _ in pairs if [p for p, _ in pairs].count(k) > 1)
                raise Refused(HTTPStatus.BAD_REQUEST, f"field {_shown(twice)} given twice")
            return form

        def do_GET(self) -> None:
            try:
                self._check_host()
                path, _, query = self.path.partition("?")
                if path != "/":
                    raise Refused(HTTPStatus.NOT_FOUND, f"no page {_shown(path)}")
                number = _pass_number(parse_qs(query).get("pass", ["1"])[-1])
                self._send(200, render(session, number))
            except Refused as refused:
                self._refuse(refused)

        def do_POST(self) -> None:
            self.body_read = False
            try:
                self._check_host()
                self._check_origin()
                if self.path != "/verdict":
                    raise Refused(HTTPStatus.NOT_FOUND, f"no form {_shown(self.path)}")
                form = self._form()
                token = form.pop("token", "")
                if not secrets.compare_digest(token.encode(), session.token.encode()):
                    raise Refused(
                        HTTPStatus.FORBIDDEN, "missing or stale form token; reload the page"
                    )
                number = _pass_number(form.pop("pass", None))
                blind_id = form.pop("blind_id", "")
                if not blind_id:
                    raise Refused(HTTPStatus.BAD_REQUEST, "no blind_id in the form")
                session.save(number, blind_id, form)
            except Refused as refused:
                self._refuse(refused)
                return
            self.send_response(303)
            self.send_header("Location", f"/?pass={number}")
            self.send_header("Content-Length", "0")
            self.end_headers()

    server = ThreadingHTTPServer(("127.0.0.1", port), Handler)
    hosts.update({f"127.0.0.1:{server.server_port}", f"localhost:{server.server_port}"})
    return server
