"""The HTML document of a report: style, escaped tables, numbered row notes, sections.

Every text from the data is escaped with :func:`html.escape`; the document has
inline CSS and no scripts. The sections' contents are built elsewhere
(:mod:`glotbench.report.html` and the section modules next to it).
"""

from __future__ import annotations

import html
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from glotbench.store.atomic_files import write_text_atomic

STYLE = """
body { font-family: system-ui, sans-serif; margin: 2rem auto; max-width: 70rem; color: #1d232a; }
h1 { font-size: 1.6rem; }
h2 { font-size: 1.25rem; margin-top: 2rem; border-bottom: 1px solid #dde3e8; }
h3 { font-size: 1.02rem; margin: 1.2rem 0 .4rem; }
table { border-collapse: collapse; font-size: .85rem; font-variant-numeric: tabular-nums; }
th, td { padding: .2rem .5rem; border-bottom: 1px solid #eef1f4; text-align: right; }
th:first-child, td:first-child, th.text, td.text { text-align: left; }
th { background: #f5f7f9; } .notes { color: #4a5560; font-size: .9rem; }
figure { margin: 1rem 0; } figcaption { color: #4a5560; font-size: .9rem; }
.scroll { overflow-x: auto; }
.legend { color: #4a5560; font-size: .9rem; display: grid; grid-template-columns: max-content 1fr;
  gap: .2rem .8rem; } .legend dt { font-weight: 600; } .legend dd { margin: 0; }
a.note-mark { color: #1f4e89; font-weight: 600; text-decoration: none; margin-left: .15rem; }
ol.row-notes { list-style: none; padding-left: 1rem; } ol.row-notes > li { margin-bottom: .6rem; }
ol.row-notes table { margin-top: .3rem; } ol.row-notes td { text-align: center; }
li:target { background: #fff6d6; }
"""
CSP = "default-src 'none'; style-src 'unsafe-inline'; img-src data:"

#: the mark of a cell a row note's table lists as missing / present
MISSING, PRESENT = "✗", "✓"


def cell_text(value: Any, digits: int) -> str:
    if value is None or (isinstance(value, float) and not math.isfinite(value)):
        return "—"
    if isinstance(value, bool):
        return "yes" if value else ""
    if isinstance(value, float):
        return f"{value:.{digits}f}"
    return str(value)


TEXT_TH, TEXT_TD = '<th class="text">', '<td class="text">'


def _is_text(column: pd.Series) -> bool:
    return column.dtype == object or isinstance(column.dtype, pd.StringDtype)


def _marks_html(numbers: Sequence[int]) -> str:
    return "".join(
        f'<sup><a class="note-mark" href="#note-{k}" title="note {k}">{k}</a></sup>'
        for k in numbers
    )


def html_table(
    frame: pd.DataFrame,
    digits: int = 2,
    *,
    marks: Mapping[Any, Sequence[int]] | None = None,
    key: Sequence[str] = ("model",),
) -> str:
    """An escaped HTML table of a frame (NaN as —); text columns left-aligned.

    ``marks`` maps a row's ``key`` value (one column: the value; several: the
    tuple of values) to the numbers of the notes about it, shown after the
    row's ``model`` cell (else its first ``key`` cell) as links to ``#note-N``.
    """
    text = [_is_text(frame[c]) for c in frame.columns]
    columns = list(frame.columns)
    head = "".join(
        (TEXT_TH if t else "<th>") + f"{html.escape(str(c))}</th>"
        for c, t in zip(columns, text, strict=True)
    )
    use_marks = bool(marks) and all(k in columns for k in key)
    # the numbers go after the model's name when the key has one, else after the key's first cell
    at = columns.index("model" if "model" in key else key[0]) if use_marks else -1
    rows = []
    for row in frame.itertuples(index=False):
        found: Sequence[int] = ()
        if use_marks and marks is not None:
            values = tuple(row[columns.index(k)] for k in key)
            found = marks.get(values[0] if len(values) == 1 else values, ())
        cells = []
        for i, (value, is_text) in enumerate(zip(row, text, strict=True)):
            body = html.escape(cell_text(value, digits)) + (_marks_html(found) if i == at else "")
            cells.append((TEXT_TD if is_text else "<td>") + f"{body}</td>")
        rows.append("<tr>" + "".join(cells) + "</tr>")
    table = f"<table><thead><tr>{head}</tr></thead><tbody>{''.join(rows)}</tbody></table>"
    return f'<div class="scroll">{table}</div>'


@dataclass(frozen=True)
class RowNote:
    """A note about particular rows: numbered in the notes, its number marked on the rows.

    ``rows`` are the keys of the rows it concerns (a model, or (model, task)),
    ``table`` an optional table shown with it (e.g. model × cell, ✗ = missing).
    """

    text: str
    rows: tuple[Any, ...]
    table: pd.DataFrame | None = None


@dataclass
class Report:
    """Sections of a report, rendered by :meth:`render`.

    ``row_notes`` are numbered (1, 2, …) in the order given; tables built with
    :meth:`marks` show those numbers on the rows each note concerns.
    """

    title: str
    sections: list[tuple[str, str]] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    row_notes: list[RowNote] = field(default_factory=list)
    #: the settings every number was computed with, in words (the footer)
    settings: str = ""
    #: the footer's pointer to the reproductions page, escaped HTML
    #: (:func:`glotbench.report.reproduction_link.footer_html`; empty: none)
    reproductions: str = ""

    def add(self, heading: str, body: str) -> None:
        self.sections.append((heading, body))

    def marks(self, *notes: RowNote) -> dict[Any, list[int]]:
        """Row key → numbers of ``notes`` (each one of :attr:`row_notes`) that concern it."""
        out: dict[Any, list[int]] = {}
        for note in notes:
            number = self.row_notes.index(note) + 1
            for row in note.rows:
                out.setdefault(row, []).append(number)
        return out

    def render(self) -> str:
        sections = [*self.sections]
        if self.notes or self.row_notes:
            sections.append(("Notes", self._notes()))
        parts = [
            '<!DOCTYPE html><html lang="en"><head><meta charset="utf-8">',
            f'<meta http-equiv="Content-Security-Policy" content="{CSP}">',
            f"<title>{html.escape(self.title)}</title><style>{STYLE}</style></head><body>",
            f"<h1>{html.escape(self.title)}</h1>",
            "<nav><ul>"
            + "".join(
                f'<li><a href="#s{i}">{html.escape(h)}</a></li>'
                for i, (h, _) in enumerate(sections)
            )
            + "</ul></nav>",
        ]
        for i, (heading, body) in enumerate(sections):
            parts.append(f'<section id="s{i}"><h2>{html.escape(heading)}</h2>{body}</section>')
        computed = f"Computed with {html.escape(self.settings)}. " if self.settings else ""
        parts.append(
            f'<footer><p class="notes" id="settings">{computed}{self.reproductions}'
            "Made with glotbench.</p></footer>"
            "</body></html>"
        )
        return "".join(parts)

    def _notes(self) -> str:
        out = ""
        if self.row_notes:
            items = []
            for k, note in enumerate(self.row_notes, start=1):
                table = html_table(note.table) if note.table is not None else ""
                items.append(
                    f'<li id="note-{k}"><sup>{k}</sup> {html.escape(note.text)}{table}</li>'
                )
            out += '<ol class="notes row-notes">' + "".join(items) + "</ol>"
        if self.notes:
            out += (
                '<ul class="notes">'
                + "".join(f"<li>{html.escape(n)}</li>" for n in self.notes)
                + "</ul>"
            )
        return out


def figure(svg: str, caption: str) -> str:
    """An SVG plot with its escaped caption."""
    return f"<figure>{svg}<figcaption>{html.escape(caption)}</figcaption></figure>"


def note_list(messages: Sequence[str]) -> str:
    """Messages as an escaped list of notes (empty: nothing)."""
    if not messages:
        return ""
    return (
        '<ul class="notes">'
        + "".join(f"<li>{html.escape(str(m))}</li>" for m in messages)
        + "</ul>"
    )


def write_report(report: Report, out: str | Path) -> Path:
    """Render ``report`` to the file ``out`` (its folder made if needed); the path."""
    path = Path(out)
    path.parent.mkdir(parents=True, exist_ok=True)
    # a temporary file renamed onto the target: a killed build keeps the old
    # report, and a symlink at the target is replaced, never followed
    write_text_atomic(path, report.render())
    return path
