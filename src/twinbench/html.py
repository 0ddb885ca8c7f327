"""Self-contained HTML pages: inline CSS and inline SVG figures, no scripts, no network."""

from __future__ import annotations

from collections.abc import Sequence
from html import escape

STYLE = """
body { font-family: system-ui, sans-serif; max-width: 1100px; margin: 2rem auto; color: #222;
  padding: 0 1rem; }
dd, .side p { overflow-wrap: anywhere; }
table { border-collapse: collapse; margin: 1rem 0; font-size: 0.9rem; }
th, td { border: 1px solid #ccc; padding: 0.25rem 0.5rem; text-align: right; }
th:first-child, td:first-child, th.left, td.left { text-align: left; }
td .ci { display: block; color: #555; font-size: 0.8rem; white-space: nowrap; }
figure { margin: 1rem 0; } figure svg { max-width: 100%; height: auto; }
p.note { color: #555; font-size: 0.9rem; }
.banner { border: 2px solid #b00020; background: #fdecee; padding: 0.5rem 1rem; margin: 1rem 0; }
.cards { display: flex; flex-wrap: wrap; gap: 1rem; }
.card { border: 1px solid #ccc; padding: 0.5rem 1rem; flex: 1 1 320px; }
dl { display: grid; grid-template-columns: max-content 1fr; gap: 0.15rem 1rem; margin: 0.5rem 0; }
dt { font-weight: 600; } dd { margin: 0; }
.pair { display: grid; grid-template-columns: 1fr 1fr; gap: 1rem; margin: 0.5rem 0 1rem; }
.side { border: 1px solid #ddd; padding: 0.5rem; font-size: 0.9rem; }
.side.wrong { border-color: #b00020; }
pre { white-space: pre-wrap; overflow-wrap: anywhere; background: #f6f6f6; padding: 0.25rem;
  margin: 0.25rem 0; font-size: 0.8rem; }
details { margin: 0.5rem 0; } summary { cursor: pointer; font-weight: 600; }
"""

#: a table cell: text, or (value, interval) shown as the value with the interval under it
Cell = object


def _cell(value: Cell) -> str:
    if isinstance(value, tuple):
        main, interval = value
        return f'{escape(str(main))}<span class="ci">{escape(str(interval))}</span>'
    return escape(str(value))


def table(header: Sequence[str], rows: Sequence[Sequence[Cell]], left: int = 1) -> str:
    """An HTML table with escaped cells, its first `left` columns left-aligned (the rest are
    figures, right-aligned); a (value, interval) cell puts the interval under the value."""

    def tag(name: str, n: int, inner: str) -> str:
        return f'<{name} class="left">{inner}</{name}>' if n < left else f"<{name}>{inner}</{name}>"

    head = "".join(tag("th", n, escape(str(h))) for n, h in enumerate(header))
    body = "".join(
        "<tr>" + "".join(tag("td", n, _cell(c)) for n, c in enumerate(row)) + "</tr>"
        for row in rows
    )
    return f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


def figure(svg: str | None, caption: str) -> str:
    """An inline SVG figure with a caption (empty when there is nothing to draw)."""
    if not svg:
        return ""
    return f'<figure class="plot">{svg}<figcaption>{escape(caption)}</figcaption></figure>'


def definitions(pairs: Sequence[tuple[str, object]], css: str = "") -> str:
    """A definition list of (term, description) pairs, both escaped."""
    items = "".join(f"<dt>{escape(t)}</dt><dd>{escape(str(d))}</dd>" for t, d in pairs)
    return f'<dl class="{css}">{items}</dl>' if css else f"<dl>{items}</dl>"


def paragraph(text: str, css: str = "") -> str:
    """A paragraph of escaped text."""
    return f'<p class="{css}">{escape(text)}</p>' if css else f"<p>{escape(text)}</p>"


def page(title: str, sections: Sequence[tuple[str, str]], note: str = "", top: str = "") -> str:
    """A whole page: title, `top` (HTML: banners), an optional note, then (heading, html)
    sections (a section whose html is empty is left out)."""
    parts = [f"<section><h2>{escape(h)}</h2>{body}</section>" for h, body in sections if body]
    return (
        f'<!DOCTYPE html><html lang="en"><head><meta charset="utf-8">'
        f'<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>{escape(title)}</title><style>{STYLE}</style></head><body>"
        f"<h1>{escape(title)}</h1>"
        + top
        + (f'<p class="note">{escape(note)}</p>' if note else "")
        + "".join(parts)
        + "</body></html>\n"
    )
