"""Where the footers of the leaderboard and the report point for the reproductions page.

``glotbench reproduce --out DIR`` (issue 23, docs/reproductions.md) writes the
page with every published number beside its recomputation. A page or report
written next to it links it relatively — ``reproductions/index.html`` or
``reproductions.html`` in the output's folder; otherwise the footer names the
command that writes it there, so the next build links it, and the document
that describes it.
"""

from __future__ import annotations

import html
from pathlib import Path
from typing import Any

#: the folder name the footers expect beside a page (``glotbench reproduce --out``)
FOLDER = "reproductions"
#: the document describing every reproduction, in glotbench's sources
DOCUMENT = "docs/reproductions.md"
#: where a reproduction page is found, relative to the page's or report's folder
CANDIDATES = (f"{FOLDER}/index.html", f"{FOLDER}.html")


def reproduction_link(folder: str | Path) -> dict[str, Any]:
    """The footer's link data for an output written into ``folder``.

    ``href``: the relative path of a reproduction page beside it (None: none
    there yet); ``command``: how to write one there, run in that folder;
    ``document``: the page's documentation in glotbench's sources.
    """
    base = Path(folder)
    href = next((c for c in CANDIDATES if (base / c).is_file()), None)
    # relative to the page's folder: the page names no path of the machine that built it,
    # and the same output written into two folders is byte for byte the same
    return {"href": href, "command": f"glotbench reproduce --out {FOLDER}", "document": DOCUMENT}


def footer_html(link: dict[str, Any]) -> str:
    """The report footer's sentence (escaped HTML)."""
    if link["href"] is not None:
        return (
            f'Published numbers recomputed by glotbench: <a href="{html.escape(link["href"])}">'
            f"the reproductions page</a> ({html.escape(link['document'])}). "
        )
    return (
        "Published numbers recomputed by glotbench: "
        f"<code>{html.escape(link['command'])}</code>, run in this page's folder, writes the "
        f"reproductions page beside this one ({html.escape(link['document'])}). "
    )
