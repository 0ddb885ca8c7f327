"""`twinbench audit serve`: a small local page where one annotator gives verdicts.

It shows one blind item at a time (pass one: the item and its twin as a model sees them;
pass two: with the construction shown), saves each verdict to the annotator's verdict file the
moment it is given (the file is rewritten atomically), and refuses pass two until every pass-
one verdict is in. Bound to 127.0.0.1; standard library only (http.server), no scripts.
"""

from __future__ import annotations

import json
import threading
from html import escape
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs

from twinbench.jsonl import InputError, iter_json_lines, write_jsonl

STYLE = (
    "body{font-family:system-ui,sans-serif;max-width:760px;margin:2rem auto;color:#222}"
    ".box{border:1px solid #ccc;padding:.8rem;margin:.6rem 0;border-radius:6px}"
    "fieldset{margin:.6rem 0}button{font-size:1rem;padding:.4rem 1.2rem}"
    ".intro{background:#f4f6fa;padding:.6rem .8rem;border-radius:6px}"
)


class Session:
    """One annotator's package state: pass files, verdict files, a lock for writes."""

    def __init__(self, folder: Path, annotator: str) -> None:
        self.folder, self.annotator = folder, annotator
        self.lock = threading.Lock()
        for number in (1, 2):
            if not self._pass_path(number).is_file():
                raise InputError(
                    f"{self._pass_path(number)}: no such file; is {annotator!r} in the package?"
                )

    def _pass_path(self, number: int) -> Path:
        return self.folder / f"{self.annotator}_pass{number}.json"

    def verdict_path(self, number: int) -> Path:
        """The annotator's verdict file for a pass."""
        return self.folder / "verdicts" / f"{self.annotator}_pass{number}.jsonl"

    def load(self, number: int) -> tuple[dict[str, Any], list[dict[str, Any]]]:
        """(pass file, verdict rows) for a pass."""
        data = json.loads(self._pass_path(number).read_text("utf-8"))
        rows = [row for _, row in iter_json_lines(self.verdict_path(number))]
        return data, rows

    def complete(self, number: int) -> bool:
        """Whether every verdict of a pass has every yes/no question answered."""
        data, rows = self.load(number)
        yesno = [q["id"] for q in data["questions"] if q["type"] == "yesno"]
        return all(row["answers"].get(q) in ("yes", "no") for row in rows for q in yesno)

    def save(self, number: int, blind_id: str, answers: dict[str, str]) -> None:
        """Store one verdict now (atomic rewrite of the verdict file)."""
        with self.lock:
            _, rows = self.load(number)
            for row in rows:
                if row["blind_id"] == blind_id:
                    row["answers"] = {**row["answers"], **answers}
            write_jsonl(self.verdict_path(number), rows)


def _view(title: str, item: dict[str, Any] | None) -> str:
    if item is None:
        return ""
    question = item["question"]
    options = "".join(f"<li>{escape(o)}</li>" for o in question.get("options", []))
    legend = "".join(f"<li>{escape(k)} = {v}</li>" for k, v in question.get("legend", {}).items())
    return (
        f'<div class="box"><h3>{escape(title)}</h3><p>{escape(item["state"])}</p>'
        f"<p><b>{escape(question['instructions'])}</b></p><ul>{options}{legend}</ul></div>"
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


def render(session: Session, number: int) -> str:
    """The page for the next unanswered item of a pass (or a done / refused message)."""
    if number == 2 and not session.complete(1):
        return _page(
            "Pass two is locked",
            "<p>Finish every item of pass one first.</p>"
            '<p><a href="/?pass=1">Back to pass one</a></p>',
        )
    data, rows = session.load(number)
    yesno = [q for q in data["questions"] if q["type"] == "yesno"]
    todo = [r for r in rows if any(r["answers"].get(q["id"]) not in ("yes", "no") for q in yesno)]
    if not todo:
        link = '<a href="/?pass=2">Start pass two</a>' if number == 1 else "You are done."
        return _page(f"Pass {number} complete", f"<p>All {len(rows)} items saved. {link}</p>")
    current = todo[0]
    item = next(i for i in data["items"] if i["blind_id"] == current["blind_id"])
    fields = []
    for q in data["questions"]:
        if q["type"] == "yesno":
            choices = "".join(
                f'<label><input type="radio" name="{q["id"]}" value="{v}" required> {v}</label> '
                for v in ("yes", "no")
            )
            fields.append(f"<fieldset><legend>{escape(q['text'])}</legend>{choices}</fieldset>")
        else:
            fields.append(
                f'<label>{escape(q["text"])}<br><input type="text" name="{q["id"]}" '
                'size="60"></label>'
            )
    construction = item.get("construction")
    shown = (
        f'<div class="box"><h3>How it was built</h3><pre>'
        f"{escape(json.dumps(construction, indent=1, ensure_ascii=False))}</pre></div>"
        if construction
        else ""
    )
    body = (
        f'<p class="intro">{INTRO[number]}</p>'
        f"<p>Item {len(rows) - len(todo) + 1} of {len(rows)} (pass {number}) — "
        f"{escape(current['blind_id'])}</p>"
        + _view("Item", item["item"])
        + _view("Twin", item.get("twin"))
        + shown
        + f'<form method="post" action="/verdict"><input type="hidden" name="pass" '
        f'value="{number}"><input type="hidden" name="blind_id" '
        f'value="{escape(current["blind_id"])}">'
        + "".join(fields)
        + '<p><button type="submit" id="save">Save and next</button></p></form>'
    )
    return _page(f"Audit — {session.annotator}, pass {number}", body)


def _page(title: str, body: str) -> str:
    return (
        f'<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><title>'
        f"{escape(title)}</title><style>{STYLE}</style></head><body><h1>{escape(title)}"
        f"</h1>{body}</body></html>"
    )


def make_server(session: Session, port: int = 0) -> ThreadingHTTPServer:
    """An HTTP server on 127.0.0.1 for one annotator's session."""

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args: Any) -> None:
            pass

        def _send(self, status: int, html: str) -> None:
            data = html.encode("utf-8")
            self.send_response(status)
            self.send_header("Content-Type", "text/html; charset=utf-8")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def do_GET(self) -> None:
            query = parse_qs(self.path.partition("?")[2])
            number = 2 if query.get("pass") == ["2"] else 1
            self._send(200, render(session, number))

        def do_POST(self) -> None:
            length = int(self.headers.get("Content-Length", 0))
            form = {k: v[0] for k, v in parse_qs(self.rfile.read(length).decode()).items()}
            number = 2 if form.pop("pass", "1") == "2" else 1
            if number == 2 and not session.complete(1):
                self._send(409, render(session, 2))
                return
            blind_id = form.pop("blind_id", "")
            session.save(number, blind_id, form)
            self.send_response(303)
            self.send_header("Location", f"/?pass={number}")
            self.end_headers()

    return ThreadingHTTPServer(("127.0.0.1", port), Handler)
