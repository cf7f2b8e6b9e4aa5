"""What a reproduction is: one published number beside the number recomputed from the
paper's own published inputs.

Every paper module of :mod:`glotbench.reproduce` returns a :class:`PaperReproduction`,
a list of :class:`TableReproduction` objects holding one :class:`Cell` per printed
number. A cell's status says how the two numbers relate:

``reproduced``
    ``|recomputed - published| <= tolerance``, where the tolerance is half a unit
    of the printed rounding (``0.005`` for two decimals), widened by a stated Monte
    Carlo tolerance where the number comes from random resampling;
``differs``
    outside the tolerance; ``reason`` says what was found (an erratum, a swapped
    column, a different input behind the table);
``not_reproducible``
    the published inputs do not allow the number; ``reason`` names the missing input.

The published value is always data read from a file of published numbers (never typed
into the code), and the recomputed value always goes through glotbench's public
analyses, never through stored results.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Literal

import pandas as pd

Status = Literal["reproduced", "differs", "not_reproducible"]
STATUSES: tuple[Status, ...] = ("reproduced", "differs", "not_reproducible")


def rounding_tolerance(printed: str) -> float:
    """Half a unit in the last printed decimal place: ``"52.4"`` -> 0.05, ``"8.75"`` -> 0.005.

    A number printed to d decimals is the true value rounded to d decimals, so the true
    value lies within 0.5·10^-d of it.
    """
    text = printed.strip().rstrip("%").replace("−", "-")
    exponent = Decimal(text).as_tuple().exponent
    decimals = -exponent if isinstance(exponent, int) and exponent < 0 else 0
    return 0.5 * 10.0 ** (-decimals)


@dataclass(frozen=True)
class Cell:
    """One printed number and its recomputation.

    Attributes
    ----------
    key : str
        What the number is, in words a reader of the paper recognises
        (``"Arabic, Clarus 7B − TowerInstruct 7B, mean difference"``).
    published : float or None
        The printed value (None where the paper prints ``-`` or nothing).
    recomputed : float or None
        The value glotbench computes from the published inputs (None where it cannot).
    tolerance : float
        Largest ``|recomputed - published|`` that counts as reproduced.
    status : {"reproduced", "differs", "not_reproducible"}
    reason : str
        Why a cell differs or cannot be reproduced; empty for reproduced cells unless
        there is something worth saying.
    """

    key: str
    published: float | None
    recomputed: float | None
    tolerance: float
    status: Status
    reason: str = ""

    @property
    def difference(self) -> float | None:
        """``recomputed - published``, or None when either is missing."""
        if self.published is None or self.recomputed is None:
            return None
        return self.recomputed - self.published

    @classmethod
    def compare(
        cls,
        key: str,
        published: float | None,
        recomputed: float | None,
        tolerance: float,
        *,
        reason_if_differs: str = "",
        reason_if_missing: str = "",
    ) -> Cell:
        """A cell whose status follows from the numbers and the tolerance."""
        missing = (
            published is None
            or recomputed is None
            or (isinstance(recomputed, float) and math.isnan(recomputed))
        )
        if missing:
            return cls(
                key,
                published,
                None if missing else recomputed,
                tolerance,
                "not_reproducible",
                reason_if_missing,
            )
        assert published is not None and recomputed is not None  # not missing
        status: Status = (
            "reproduced" if abs(recomputed - published) <= tolerance + 1e-12 else "differs"
        )
        reason = reason_if_differs if status == "differs" else ""
        return cls(key, published, float(recomputed), tolerance, status, reason)

    def to_dict(self) -> dict[str, object]:
        return {
            "key": self.key,
            "published": self.published,
            "recomputed": self.recomputed,
            "difference": self.difference,
            "tolerance": self.tolerance,
            "status": self.status,
            "reason": self.reason,
        }


@dataclass(frozen=True)
class TableReproduction:
    """One published table: its cells, and what a reader needs to judge them.

    Attributes
    ----------
    table : str
        The paper's label (``"Table 2"``).
    title : str
        What the table shows.
    method : str
        How glotbench recomputes it (which analysis, which inputs, which settings).
    cells : list of Cell
    notes : list of str
        Errata and findings stated plainly, with their evidence.
    """

    table: str
    title: str
    method: str
    cells: list[Cell]
    notes: list[str] = field(default_factory=list)

    def counts(self) -> dict[str, int]:
        """How many cells have each status."""
        out: dict[str, int] = {status: 0 for status in STATUSES}
        for cell in self.cells:
            out[cell.status] += 1
        return out

    def max_abs_difference(self) -> float | None:
        diffs = [abs(c.difference) for c in self.cells if c.difference is not None]
        return max(diffs) if diffs else None

    def to_frame(self) -> pd.DataFrame:
        return pd.DataFrame([c.to_dict() for c in self.cells])

    def to_dict(self) -> dict[str, object]:
        return {
            "table": self.table,
            "title": self.title,
            "method": self.method,
            "counts": self.counts(),
            "max_abs_difference": self.max_abs_difference(),
            "notes": list(self.notes),
            "cells": [c.to_dict() for c in self.cells],
        }


@dataclass(frozen=True)
class PaperReproduction:
    """All tables of one paper that glotbench recomputes.

    Attributes
    ----------
    paper : str
        Short identifier used on the command line (``"saleva"``, ``"scandeval"``,
        ``"xtreme-r"``, ``"euroeval"``, ``"mixed-models"``).
    citation : str
        Authors, title, venue, year.
    inputs : str
        Which published inputs were read (with their provenance).
    tables : list of TableReproduction
    """

    paper: str
    citation: str
    inputs: str
    tables: list[TableReproduction]

    def counts(self) -> dict[str, int]:
        out: dict[str, int] = {status: 0 for status in STATUSES}
        for table in self.tables:
            for status, n in table.counts().items():
                out[status] += n
        return out

    def to_dict(self) -> dict[str, object]:
        return {
            "paper": self.paper,
            "citation": self.citation,
            "inputs": self.inputs,
            "counts": self.counts(),
            "tables": [t.to_dict() for t in self.tables],
        }


def summary_frame(papers: Iterable[PaperReproduction]) -> pd.DataFrame:
    """One row per table: paper, table, counts by status and the largest difference."""
    rows = []
    for paper in papers:
        for table in paper.tables:
            rows.append(
                {
                    "paper": paper.paper,
                    "table": table.table,
                    "title": table.title,
                    **table.counts(),
                    "max_abs_difference": table.max_abs_difference(),
                }
            )
    return pd.DataFrame(rows)


@dataclass(frozen=True)
class Reproductions:
    """What :func:`glotbench.api.reproduce` returns: the papers run and the page written (if any).

    ``to_dict()`` is the documented JSON (``docs/reproductions.md``).

    Attributes
    ----------
    papers : list of PaperReproduction
        One per paper: each table's cells with published and recomputed values.
    page : str or None
        The HTML page written, if any.
    """

    papers: list[PaperReproduction]
    page: str | None = None

    def counts(self) -> dict[str, int]:
        out: dict[str, int] = {status: 0 for status in STATUSES}
        for paper in self.papers:
            for status, n in paper.counts().items():
                out[status] += n
        return out

    def to_frame(self) -> pd.DataFrame:
        return summary_frame(self.papers)

    def to_dict(self) -> dict[str, object]:
        summary = summary_frame(self.papers)
        records = [
            {k: (None if isinstance(v, float) and math.isnan(v) else v) for k, v in row.items()}
            for row in summary.to_dict(orient="records")
        ]
        return {
            "counts": self.counts(),
            "summary": records,
            "page": self.page,
            "papers": [p.to_dict() for p in self.papers],
        }
