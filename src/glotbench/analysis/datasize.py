"""How much test data is enough: ranking stability under test-set subsampling.

After van der Goot, Liu & Müller-Eberstein ("Enough is enough! …", the
evaluation-size study): for each size M (in tokens) and sampling strategy,
draw many subsets of whole sentences, score every system on each subset and
compare the subset ranking with the full-set ranking.

Strategies (sentences are kept whole; a subset is the smallest run of
sentences holding at least M tokens):

* ``SEQ`` — the last M tokens of the test set in its order (one draw);
* ``RAND`` — sentences in a uniformly random order, without replacement;
* ``RAND_SEQ`` — a contiguous block starting at a uniformly random sentence
  (among the starts that leave at least M tokens).

SEQ and RAND_SEQ depend on the order of the examples: they are stretches of
the source document only when the examples are in the source's order (a
CoNLL-U file; the store's ``source_position``, see
:mod:`glotbench.analysis.sources.datasize_store`). In any other order — a shuffled
test split — they are random samples; ``order`` in the result says which
order was used.

A subset is a 0/1 row of W in ``score(W @ S)`` (:func:`glotbench.resample.mask_scores`),
so a draw costs one matrix product, never a recomputation from text.

Agreement with the full set, per draw:

* weighted Kendall's τ with Vigna's (2015) additive hyperbolic weights — for
  systems i, j with ranks ρ (0 = best, lexicographic by (x, y) decreasing) and
  weights w_ij = 1/(ρ_i + 1) + 1/(ρ_j + 1)::

      τ_w(x, y) = Σ_{i<j} w_ij sgn(x_i − x_j) sgn(y_i − y_j)
                  / √(Σ_{i<j} w_ij [x_i ≠ x_j] · Σ_{i<j} w_ij [y_i ≠ y_j])

  averaged over the ranks from (x, y) and from (y, x) — exactly
  ``scipy.stats.weightedtau(x, y)`` (``rank=True``), vectorised over draws;
  computed for models (the mean score over a model's seeds) and with every
  seed as a separate system;
* ASO agreement (models with several seeds): the matrix of pairwise
  decisions ε_min < 0.5 (:mod:`glotbench.analysis.aso`) on the subset against
  the full set — number of disagreeing ordered pairs and mean |Δε_min|.

The recommendation is the smallest size whose mean τ reaches ``level``
(default 0.9) and stays at or above it for every larger size.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt
import pandas as pd

from glotbench.analysis.aso import batched_multi_aso
from glotbench.analysis.results import records
from glotbench.errors import InputError
from glotbench.metrics.base import Metric
from glotbench.resample.engine import ScoreFn, as_systems, mask_scores, point_scores
from glotbench.resample.weights import BLOCK, block_rng
from glotbench.store.atomic_files import atomic_path

FloatArray = npt.NDArray[np.float64]
STRATEGIES = ("SEQ", "RAND", "RAND_SEQ")
#: the default size grid in tokens; None is the whole test set
DEFAULT_SIZES: tuple[int | None, ...] = (100, 200, 500, 1000, 2000, 5000, 10000, 20000, None)
_DATASIZE_STREAM = 4


# --- weighted Kendall's tau ------------------------------------------------------


def _lexrank(primary: FloatArray, secondary: FloatArray) -> npt.NDArray[np.int64]:
    """Rank 0 = largest by (primary, secondary), per row (ties: irrelevant to τ_w)."""
    order_secondary = np.argsort(-secondary, axis=-1, kind="stable")
    resorted = np.take_along_axis(primary, order_secondary, axis=-1)
    order = np.take_along_axis(
        order_secondary, np.argsort(-resorted, axis=-1, kind="stable"), axis=-1
    )
    rank = np.empty_like(order)
    np.put_along_axis(rank, order, np.arange(order.shape[-1])[None, :], axis=-1)
    return rank


def _tau_one_way(sx: FloatArray, sy: FloatArray, rank: npt.NDArray[np.int64]) -> FloatArray:
    weight = 1.0 / (rank + 1.0)
    w = weight[:, :, None] + weight[:, None, :]
    num = (w * sx * sy).sum(axis=(1, 2))
    dx = (w * np.abs(sx)).sum(axis=(1, 2))
    dy = (w * np.abs(sy)).sum(axis=(1, 2))
    with np.errstate(invalid="ignore", divide="ignore"):
        return num / np.sqrt(dx * dy)


def weighted_tau(x: npt.ArrayLike, y: npt.ArrayLike) -> FloatArray:
    """Vigna's (2015) weighted τ with hyperbolic weights, vectorised over rows.

    ``x`` and ``y`` are (D × m) or (m,) and broadcast against each other; the
    result has one τ per row and equals ``scipy.stats.weightedtau(x_d, y_d)``
    (additive hyperbolic weigher 1/(r + 1), ``rank=True``: the mean of the
    indices ranked by (x, y) and by (y, x)). See the module docstring.
    """
    xa = np.atleast_2d(np.asarray(x, dtype=np.float64))
    ya = np.atleast_2d(np.asarray(y, dtype=np.float64))
    xa, ya = np.broadcast_arrays(xa, ya)
    sx = np.sign(xa[:, :, None] - xa[:, None, :])
    sy = np.sign(ya[:, :, None] - ya[:, None, :])
    forward = _tau_one_way(sx, sy, _lexrank(xa, ya))
    backward = _tau_one_way(sx, sy, _lexrank(ya, xa))
    return (forward + backward) / 2.0


# --- subsets -----------------------------------------------------------------------


def subset_masks(
    tokens: npt.ArrayLike, size: int, strategy: str, n_draws: int, seed: int
) -> FloatArray:
    """0/1 rows (draws × n) of whole sentences holding at least ``size`` tokens.

    ``SEQ`` gives one row (the last sentences); ``RAND`` and ``RAND_SEQ`` give
    ``n_draws`` rows from seeded blocks (``block_rng(seed, block, 4, …)``), so
    rows do not depend on how many are requested at once.
    """
    t = np.asarray(tokens, dtype=np.float64).reshape(-1)
    n = t.size
    if strategy not in STRATEGIES:
        raise InputError(f"unknown strategy {strategy!r}; use {', '.join(STRATEGIES)}")
    if size >= t.sum():
        return np.ones((1, n))
    if strategy == "SEQ":
        from_end = np.cumsum(t[::-1])
        count = int(np.searchsorted(from_end, size, side="left")) + 1
        mask = np.zeros((1, n))
        mask[0, n - count :] = 1.0
        return mask
    code = STRATEGIES.index(strategy)
    out = np.zeros((n_draws, n))
    before = np.concatenate([[0.0], np.cumsum(t)])  # tokens before sentence i
    for start in range(0, n_draws, BLOCK):
        rows = min(BLOCK, n_draws - start)
        rng = block_rng(seed, start // BLOCK, _DATASIZE_STREAM, code, int(size))
        if strategy == "RAND":
            order = np.argsort(rng.random((rows, n)), axis=1)
            ordered = t[order]
            take = (np.cumsum(ordered, axis=1) - ordered) < size
            np.put_along_axis(out[start : start + rows], order, take.astype(np.float64), axis=1)
        else:
            valid_starts = int(np.count_nonzero(before[n] - before[:n] >= size))
            first = rng.integers(0, valid_starts, size=rows)
            index = np.arange(n)[None, :]
            offset = before[:n][None, :] - before[first][:, None]
            out[start : start + rows] = ((index >= first[:, None]) & (offset < size)).astype(
                np.float64
            )
    return out


# --- the analysis ----------------------------------------------------------------


@dataclass(frozen=True)
class DataSizeResult:
    """Agreement of subset rankings with the full-set ranking, per size and strategy.

    Attributes
    ----------
    table : pandas.DataFrame
        One row per (strategy, size, unit) — ``unit`` is ``model`` (mean over
        seeds) or ``seed`` (every run a system) — with the mean, SD and 5–95 %
        quantiles of τ_w over draws, the mean tokens of the subsets and, for
        the model unit with ≥ 2 seeds, mean ASO disagreements and mean
        |Δε_min|.
    recommendation : pandas.DataFrame
        Per (strategy, unit), the smallest size whose mean τ reaches ``level``
        and stays there (None: only the full set does).
    level : float
        The τ a recommended size must reach.
    models : tuple of str
        The models compared.
    n_seeds : int
        Seeds per model.
    n_examples : int
        Examples in the full set.
    n_tokens : float
        Tokens (or words) in the full set.
    n_draws : int
        Subsets per size and strategy.
    seed : int
        Seed of the subsets.
    metric : str or None
        The metric.
    token_unit : str
        What sizes count: ``tokens``, ``words`` or ``examples``.
    full_scores : pandas.DataFrame
        Each run's full-set score.
    notes : tuple of str
        What the reader should know.
    order : str
        The example order SEQ and RAND_SEQ followed — ``input`` (as given),
        ``file`` (a CoNLL-U file's sentence order), ``source_position`` (the
        store's source positions) or ``stored`` (the store's run order,
        shuffled by the runner: SEQ and RAND_SEQ are then random samples).
    """

    table: pd.DataFrame
    recommendation: pd.DataFrame
    level: float
    models: tuple[str, ...]
    n_seeds: int
    n_examples: int
    n_tokens: float
    n_draws: int
    seed: int
    metric: str | None
    token_unit: str
    full_scores: pd.DataFrame = field(repr=False)
    notes: tuple[str, ...] = ()
    order: str = "input"

    def to_frame(self) -> pd.DataFrame:
        """The per-size table."""
        return self.table

    def to_dict(self) -> dict[str, Any]:
        """JSON form."""
        return {
            "analysis": "datasize",
            "metric": self.metric,
            "level": self.level,
            "models": list(self.models),
            "n_seeds": self.n_seeds,
            "n_examples": self.n_examples,
            "n_tokens": self.n_tokens,
            "token_unit": self.token_unit,
            "order": self.order,
            "n_draws": self.n_draws,
            "seed": self.seed,
            "recommendation": records(self.recommendation),
            "table": records(self.table),
            "full_scores": records(self.full_scores),
            "notes": list(self.notes),
        }

    def plot(self, path: str | Path, unit: str = "model") -> Path:
        """Plot mean τ_w (with its 5–95 % band) against size per strategy; write ``path``."""
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt

        out = Path(path)
        data = self.table[self.table["unit"] == unit]
        fig, ax = plt.subplots(figsize=(7, 4.5))
        for strategy in STRATEGIES:
            part = data[data["strategy"] == strategy].sort_values("tokens_mean")
            if part.empty:
                continue
            line = ax.plot(part["tokens_mean"], part["tau_mean"], marker="o", label=strategy)
            ax.fill_between(
                part["tokens_mean"],
                part["tau_q05"],
                part["tau_q95"],
                alpha=0.15,
                color=line[0].get_color(),
            )
        ax.axhline(self.level, color="grey", linestyle="--", linewidth=1, label=f"τ = {self.level}")
        ax.set_xscale("log")
        ax.set_xlabel(f"test-set size ({self.token_unit}, log scale)")
        ax.set_ylabel("weighted Kendall τ vs full set")
        what = "models (mean over seeds)" if unit == "model" else "runs (each seed a system)"
        # parse_math=False: a metric named like ``a$x$`` is text, not TeX (mathtext)
        title = f"Ranking agreement of {what}" + (f", {self.metric}" if self.metric else "")
        ax.set_title(title, parse_math=False)
        ax.legend(loc="lower right")
        ax.grid(True, which="both", alpha=0.3)
        fig.tight_layout()
        out.parent.mkdir(parents=True, exist_ok=True)
        with atomic_path(out) as tmp:  # a killed run keeps the previous figure
            fig.savefig(tmp, dpi=120, format=out.suffix.lstrip(".").lower() or "png")
        plt.close(fig)
        return out


def _model_index(models: Sequence[str]) -> tuple[list[str], npt.NDArray[np.int64]]:
    names: list[str] = []
    index = []
    for m in models:
        if m not in names:
            names.append(m)
        index.append(names.index(m))
    return names, np.asarray(index, dtype=np.int64)


def _recommend(table: pd.DataFrame, level: float) -> pd.DataFrame:
    rows = []
    for (strategy, unit), part in table.groupby(["strategy", "unit"], sort=False):
        part = part.sort_values("tokens_mean")
        ok = (part["tau_mean"] >= level).to_numpy()
        sizes = part["size"].tolist()
        # smallest size from which every larger size also reaches the level
        stays = np.flip(np.logical_and.accumulate(np.flip(ok)))
        first = int(np.argmax(stays)) if stays.any() else None
        chosen = sizes[first] if first is not None else None
        rows.append(
            {
                "strategy": strategy,
                "unit": unit,
                "recommended_size": None if chosen in (None, "all") else int(chosen),
                "full_set_needed": chosen in (None, "all"),
            }
        )
    frame = pd.DataFrame(rows)
    if not frame.empty:  # keep sizes integers next to None (not floats)
        frame["recommended_size"] = pd.Series(
            [r["recommended_size"] for r in rows], dtype=object, index=frame.index
        )
    return frame


def _token_counts(
    tokens: npt.ArrayLike | None, n: int, token_unit: str
) -> tuple[npt.NDArray[np.float64], str]:
    """Each example's token count and the unit of sizes (examples when no counts)."""
    if tokens is None:
        return np.ones(n), "examples"
    t = np.asarray(tokens, dtype=np.float64).reshape(-1)
    if t.size != n:
        raise InputError(f"{t.size} token counts for {n} examples")
    if (t < 0).any():
        raise InputError("token counts must be non-negative")
    return t, token_unit


def _size_grid(
    sizes: Sequence[int | None], total: float, token_unit: str, notes: list[str]
) -> list[tuple[str, int | None]]:
    """(label, size) of every size below the test set's, then ``("all", None)``."""
    grid: list[tuple[str, int | None]] = []
    skipped = []
    for size in sizes:
        if size is None or size >= total:
            if size is not None:
                skipped.append(size)
            continue
        grid.append((f"{int(size)}", int(size)))
    if skipped:
        notes.append(
            f"sizes {', '.join(map(str, skipped))} are not smaller than the test set "
            f"({total:g} {token_unit}); they equal 'all'"
        )
    grid.append(("all", None))
    return grid


def _tau_summary(tau: npt.NDArray[np.float64]) -> dict[str, float]:
    """Mean, SD and 5 % / 95 % quantiles of the finite τ of the draws."""
    finite = tau[np.isfinite(tau)]
    return {
        "tau_mean": float(finite.mean()) if finite.size else float("nan"),
        "tau_sd": float(finite.std(ddof=1)) if finite.size > 1 else 0.0,
        "tau_q05": float(np.quantile(finite, 0.05)) if finite.size else float("nan"),
        "tau_q95": float(np.quantile(finite, 0.95)) if finite.size else float("nan"),
    }


#: the note when ASO agreement cannot be computed
ASO_SKIPPED = (
    "ASO agreement skipped: it needs at least two models with the same number (≥ 2) of seeds"
)


def _check_settings(
    systems: npt.NDArray[np.float64], models: Sequence[str], level: float, strategies: Sequence[str]
) -> None:
    runs, n, _ = systems.shape
    if len(models) != runs:
        raise InputError(f"{len(models)} model labels for {runs} runs")
    if n == 0:
        raise InputError("the test set is empty")
    if not 0.0 < level <= 1.0:
        raise InputError("level must lie in (0, 1]")
    for strategy in strategies:
        if strategy not in STRATEGIES:
            raise InputError(f"unknown strategy {strategy!r}; use {', '.join(STRATEGIES)}")


def _seed_average(
    model_of: npt.NDArray[np.int64], n_models: int
) -> tuple[bool, int, npt.NDArray[np.float64]]:
    """Whether every model has as many seeds, that number, and the averaging matrix.

    The number is 0 if not; the (runs × models) matrix averages each model's runs.
    """
    runs = model_of.size
    seeds_per_model = np.bincount(model_of, minlength=n_models)
    balanced = bool((seeds_per_model == seeds_per_model[0]).all())
    n_seeds = int(seeds_per_model[0]) if balanced else 0
    average = np.zeros((runs, n_models))
    average[np.arange(runs), model_of] = 1.0 / seeds_per_model[model_of]
    return balanced, n_seeds, average


def _full_aso(
    ordered_runs: npt.NDArray[np.float64], n_models: int, iterations: int, seed: int
) -> npt.NDArray[np.float64]:
    """ε_min of every pair of models on the full test set (runs ordered by model)."""
    n_seeds = ordered_runs.size // n_models
    return batched_multi_aso(
        ordered_runs.reshape(1, n_models, n_seeds), num_bootstrap_iterations=iterations, seed=seed
    )[0]


def _aso_agreement(
    draws: npt.NDArray[np.float64],
    full_eps: npt.NDArray[np.float64],
    iterations: int,
    seed: int,
) -> dict[str, Any]:
    """How the ASO decisions on subsets (draws × models × seeds) agree with the full set's."""
    n_models = draws.shape[1]
    off_diagonal = ~np.eye(n_models, dtype=bool)
    eps = batched_multi_aso(draws, num_bootstrap_iterations=iterations, seed=seed)
    disagree = (eps < 0.5) != (full_eps < 0.5)
    return {
        "aso_disagreements_mean": float(disagree[:, off_diagonal].sum(axis=1).mean()),
        "aso_eps_mad_mean": float(np.abs(eps - full_eps)[:, off_diagonal].mean()),
        "aso_draws": int(draws.shape[0]),
    }


def datasize_analysis(
    stats: npt.ArrayLike,
    score: Metric | ScoreFn,
    *,
    models: Sequence[str],
    tokens: npt.ArrayLike | None = None,
    sizes: Sequence[int | None] = DEFAULT_SIZES,
    strategies: Sequence[str] = STRATEGIES,
    n_draws: int = 100,
    level: float = 0.9,
    seed: int = 0,
    aso: bool = True,
    aso_draws: int | None = 25,
    aso_bootstrap_iterations: int = 200,
    token_unit: str = "tokens",
    order: str = "input",
    notes: Sequence[str] = (),
) -> DataSizeResult:
    """Evaluation-size sufficiency of one test set (van der Goot et al.; see module docstring).

    ``stats`` is (runs × n × k) per-example statistics (runs aligned on the
    same n sentences, as ``store.stats.matrix`` returns them) and ``models``
    names each run's model (runs of one model are its seeds). ``tokens`` are
    the sentences' token counts (default: 1 per example, sizes in examples).
    Per size and strategy, ``n_draws`` subsets are scored with
    :func:`glotbench.resample.mask_scores` and compared with the full set by
    :func:`weighted_tau`; with ``aso`` and ≥ 2 seeds per model, the pairwise
    ASO decisions (ε_min < 0.5, Bonferroni-corrected, ``aso_bootstrap_iterations``
    resamples, on the first ``aso_draws`` draws of each cell — the ASO bootstrap
    dominates the cost; ``None`` uses every draw) are compared too.
    SEQ and RAND_SEQ follow the examples' order as given; ``order`` names it
    in the result and ``notes`` are passed on to it (see :class:`DataSizeResult`).
    """
    systems = as_systems(stats)
    _check_settings(systems, models, level, strategies)
    n = systems.shape[1]
    note_list = list(notes)
    t, token_unit = _token_counts(tokens, n, token_unit)
    total = float(t.sum())
    names, model_of = _model_index(list(models))
    n_models = len(names)
    balanced, n_seeds, average = _seed_average(model_of, n_models)

    full_runs = point_scores(systems, score)
    full_models = full_runs @ average
    use_aso = aso and balanced and n_seeds >= 2 and n_models >= 2
    if aso and not use_aso:
        note_list.append(ASO_SKIPPED)
    run_order = np.argsort(model_of, kind="stable")
    if use_aso:
        full_eps = _full_aso(full_runs[run_order], n_models, aso_bootstrap_iterations, seed)
    grid = _size_grid(sizes, total, token_unit, note_list)
    rows: list[dict[str, Any]] = []
    for strategy in strategies:
        for label, size in grid:
            masks = (
                np.ones((1, n)) if size is None else subset_masks(t, size, strategy, n_draws, seed)
            )
            run_scores = mask_scores(systems, score, masks)  # (draws, runs)
            model_scores = run_scores @ average
            base = {"strategy": strategy, "size": label, "tokens_mean": float((masks @ t).mean())}
            base["n_draws"] = int(masks.shape[0])
            for unit, sub, full in (
                ("model", model_scores, full_models),
                ("seed", run_scores, full_runs),
            ):
                if unit == "seed" and n_seeds == 1 and balanced:
                    continue
                row = {**base, "unit": unit, **_tau_summary(weighted_tau(sub, full[None, :]))}
                if unit == "model" and use_aso:
                    chosen = run_scores if aso_draws is None else run_scores[:aso_draws]
                    row |= _aso_agreement(
                        chosen[:, run_order].reshape(chosen.shape[0], n_models, n_seeds),
                        full_eps,
                        aso_bootstrap_iterations,
                        seed,
                    )
                rows.append(row)
    table = pd.DataFrame(rows)
    full_scores = pd.DataFrame({"model": names, "score": full_models})
    return DataSizeResult(
        table=table,
        recommendation=_recommend(table, level),
        level=level,
        models=tuple(names),
        n_seeds=n_seeds,
        n_examples=n,
        n_tokens=total,
        n_draws=n_draws,
        seed=seed,
        metric=score.name if isinstance(score, Metric) else None,
        token_unit=token_unit,
        full_scores=full_scores,
        notes=tuple(note_list),
        order=order,
    )


# --- inputs: CoNLL-U files and simulated taggers ------------------------------------

_SEED_SUFFIX = re.compile(r"[._-]seed(\d+)$", re.IGNORECASE)


def model_and_seed(path: str | Path) -> tuple[str, int | None]:
    """Model name and seed from a prediction file name: ``parser-seed3.conllu`` → (parser, 3)."""
    stem = Path(path).name
    for suffix in (".gz", ".conllu", ".conll"):
        if stem.endswith(suffix):
            stem = stem[: -len(suffix)]
    found = _SEED_SUFFIX.search(stem)
    if found:
        return stem[: found.start()], int(found.group(1))
    return stem, None


def read_conllu(path: str | Path) -> list[Any]:
    """Sentences of a CoNLL-U file (``conllu.TokenList``), with errors naming the file."""
    import conllu

    p = Path(path)
    if not p.exists():
        raise InputError("file not found", path=str(p))
    try:
        with p.open(encoding="utf-8") as fh:
            sentences = list(conllu.parse_incr(fh))
    except Exception as exc:  # conllu raises ParseException and ValueError subclasses
        raise InputError(f"not a valid CoNLL-U file ({exc})", path=str(p)) from None
    if not sentences:
        raise InputError("no sentences", path=str(p))
    return sentences


def _words(sentence: Any) -> list[Any]:
    return [tok for tok in sentence if isinstance(tok["id"], int)]


def conllu_statistics(
    gold: str | Path, predictions: Sequence[str | Path], metric: str = "las"
) -> tuple[FloatArray, list[str], FloatArray, Metric]:
    """Per-sentence statistics of CoNLL-U prediction files against a gold file.

    ``metric`` is ``las``, ``uas`` or ``upos`` (token accuracy of the UPOS
    column). Returns (runs × sentences × k) statistics, each file's model name
    (seed suffixes such as ``-seed2`` stripped, see :func:`model_and_seed`), the
    words per sentence and the metric.
    """
    from glotbench.metrics import get_metric

    gold_sentences = read_conllu(gold)
    name = "token_accuracy" if metric.lower() == "upos" else metric.lower()
    if name not in ("las", "uas", "token_accuracy"):
        raise InputError(f"CoNLL-U predictions support las, uas and upos, not {metric!r}")
    bound = get_metric(name)
    gold_words = [_words(s) for s in gold_sentences]
    tokens = np.array([len(w) for w in gold_words], dtype=np.float64)
    blocks = []
    labels = []
    for path in predictions:
        predicted = read_conllu(path)
        if len(predicted) != len(gold_sentences):
            raise InputError(
                f"{len(predicted)} sentences but the gold file {gold} has {len(gold_sentences)}; "
                "predictions must keep the gold sentences in order",
                path=str(path),
            )
        pred_words = [_words(s) for s in predicted]
        if name == "token_accuracy":
            preds = [[tok["upos"] for tok in w] for w in pred_words]
            refs = [[tok["upos"] for tok in w] for w in gold_words]
        else:
            preds, refs = pred_words, gold_words
        try:
            blocks.append(bound.stats(preds, refs))
        except InputError as exc:
            raise InputError(exc.reason, path=str(path)) from None
        labels.append(model_and_seed(path)[0])
    return np.stack(blocks), labels, tokens, bound


def simulate_tagger_statistics(
    gold: str | Path,
    error_rates: Sequence[float],
    n_seeds: int,
    *,
    seed_sd: float = 0.003,
    seed: int = 0,
    max_tokens: int | None = None,
) -> tuple[FloatArray, list[str], FloatArray, Metric]:
    """UPOS-accuracy statistics of simulated taggers on real gold data (for examples and tests).

    Tagger i, seed s replaces every gold UPOS tag of ``gold`` (a CoNLL-U file)
    with a different, random UPOS tag with probability
    ``error_rates[i] + N(0, seed_sd²)`` (clipped to [0, 1]): the true ranking is
    the order of ``error_rates``. Sentences are read in order until
    ``max_tokens``. The statistics come from the ``token_accuracy`` metric on
    the corrupted tag sequences. Returns (runs × sentences × 2) statistics,
    model names (``tagger00`` …, one per run), tokens per sentence and the metric.
    """
    from glotbench.metrics import get_metric

    sentences = read_conllu(gold)
    refs: list[list[str]] = []
    count = 0
    for sentence in sentences:
        tags = [tok["upos"] for tok in _words(sentence)]
        if not tags:
            continue
        refs.append(tags)
        count += len(tags)
        if max_tokens is not None and count >= max_tokens:
            break
    inventory = sorted({tag for tags in refs for tag in tags})
    if len(inventory) < 2:
        raise InputError("the gold file has fewer than two UPOS tags", path=str(gold))
    flat = np.array([inventory.index(tag) for tags in refs for tag in tags])
    bounds = np.cumsum([0] + [len(tags) for tags in refs])
    rng = np.random.default_rng(seed)
    metric = get_metric("token_accuracy")
    blocks, labels = [], []
    for i, rate in enumerate(error_rates):
        for _ in range(n_seeds):
            p = float(np.clip(rate + rng.normal(0.0, seed_sd), 0.0, 1.0))
            wrong = rng.random(flat.size) < p
            shift = rng.integers(1, len(inventory), size=flat.size)
            predicted = np.where(wrong, (flat + shift) % len(inventory), flat)
            tags = [inventory[k] for k in predicted]
            preds = [tags[bounds[j] : bounds[j + 1]] for j in range(len(refs))]
            blocks.append(metric.stats(preds, refs))
            labels.append(f"tagger{i:02d}")
    tokens = np.array([len(tags) for tags in refs], dtype=np.float64)
    return np.stack(blocks), labels, tokens, metric
