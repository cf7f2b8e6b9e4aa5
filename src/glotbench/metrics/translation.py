"""Translation metrics: BLEU, chrF and chrF++ on sacrebleu's sufficient statistics.

The per-example statistics are sacrebleu's own segment statistics (sacrebleu
≥ 2.4, ``Metric._extract_corpus_statistics``, i.e. the same numbers
``sacrebleu.corpus_bleu`` / ``corpus_chrf`` sum before scoring), so tokenisation,
n-gram extraction and multi-reference handling are sacrebleu's. ``score()`` is
an independent, vectorised reimplementation of sacrebleu's corpus score from
the summed statistics (``BLEU.compute_bleu`` and ``CHRF._compute_f_score``), and
equals ``sacrebleu.corpus_bleu`` / ``sacrebleu.corpus_chrf`` (tested to 1e-9).

**Scale: 0–100**, as sacrebleu reports them (all other glotbench metrics are 0–1).

The prediction is a string; the reference a string or a list of reference
strings (multi-reference; the number may vary between examples).

BLEU (Papineni et al. 2002; Post 2018)
--------------------------------------
Statistics ``[hyp_len, ref_len, correct_1..N, total_1..N]`` (N = 4): hypothesis
length, closest reference length (ties → shorter), clipped n-gram matches and
hypothesis n-gram counts, after the ``13a`` tokeniser. From the sums::

    BP  = 1 if hyp_len ≥ ref_len else exp(1 − ref_len / hyp_len)   (0 if hyp_len = 0)
    p_n = 100 · correct_n / total_n
    BLEU = BP · exp( (1/N) Σ_n log p_n )

and 0 when no n-gram matches at all. Orders are visited from n = 1 and the
visit stops at the first order with ``total_n = 0``; unvisited orders have
p_n = 0, whose log sacrebleu floors at −9999999999 (so BLEU = 0 unless
``effective_order`` drops them from the mean). Smoothing (Chen & Cherry 2014)
of visited orders with ``correct_n = 0``: ``exp`` (default, NIST mteval-v13a
method 3) p_n = 100 / (2^j · total_n) for the j-th such order; ``floor``
p_n = 100 · ε / total_n (ε = 0.1); ``add-k`` adds k (= 1) to correct_n and
total_n for n ≥ 2; ``none`` leaves p_n = 0.

chrF / chrF++ (Popović 2015, 2017)
----------------------------------
Statistics per order — character n-grams n = 1..6 (whitespace removed), then
for chrF++ word n-grams n = 1..2 — ``[hyp, ref, match]`` (hypothesis n-grams,
reference n-grams, clipped matches; with several references, the segment's
statistics are those of the reference with the best sentence chrF). From the
sums, sacrebleu ≥ 2.0's default (effective-order averaging)::

    P = mean over orders with hyp > 0 and ref > 0 of match / hyp
    R = mean over the same orders of match / ref
    chrF_β = 100 · (1 + β²) P R / (β² P + R)        (β = 2; 0 if P + R = 0)

With ``eps_smoothing=True`` (chrF++.py / Moses / NLTK style) the per-order
F_β scores are averaged instead, with ε = 1e-16 for undefined parts.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import numpy.typing as npt

from glotbench.errors import InputError
from glotbench.metrics.base import FloatArray, Metric, as_float_array
from glotbench.metrics.constraints import StatConstraints
from glotbench.metrics.registration import register_metric

#: sacrebleu's floor for log(0) (``sacrebleu.utils.my_log``)
_LOG_ZERO = -9999999999.0
#: sacrebleu's BLEU smoothing defaults (``BLEU.SMOOTH_DEFAULTS``)
_SMOOTH_DEFAULTS: dict[str, float | None] = {"none": None, "floor": 0.1, "add-k": 1.0, "exp": None}
#: sacrebleu's chrF epsilon (``CHRF._compute_f_score``)
_CHRF_EPS = 1e-16


def _reference_streams(
    predictions: Sequence[Any], references: Sequence[Any], metric: str
) -> list[list[str | None]]:
    """Per-example references → sacrebleu's reference streams (padded with None)."""
    for i, pred in enumerate(predictions):
        if not isinstance(pred, str):
            raise InputError(f"{metric}: prediction {i} must be a string, got {pred!r}")
    per_example: list[list[str]] = []
    for i, ref in enumerate(references):
        refs = [ref] if isinstance(ref, str) else list(ref)
        if not refs:
            raise InputError(f"{metric}: example {i} has no reference; give at least one string")
        for r in refs:
            if not isinstance(r, str):
                raise InputError(f"{metric}: references of example {i} must be strings, got {r!r}")
        per_example.append(refs)
    n_streams = max(len(refs) for refs in per_example)
    return [[refs[j] if j < len(refs) else None for refs in per_example] for j in range(n_streams)]


class _SacreMetric(Metric):
    """A metric whose statistics are sacrebleu's segment statistics."""

    score_range = (0.0, 100.0)

    def _sacre(self) -> Any:
        """The sacrebleu metric object (built lazily: sacrebleu is slow to import)."""
        raise NotImplementedError

    def __getstate__(self) -> dict[str, Any]:
        # the sacrebleu object (tokeniser caches, sentencepiece models) is rebuilt on demand
        return {**self.__dict__, "_metric": None}

    def example_stats(self, prediction: Any, reference: Any) -> FloatArray:
        return self.stats([prediction], [reference])[0]

    def stats(self, predictions: Sequence[Any], references: Sequence[Any]) -> FloatArray:
        if len(predictions) != len(references):
            return super().stats(predictions, references)  # raises the clear error
        if len(references) == 0:
            return np.zeros((0, self.n_stats), dtype=np.float64)
        streams = _reference_streams(predictions, references, self.name)
        segment_stats = self._sacre()._extract_corpus_statistics(list(predictions), streams)
        return np.asarray(segment_stats, dtype=np.float64).reshape(len(references), self.n_stats)


@register_metric("bleu", aliases=("sacrebleu",))
class Bleu(_SacreMetric):
    """Corpus BLEU exactly as ``sacrebleu.corpus_bleu`` (0–100)."""

    name = "bleu"
    description = "corpus BLEU as sacrebleu (13a tokeniser, exp smoothing), 0-100"

    def __init__(
        self,
        tokenize: str = "13a",
        lowercase: bool = False,
        smooth_method: str = "exp",
        smooth_value: float | None = None,
        max_ngram_order: int = 4,
        effective_order: bool = False,
    ) -> None:
        if smooth_method not in _SMOOTH_DEFAULTS:
            raise InputError(
                f"bleu: unknown smooth_method {smooth_method!r}; "
                f"choose one of {', '.join(_SMOOTH_DEFAULTS)}"
            )
        if int(max_ngram_order) < 1:
            raise InputError("bleu: max_ngram_order must be at least 1")
        self.tokenize = tokenize
        self.lowercase = bool(lowercase)
        self.smooth_method = smooth_method
        self.smooth_value = smooth_value
        self.max_ngram_order = int(max_ngram_order)
        self.effective_order = bool(effective_order)
        self._metric: Any = None

    def config(self) -> dict[str, Any]:
        return {
            "tokenize": self.tokenize,
            "lowercase": self.lowercase,
            "smooth_method": self.smooth_method,
            "smooth_value": self.smooth_value,
            "max_ngram_order": self.max_ngram_order,
            "effective_order": self.effective_order,
        }

    def _sacre(self) -> Any:
        if self._metric is None:
            from sacrebleu.metrics import BLEU

            self._metric = BLEU(
                lowercase=self.lowercase,
                tokenize=self.tokenize,
                smooth_method=self.smooth_method,
                smooth_value=self.smooth_value,
                max_ngram_order=self.max_ngram_order,
                effective_order=self.effective_order,
            )
        return self._metric

    def stat_names(self) -> tuple[str, ...]:
        orders = range(1, self.max_ngram_order + 1)
        return (
            "hyp_len",
            "ref_len",
            *(f"correct_{n}" for n in orders),
            *(f"total_{n}" for n in orders),
        )

    def constraints(self) -> StatConstraints:
        """Lengths and n-gram counts; matches of an order ≤ the hypothesis's n-grams."""
        orders = range(1, self.max_ngram_order + 1)
        return StatConstraints(
            counts=self.stat_names(),
            at_most=tuple((f"correct_{n}", f"total_{n}") for n in orders),
        )

    def score(self, summed: npt.ArrayLike) -> FloatArray:
        n_orders = self.max_ngram_order
        arr = as_float_array(summed, 2 + 2 * n_orders, self.name)
        sys_len, ref_len = arr[..., 0], arr[..., 1]
        correct = arr[..., 2 : 2 + n_orders].copy()
        total = arr[..., 2 + n_orders :].copy()
        any_match = (correct > 0).any(axis=-1)  # sacrebleu's early stop (#141) uses raw counts

        # brevity penalty
        bp = np.ones_like(sys_len)
        short = sys_len < ref_len
        ratio = np.divide(ref_len, sys_len, out=np.zeros_like(sys_len), where=sys_len > 0)
        bp = np.where(short, np.where(sys_len > 0, np.exp(1.0 - ratio), 0.0), bp)

        # sacrebleu's default value for floor / add-k (unused by exp and none)
        smooth_value = self.smooth_value
        if smooth_value is None:
            smooth_value = _SMOOTH_DEFAULTS[self.smooth_method] or 0.0
        if self.smooth_method == "add-k" and n_orders > 1:
            correct[..., 1:] += smooth_value
            total[..., 1:] += smooth_value

        # orders visited before the first order with no hypothesis n-gram
        visited = np.cumprod(total > 0, axis=-1).astype(bool)
        safe_total = np.where(total > 0, total, 1.0)
        precision = np.where(visited, 100.0 * correct / safe_total, 0.0)
        unmatched = visited & (correct == 0)
        if self.smooth_method == "exp":
            doublings = np.cumsum(unmatched, axis=-1)
            precision = np.where(unmatched, 100.0 / (2.0**doublings * safe_total), precision)
        elif self.smooth_method == "floor":
            precision = np.where(unmatched, 100.0 * smooth_value / safe_total, precision)

        positive = precision > 0
        logs = np.where(positive, np.log(np.where(positive, precision, 1.0)), _LOG_ZERO)
        if self.effective_order:
            eff_order = np.maximum(visited.sum(axis=-1), 1)
            logs = np.where(visited, logs, 0.0)
        else:
            eff_order = np.full(sys_len.shape, n_orders)
        log_sum = logs[..., 0]
        for n in range(1, n_orders):  # left-to-right, as sacrebleu's sum()
            log_sum = log_sum + logs[..., n]
        bleu = bp * np.exp(log_sum / eff_order)
        return np.where(any_match, bleu, 0.0)


@register_metric("chrf", aliases=("chrf2",))
class ChrF(_SacreMetric):
    """Corpus chrF exactly as ``sacrebleu.corpus_chrf`` (0–100)."""

    name = "chrf"
    description = "corpus chrF (character 6-grams, beta=2) as sacrebleu, 0-100"
    default_word_order = 0

    def __init__(
        self,
        char_order: int = 6,
        word_order: int | None = None,
        beta: int = 2,
        lowercase: bool = False,
        whitespace: bool = False,
        eps_smoothing: bool = False,
    ) -> None:
        self.char_order = int(char_order)
        self.word_order = int(self.default_word_order if word_order is None else word_order)
        if self.char_order < 0 or self.word_order < 0 or self.char_order + self.word_order < 1:
            raise InputError(f"{self.name}: char_order + word_order must be at least 1")
        self.beta = beta
        self.lowercase = bool(lowercase)
        self.whitespace = bool(whitespace)
        self.eps_smoothing = bool(eps_smoothing)
        self._metric: Any = None

    def config(self) -> dict[str, Any]:
        return {
            "char_order": self.char_order,
            "word_order": self.word_order,
            "beta": self.beta,
            "lowercase": self.lowercase,
            "whitespace": self.whitespace,
            "eps_smoothing": self.eps_smoothing,
        }

    def _sacre(self) -> Any:
        if self._metric is None:
            from sacrebleu.metrics import CHRF

            self._metric = CHRF(
                char_order=self.char_order,
                word_order=self.word_order,
                beta=self.beta,
                lowercase=self.lowercase,
                whitespace=self.whitespace,
                eps_smoothing=self.eps_smoothing,
            )
        return self._metric

    def stat_names(self) -> tuple[str, ...]:
        orders = [f"char{n}" for n in range(1, self.char_order + 1)]
        orders += [f"word{n}" for n in range(1, self.word_order + 1)]
        return tuple(f"{kind}_{order}" for order in orders for kind in ("hyp", "ref", "match"))

    def constraints(self) -> StatConstraints:
        """n-gram counts; matches ≤ hypothesis n-grams and ≤ reference n-grams."""
        names = self.stat_names()
        orders = [n[len("match_") :] for n in names if n.startswith("match_")]
        pairs = tuple((f"match_{o}", f"{kind}_{o}") for o in orders for kind in ("hyp", "ref"))
        return StatConstraints(counts=names, at_most=pairs)

    def score(self, summed: npt.ArrayLike) -> FloatArray:
        n_orders = self.char_order + self.word_order
        arr = as_float_array(summed, 3 * n_orders, self.name)
        per_order = arr.reshape(*arr.shape[:-1], n_orders, 3)
        hyp, ref, match = per_order[..., 0], per_order[..., 1], per_order[..., 2]
        factor = float(self.beta**2)
        prec_ok, rec_ok = hyp > 0, ref > 0
        prec = np.divide(match, hyp, out=np.zeros_like(match), where=prec_ok)
        rec = np.divide(match, ref, out=np.zeros_like(match), where=rec_ok)

        if self.eps_smoothing:
            prec = np.where(prec_ok, prec, _CHRF_EPS)
            rec = np.where(rec_ok, rec, _CHRF_EPS)
            denom = factor * prec + rec
            f_order = np.divide(
                (1 + factor) * prec * rec,
                denom,
                out=np.full_like(denom, _CHRF_EPS),
                where=denom > 0,
            )
            total = f_order[..., 0]
            for n in range(1, n_orders):
                total = total + f_order[..., n]
            return 100 * total / n_orders

        effective = prec_ok & rec_ok
        prec = np.where(effective, prec, 0.0)
        rec = np.where(effective, rec, 0.0)
        sum_prec, sum_rec = prec[..., 0], rec[..., 0]
        for n in range(1, n_orders):  # left-to-right, as sacrebleu's loop
            sum_prec = sum_prec + prec[..., n]
            sum_rec = sum_rec + rec[..., n]
        eff_order = effective.sum(axis=-1)
        safe_eff = np.maximum(eff_order, 1)
        avg_prec = np.where(eff_order > 0, sum_prec / safe_eff, 0.0)
        avg_rec = np.where(eff_order > 0, sum_rec / safe_eff, 0.0)
        num = (1 + factor) * avg_prec * avg_rec
        denom = factor * avg_prec + avg_rec
        f_score = np.divide(num, denom, out=np.zeros_like(num), where=(avg_prec + avg_rec) != 0)
        return 100 * f_score


@register_metric("chrf++", aliases=("chrfpp", "chrf_pp"))
class ChrFPlusPlus(ChrF):
    """Corpus chrF++ (chrF with word uni- and bigrams, ``word_order=2``), as sacrebleu (0–100)."""

    name = "chrf++"
    description = "corpus chrF++ (chrF plus word 1-2-grams) as sacrebleu, 0-100"
    default_word_order = 2
