"""Model frames and design matrices, coded as R codes them.

Factors use sum-to-zero contrasts, as R with
``options(contrasts = c("contr.sum", "contr.poly"))``; columns are named as
``model.matrix`` names them (``language1``, ``language1:task2``, ``x``). A
factor in a term whose margin (the term without that factor) is absent from
the model gets full indicator coding (``languageen``), as R does. Factor levels
are sorted as strings (R's ``factor()`` default for character data).

Random-effect terms are laid out as in lme4: for a term with ``p`` effects and
``m`` groups, ``Z`` has ``m * p`` columns, group-major (``g1: int, x; g2: int,
x; ...``), and the relative covariance factor is ``I_m ⊗ T`` with ``T`` lower
triangular.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import pandas as pd

from glotbench.analysis.mixed.formula import Formula, RandomTerm, Term
from glotbench.errors import InputError

MISSING_TEXT = {"", "NA", "NaN", "nan", "null", "None"}
ErrorFactory = Callable[[str, int | None, str | None], InputError]


def _default_error(
    message: str, position: int | None = None, field: str | None = None
) -> InputError:
    if position is None:
        return InputError(message, field=field)
    return InputError(message, line=None, field=field)


@dataclass
class ModelFrame:
    """The rows and columns a model uses, after dropping rows with missing values.

    ``rows`` are the positions (0-based) of the kept rows in the input table.
    """

    data: dict[str, np.ndarray]  # numeric columns as float, factors as str
    kinds: dict[str, str]  # "numeric" or "factor"
    levels: dict[str, list[str]]
    rows: np.ndarray
    n_input: int

    @property
    def n(self) -> int:
        return len(self.rows)

    def factor_codes(self, name: str) -> np.ndarray:
        lv = {v: i for i, v in enumerate(self.levels[name])}
        return np.array([lv[v] for v in self.data[name]], dtype=np.int64)


def _is_text(values: pd.Series) -> bool:
    return values.dtype == object or pd.api.types.is_string_dtype(values)


class _Column:
    """One input column, converted once: which rows are missing, the values as stripped
    text (``astype(str).str.strip()``) and as numbers (``pd.to_numeric`` of that text).

    The conversions run on the whole column and are taken at the kept rows afterwards:
    element by element the same values as converting the kept rows alone (before, each
    column was stripped up to three times: a tenth of a small design's fit).
    """

    def __init__(self, values: pd.Series):
        self.values = values
        self._stripped: pd.Series | None = None
        self._text: np.ndarray | None = None
        missing = values.isna().to_numpy()
        if _is_text(values):
            missing = missing | np.fromiter(
                (v in MISSING_TEXT for v in self.text()), dtype=bool, count=len(values)
            )
        self.missing = missing

    def stripped(self) -> pd.Series:
        if self._stripped is None:
            self._stripped = self.values.astype(str).str.strip()
        return self._stripped

    def text(self) -> np.ndarray:
        if self._text is None:
            self._text = self.stripped().to_numpy()
        return self._text

    def numeric(self, rows: np.ndarray) -> np.ndarray | None:
        """The kept rows as floats, or None if one of them is not a number (or bool)."""
        values = self.values
        if pd.api.types.is_bool_dtype(values):
            return None
        if pd.api.types.is_numeric_dtype(values):
            return values.to_numpy(dtype=float, na_value=np.nan)[rows]
        converted = pd.to_numeric(self.stripped(), errors="coerce")
        kept = converted.to_numpy(dtype=float, na_value=np.nan)[rows]
        if np.isnan(kept).any():
            return None
        return kept


def _bad_response(column: _Column, rows: np.ndarray, name: str, err: ErrorFactory) -> None:
    """Raise the error of a response with a value that is not a number."""
    col = column.values.iloc[rows]
    bad = pd.to_numeric(col.astype(str).str.strip(), errors="coerce").isna().to_numpy()
    pos = int(rows[np.flatnonzero(bad)[0]]) if bad.any() else None
    value = col.iloc[int(np.flatnonzero(bad)[0])] if bad.any() else None
    raise err(
        f"the response must be numeric, found {value!r}; choose a numeric score column left of '~'",
        pos,
        name,
    )


def model_frame(
    frame: pd.DataFrame,
    formula: Formula,
    error: ErrorFactory | None = None,
) -> ModelFrame:
    """Select and type the formula's columns; drop rows with a missing value (R's na.omit)."""
    err = error or _default_error
    needed = formula.all_variables
    missing_cols = [c for c in needed if c not in frame.columns]
    if missing_cols:
        raise err(
            f"the formula uses column(s) {', '.join(missing_cols)} which the data does not have "
            f"(columns: {', '.join(map(str, frame.columns))})",
            None,
            missing_cols[0],
        )
    frame = frame.reset_index(drop=True)
    columns = {c: _Column(frame[c]) for c in needed}
    keep = np.ones(len(frame), dtype=bool)
    for column in columns.values():
        keep &= ~column.missing
    rows = np.flatnonzero(keep)
    if len(rows) == 0:
        raise err("no row has values in all the columns the formula uses", None, None)
    grouping = {v for rt in formula.random_terms for v in rt.group}
    data: dict[str, np.ndarray] = {}
    kinds: dict[str, str] = {}
    levels: dict[str, list[str]] = {}
    for c, column in columns.items():
        num = None if c in grouping and c != formula.response else column.numeric(rows)
        if c == formula.response:
            if num is None:
                _bad_response(column, rows, c, err)
            values = np.asarray(num)
            if not np.all(np.isfinite(values)):
                pos = int(rows[np.flatnonzero(~np.isfinite(values))[0]])
                raise err("the response is not finite", pos, c)
            data[c] = values
            kinds[c] = "numeric"
            continue
        if num is not None:
            data[c] = num
            kinds[c] = "numeric"
        else:
            text = column.text()[rows]
            data[c] = text
            kinds[c] = "factor"
            levels[c] = sorted(set(text.tolist()))
    return ModelFrame(data=data, kinds=kinds, levels=levels, rows=rows, n_input=len(frame))


def contr_sum(k: int) -> np.ndarray:
    """R's ``contr.sum(k)``: k × (k-1), identity on top of a row of -1."""
    return np.vstack([np.eye(k - 1), -np.ones((1, k - 1))])


@dataclass
class DesignMatrix:
    """A model matrix with R's column names and the columns of each term."""

    matrix: np.ndarray
    columns: list[str]
    term_columns: dict[str, list[int]]  # term label -> column indices ("(Intercept)" too)
    coding: dict[str, dict[str, str]]  # term label -> variable -> "contrasts"/"indicators"


def _variable_block(
    mf: ModelFrame,
    var: str,
    contrasts: bool,
    values: dict[str, np.ndarray] | None = None,
    scheme: str = "sum",
) -> tuple[np.ndarray, list[str]]:
    """Columns and column-name suffixes of one variable within a term."""
    if mf.kinds[var] == "numeric":
        col = mf.data[var] if values is None else values[var]
        return np.asarray(col, dtype=float)[:, None], [var]
    lv = mf.levels[var]
    raw = mf.data[var] if values is None else values[var]
    index = {v: i for i, v in enumerate(lv)}
    codes = np.array([index[v] for v in raw], dtype=np.int64)
    indicators = np.zeros((len(codes), len(lv)))
    indicators[np.arange(len(codes)), codes] = 1.0
    if contrasts and scheme == "treatment":
        return indicators[:, 1:], [f"{var}{level}" for level in lv[1:]]
    if contrasts:
        return indicators @ contr_sum(len(lv)), [f"{var}{j + 1}" for j in range(len(lv) - 1)]
    return indicators, [f"{var}{level}" for level in lv]


def term_coding(
    terms: tuple[Term, ...], intercept: bool, mf: ModelFrame
) -> dict[str, dict[str, str]]:
    """R's choice per term and factor: contrasts if the term's margin is in the model."""
    present = {frozenset(t) for t in terms}
    if intercept:
        present.add(frozenset())
    coding: dict[str, dict[str, str]] = {}
    for term in terms:
        label = ":".join(term)
        coding[label] = {}
        for var in term:
            if mf.kinds[var] != "factor":
                continue
            margin = frozenset(term) - {var}
            coding[label][var] = "contrasts" if margin in present else "indicators"
    return coding


def model_matrix(
    terms: tuple[Term, ...],
    intercept: bool,
    mf: ModelFrame,
    values: dict[str, np.ndarray] | None = None,
    coding: dict[str, dict[str, str]] | None = None,
    scheme: str = "sum",
) -> DesignMatrix:
    """R's ``model.matrix`` with contr.sum coding (``values`` evaluates it on a grid).

    ``scheme="treatment"`` codes factors with contr.treatment instead.
    """
    n = mf.n if values is None else len(next(iter(values.values())))
    coding = coding or term_coding(terms, intercept, mf)
    blocks: list[np.ndarray] = []
    columns: list[str] = []
    term_columns: dict[str, list[int]] = {}
    if intercept:
        blocks.append(np.ones((n, 1)))
        columns.append("(Intercept)")
        term_columns["(Intercept)"] = [0]
    for term in terms:
        label = ":".join(term)
        block = np.ones((n, 1))
        names = [""]
        for var in term:
            contrasts = coding[label].get(var, "contrasts") == "contrasts"
            cols, suffixes = _variable_block(mf, var, contrasts, values, scheme)
            # the first variable varies fastest: new columns are outer (slow) index
            block = np.einsum("ni,nj->nji", block, cols).reshape(n, -1)
            names = [f"{a}:{b}" if a else b for b in suffixes for a in names]
        start = len(columns)
        blocks.append(block)
        columns.extend(names)
        term_columns[label] = list(range(start, start + len(names)))
    matrix = np.hstack(blocks) if blocks else np.zeros((n, 0))
    return DesignMatrix(matrix, columns, term_columns, coding)


@dataclass
class RandomBlock:
    """One random-effect term laid out as lme4 does."""

    term: RandomTerm
    group_name: str
    levels: list[str]
    effect_names: list[str]  # "(Intercept)", "x", ...
    z: np.ndarray  # n × (m * p), group-major
    codes: np.ndarray | None = None  # group index (0..m−1) of each observation
    lhs: np.ndarray | None = None  # n × p effect columns (the term's left-hand side)

    @property
    def n_levels(self) -> int:
        return len(self.levels)

    @property
    def n_effects(self) -> int:
        return len(self.effect_names)

    @property
    def n_theta(self) -> int:
        p = self.n_effects
        return p * (p + 1) // 2


def random_blocks(
    formula: Formula, mf: ModelFrame, error: ErrorFactory | None = None
) -> list[RandomBlock]:
    """Z blocks of the random-effect terms, ordered as lme4 orders them (most groups first)."""
    err = error or _default_error
    blocks: list[RandomBlock] = []
    for rt in formula.random_terms:
        if len(rt.group) == 1:
            group_values = np.asarray(mf.data[rt.group[0]]).astype(str)
        else:
            group_values = np.array(
                [
                    ":".join(parts)
                    for parts in zip(*(mf.data[g].astype(str) for g in rt.group), strict=True)
                ]
            )
        # np.unique sorts by code point, as Python's sorted() does for str
        uniq, codes = np.unique(group_values, return_inverse=True)
        levels = [str(v) for v in uniq]
        codes = codes.reshape(-1).astype(np.int64)
        if len(levels) < 2:
            raise err(
                f"the grouping factor '{rt.group_name}' has only one group "
                f"({levels[0]!r}); a random effect needs at least two groups — drop "
                f"(… | {rt.group_name}) from the formula",
                None,
                rt.group[0],
            )
        lhs = model_matrix(rt.effects, rt.intercept, mf)
        p = lhs.matrix.shape[1]
        m = len(levels)
        if m >= mf.n and p == 1:
            raise err(
                f"the grouping factor '{rt.group_name}' has as many groups ({m}) as there are "
                f"observations ({mf.n}); its variance cannot be told apart from the residual",
                None,
                rt.group[0],
            )
        if m * p > mf.n and p > 1:
            raise err(
                f"the term ( … | {rt.group_name}) has {m * p} random effects for {mf.n} "
                "observations; its variances cannot be identified",
                None,
                rt.group[0],
            )
        z = np.zeros((mf.n, m * p))
        rows = np.arange(mf.n)
        for j in range(p):
            z[rows, codes * p + j] = lhs.matrix[:, j]
        blocks.append(RandomBlock(rt, rt.group_name, levels, lhs.columns, z, codes, lhs.matrix))
    # lme4 (mkReTrms) orders the terms by decreasing number of groups
    order = sorted(range(len(blocks)), key=lambda i: -blocks[i].n_levels)
    return [blocks[i] for i in order]


def check_fixed_design(
    design: DesignMatrix, mf: ModelFrame, terms: tuple[Term, ...], error: ErrorFactory | None = None
) -> None:
    """Clear errors for one-level factors and collinear (rank-deficient) fixed effects."""
    err = error or _default_error
    for term in terms:
        for var in term:
            if mf.kinds[var] == "factor" and len(mf.levels[var]) < 2:
                raise err(
                    f"the factor '{var}' has only one level ({mf.levels[var][0]!r}) in the rows "
                    "used; an effect of it cannot be estimated — drop it from the formula",
                    None,
                    var,
                )
    x = design.matrix
    if x.shape[1] == 0:
        return
    if x.shape[0] <= x.shape[1]:
        raise err(
            f"{x.shape[0]} observations are too few for {x.shape[1]} fixed-effect coefficients",
            None,
            None,
        )
    scale = np.sqrt((x**2).sum(axis=0))
    scale[scale == 0] = 1.0
    import scipy.linalg

    _, r, piv = scipy.linalg.qr(x / scale, mode="economic", pivoting=True)
    d = np.abs(np.diag(r))
    tol = d.max() * max(x.shape) * np.finfo(float).eps * 1e3
    rank = int((d > tol).sum())
    if rank == x.shape[1]:
        return
    aliased = [design.columns[i] for i in sorted(piv[rank:])]
    label = next(
        (t for t, cols in design.term_columns.items() if design.columns.index(aliased[0]) in cols),
        aliased[0],
    )
    term_vars = label.split(":")
    factor_vars = [v for v in term_vars if mf.kinds.get(v) == "factor"]
    hint = ""
    if len(factor_vars) > 1:
        combos = pd.DataFrame({v: mf.data[v] for v in factor_vars}).drop_duplicates()
        expected = int(np.prod([len(mf.levels[v]) for v in factor_vars]))
        if len(combos) < expected:
            full = pd.MultiIndex.from_product([mf.levels[v] for v in factor_vars])
            seen = set(map(tuple, combos.to_numpy().tolist()))
            empty = [c for c in full if tuple(c) not in seen]
            shown = ", ".join("/".join(c) for c in empty[:5])
            hint = (
                f"; the interaction {label} has {len(empty)} empty cell(s) ({shown}"
                f"{', …' if len(empty) > 5 else ''}) — drop the interaction or the levels "
                "without data"
            )
    raise err(
        f"the fixed effects are perfectly collinear: coefficient(s) {', '.join(aliased)} "
        f"cannot be separated from the others{hint}",
        None,
        term_vars[0] if label != "(Intercept)" else None,
    )
