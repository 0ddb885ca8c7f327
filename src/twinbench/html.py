"""Self-contained HTML pages: inline CSS and inline SVG figures, no scripts, no network."""

from __future__ import annotations

from collections.abc import Sequence
from html import escape

STYLE = """
body { font-family: system-ui, sans-serif; max-width: 1100px; margin: 2rem auto; color: #222; }
table { border-collapse: collapse; margin: 1rem 0; font-size: 0.9rem; }
th, td { border: 1px solid #ccc; padding: 0.25rem 0.5rem; text-align: right; }
th:first-child, td:first-child { text-align: left; }
figure { margin: 1rem 0; } figure svg { max-width: 100%; height: auto; }
p.note { color: #555; font-size: 0.9rem; }
"""


def table(header: Sequence[str], rows: Sequence[Sequence[object]]) -> str:
    """An HTML table with escaped cells."""
    head = "".join(f"<th>{escape(str(h))}</th>" for h in header)
    body = "".join(
        "<tr>" + "".join(f"<td>{escape(str(c))}</td>" for c in row) + "</tr>" for row in rows
    )
    return f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


def figure(svg: str | None, caption: str) -> str:
    """An inline SVG figure with a caption (empty when there is nothing to draw)."""
    if not svg:
        return ""
    return f'<figure class="plot">{svg}<figcaption>{escape(caption)}</figcaption></figure>'


def page(title: str, sections: Sequence[tuple[str, str]], note: str = "") -> str:
    """A whole page: title, an optional note, then (heading, html) sections."""
    parts = [f"<section><h2>{escape(h)}</h2>{body}</section>" for h, body in sections if body]
    return (
        f'<!DOCTYPE html><html lang="en"><head><meta charset="utf-8">'
        f"<title>{escape(title)}</title><style>{STYLE}</style></head><body>"
        f"<h1>{escape(title)}</h1>"
        + (f'<p class="note">{escape(note)}</p>' if note else "")
        + "".join(parts)
        + "</body></html>\n"
    )
