"""Parse lme4 model formulas: ``y ~ a * b + (1 | g) + (1 | a/b) + (1 + x || g)``.

The fixed part follows R's ``terms.formula``: ``+`` joins terms, ``-`` removes
them, ``:`` interacts, ``a * b`` is ``a + b + a:b``, ``a / b`` is ``a + a:b``,
``(a + b + c)^2`` is all interactions up to order 2, ``0`` / ``-1`` drop the
intercept. Terms are ordered as R orders them: by order (number of variables),
then by first appearance; a term's label lists its variables in the order they
first appear in the formula (``task * language`` gives ``task:language``).

Random-effect terms follow lme4: ``(lhs | g)`` with a correlated covariance
matrix of the ``lhs`` effects, ``(lhs || g)`` with independent ones (split into
one term per effect), and ``g1/g2`` grouping expanded to ``(lhs | g1)`` and
``(lhs | g2:g1)`` (named like lme4, e.g. ``model:architecture``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from glotbench.errors import InputError

Term = tuple[str, ...]  # variables of a term, in formula order; () is the intercept


@dataclass(frozen=True)
class RandomTerm:
    """One random-effect term ``(effects | group)``.

    ``effects`` are the fixed-style terms of the left-hand side (without the
    intercept), ``intercept`` says whether it has a random intercept, and
    ``group`` the grouping variables (their interaction for ``a:b``).
    """

    effects: tuple[Term, ...]
    intercept: bool
    group: tuple[str, ...]

    @property
    def group_name(self) -> str:
        return ":".join(self.group)


@dataclass(frozen=True)
class Formula:
    """A parsed model formula."""

    text: str
    response: str
    fixed_terms: tuple[Term, ...]
    intercept: bool
    random_terms: tuple[RandomTerm, ...]
    variables: tuple[str, ...] = field(default=())  # fixed-part variables, formula order

    @property
    def term_labels(self) -> list[str]:
        return [":".join(t) for t in self.fixed_terms]

    @property
    def all_variables(self) -> list[str]:
        seen: dict[str, None] = {self.response: None}
        for v in self.variables:
            seen.setdefault(v, None)
        for rt in self.random_terms:
            for term in rt.effects:
                for v in term:
                    seen.setdefault(v, None)
            for v in rt.group:
                seen.setdefault(v, None)
        return list(seen)


# ---------------------------------------------------------------------------
# tokenizer and recursive-descent parser of the fixed-effects algebra
# ---------------------------------------------------------------------------

_TOKEN = re.compile(r"\s*(?:(`[^`]+`)|([A-Za-z._][A-Za-z0-9._]*)|(\d+)|(\|\||[-+*/:^()|]))")


def _tokenize(text: str, formula: str) -> list[str]:
    tokens: list[str] = []
    pos = 0
    text = text.rstrip()
    while pos < len(text):
        m = _TOKEN.match(text, pos)
        if m is None or m.end() == pos:
            raise _error(formula, f"cannot read {text[pos:].strip()[:20]!r}")
        tok = next(g for g in m.groups() if g is not None)
        tokens.append(tok)
        pos = m.end()
    return tokens


def _error(formula: str, reason: str) -> InputError:
    return InputError(
        f"invalid model formula {formula!r}: {reason}; write it as in lme4, e.g. "
        "'score ~ language * task + (1 | model)'",
        field="formula",
    )


@dataclass
class _Expr:
    """Value of a formula sub-expression: ordered terms and an intercept flag."""

    terms: list[frozenset[str]]
    intercept: bool | None = None  # True: `1`, False: `0`, None: unspecified


def _union(a: list[frozenset[str]], b: list[frozenset[str]]) -> list[frozenset[str]]:
    out = list(a)
    for t in b:
        if t not in out:
            out.append(t)
    return out


def _interact(a: list[frozenset[str]], b: list[frozenset[str]]) -> list[frozenset[str]]:
    out: list[frozenset[str]] = []
    for ta in a:
        for tb in b:
            t = ta | tb
            if t not in out:
                out.append(t)
    return out


class _Parser:
    def __init__(self, tokens: list[str], formula: str) -> None:
        self.tokens = tokens
        self.pos = 0
        self.formula = formula
        self.order: dict[str, int] = {}

    def peek(self) -> str | None:
        return self.tokens[self.pos] if self.pos < len(self.tokens) else None

    def take(self, expected: str | None = None) -> str:
        tok = self.peek()
        if tok is None or (expected is not None and tok != expected):
            want = f"{expected!r}" if expected else "more"
            raise _error(self.formula, f"expected {want} at the end")
        self.pos += 1
        return tok

    # sum := product (('+' | '-') product)*
    def parse_sum(self) -> _Expr:
        if self.peek() == "-":  # leading '-1'
            self.take()
            right = self.parse_product()
            value = _Expr([], None)
            return self._minus_chain(self._minus(value, right))
        value = self.parse_product()
        return self._minus_chain(value)

    def _minus_chain(self, value: _Expr) -> _Expr:
        while self.peek() in ("+", "-"):
            op = self.take()
            right = self.parse_product()
            if op == "+":
                intercept = value.intercept
                if right.intercept is not None:
                    intercept = right.intercept
                value = _Expr(_union(value.terms, right.terms), intercept)
            else:
                value = self._minus(value, right)
        return value

    @staticmethod
    def _minus(value: _Expr, right: _Expr) -> _Expr:
        intercept = value.intercept
        if right.intercept is True:
            intercept = False
        elif right.intercept is False:
            intercept = True
        return _Expr([t for t in value.terms if t not in right.terms], intercept)

    # product := interaction (('*' | '/') interaction)*
    def parse_product(self) -> _Expr:
        value = self.parse_interaction()
        while self.peek() in ("*", "/"):
            op = self.take()
            right = self.parse_interaction()
            if op == "*":
                terms = _union(
                    _union(value.terms, right.terms), _interact(value.terms, right.terms)
                )
            else:
                outer = frozenset().union(*value.terms) if value.terms else frozenset()
                terms = _union(value.terms, _interact([outer], right.terms))
            value = _Expr(terms, value.intercept if value.intercept is not None else None)
        return value

    # interaction := power (':' power)*
    def parse_interaction(self) -> _Expr:
        value = self.parse_power()
        while self.peek() == ":":
            self.take()
            right = self.parse_power()
            value = _Expr(_interact(value.terms, right.terms), None)
        return value

    # power := atom ('^' integer)?
    def parse_power(self) -> _Expr:
        value = self.parse_atom()
        if self.peek() == "^":
            self.take()
            tok = self.take()
            if not tok.isdigit() or int(tok) < 1:
                raise _error(self.formula, "'^' needs a positive whole number")
            result = _Expr(list(value.terms), value.intercept)
            for _ in range(int(tok) - 1):
                result = _Expr(
                    _union(_union(result.terms, value.terms), _interact(result.terms, value.terms)),
                    value.intercept,
                )
            value = result
        return value

    def parse_atom(self) -> _Expr:
        tok = self.peek()
        if tok is None:
            raise _error(self.formula, "a term is missing")
        if tok == "(":
            self.take()
            value = self.parse_sum()
            self.take(")")
            return value
        if tok.isdigit():
            self.take()
            if tok not in ("0", "1"):
                raise _error(self.formula, f"the number {tok} is not a term (only 0 and 1 are)")
            return _Expr([], tok == "1")
        if tok in ("+", "-", "*", "/", ":", "^", ")", "|", "||"):
            raise _error(self.formula, f"unexpected {tok!r}")
        self.take()
        name = tok[1:-1] if tok.startswith("`") else tok
        if self.peek() == "(":
            raise _error(
                self.formula,
                f"functions such as {name}(...) are not supported; add a transformed column",
            )
        self.order.setdefault(name, len(self.order))
        return _Expr([frozenset([name])], None)


def _ordered_terms(terms: list[frozenset[str]], order: dict[str, int]) -> tuple[Term, ...]:
    """R's term order: by number of variables, then first appearance; variables in formula order."""
    indexed = list(enumerate(terms))
    indexed.sort(key=lambda it: (len(it[1]), it[0]))
    return tuple(tuple(sorted(t, key=lambda v: order[v])) for _, t in indexed)


def _split_top_level(text: str, sep: str, formula: str) -> list[str]:
    """Split at ``sep`` outside parentheses."""
    pieces: list[str] = []
    depth = 0
    cur: list[str] = []
    for ch in text:
        if ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
            if depth < 0:
                raise _error(formula, "unbalanced parentheses")
        if ch == sep and depth == 0:
            pieces.append("".join(cur))
            cur = []
        else:
            cur.append(ch)
    if depth != 0:
        raise _error(formula, "unbalanced parentheses")
    pieces.append("".join(cur))
    return pieces


def _split_random(rhs: str, formula: str) -> tuple[str, list[tuple[str, str, bool]]]:
    """Separate the ``(lhs | g)`` parts of the right-hand side from the fixed part."""
    parts: list[tuple[str, str, bool]] = []
    fixed: list[str] = []
    for piece in _split_top_level(rhs, "+", formula):
        p = piece.strip()
        if p.startswith("(") and p.endswith(")") and "|" in p:
            inner = p[1:-1]
            if _split_top_level(inner, "|", formula) == [inner]:
                fixed.append(piece)  # the bar is nested deeper: not a random term
                continue
            if "||" in inner:
                lhs, grp = inner.split("||", 1)
                parts.append((lhs.strip(), grp.strip(), False))
            else:
                lhs, grp = inner.split("|", 1)
                parts.append((lhs.strip(), grp.strip(), True))
        else:
            if "|" in p:
                raise _error(formula, f"write random-effect terms in parentheses: ({p})")
            fixed.append(piece)
    return "+".join(fixed), parts


def parse_formula(text: str) -> Formula:
    """Parse an lme4 formula; raises InputError with a clear reason."""
    if "~" not in text:
        raise _error(text, "no '~' between the response and the terms")
    lhs, rhs = text.split("~", 1)
    response_tokens = _tokenize(lhs, text)
    if len(response_tokens) != 1 or not re.match(r"^[`A-Za-z._]", response_tokens[0]):
        raise _error(text, "the response must be a single column name left of '~'")
    response = response_tokens[0].strip("`")
    if not rhs.strip():
        raise _error(text, "no terms right of '~'")

    fixed_text, random_parts = _split_random(rhs, text)
    fixed_expr_text = fixed_text if fixed_text.strip() else "1"
    parser = _Parser(_tokenize(fixed_expr_text, text), text)
    value = parser.parse_sum()
    if parser.peek() is not None:
        raise _error(text, f"unexpected {parser.peek()!r}")
    if any(len(t) == 0 for t in value.terms):
        raise _error(text, "empty term")
    fixed_terms = _ordered_terms(value.terms, parser.order)
    intercept = value.intercept is not False

    random_terms: list[RandomTerm] = []
    for lhs_text, grp_text, correlated in random_parts:
        rparser = _Parser(_tokenize(lhs_text or "1", text), text)
        lhs_value = rparser.parse_sum()
        if rparser.peek() is not None:
            raise _error(text, f"unexpected {rparser.peek()!r} in a random-effect term")
        for v in rparser.order:
            parser.order.setdefault(v, len(parser.order))
        effects = _ordered_terms(lhs_value.terms, rparser.order)
        r_intercept = lhs_value.intercept is not False
        if not effects and not r_intercept:
            raise _error(text, f"the random-effect term ({lhs_text} | {grp_text}) has no effects")
        groups = _grouping(grp_text, text)
        for group in groups:
            if correlated:
                random_terms.append(RandomTerm(effects, r_intercept, group))
            else:  # `||`: one independent term per effect
                if r_intercept:
                    random_terms.append(RandomTerm((), True, group))
                for eff in effects:
                    random_terms.append(RandomTerm((eff,), False, group))
    return Formula(
        text=text,
        response=response,
        fixed_terms=fixed_terms,
        intercept=intercept,
        random_terms=tuple(random_terms),
        variables=tuple(v for v in parser.order if any(v in t for t in fixed_terms)),
    )


def _grouping(text: str, formula: str) -> list[tuple[str, ...]]:
    """Grouping factors of a random term: ``a`` → [a]; ``a/b`` → [a, b:a]; ``a:b`` → [a:b]."""
    tokens = _tokenize(text, formula)
    names = [t.strip("`") for t in tokens if t not in ("/", ":", "(", ")")]
    ops = [t for t in tokens if t in ("/", ":")]
    if not names or any(t in ("+", "-", "*", "^", "|", "||") for t in tokens):
        raise _error(formula, f"cannot read the grouping factor {text!r}; use g, g1/g2 or g1:g2")
    if "/" in ops and ":" in ops:
        raise _error(formula, f"mixing '/' and ':' in the grouping {text!r} is not supported")
    if "/" in ops:
        # lme4's expandSlash: a/b/c -> a, b:a, c:b:a
        return [tuple(reversed(names[: i + 1])) for i in range(len(names))]
    return [tuple(names)]
