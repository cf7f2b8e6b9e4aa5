"""The one settings object of an analysis request, and its defaults (declared here, once).

Every door — ``glotbench analyze aggregate|compare|ranks|variance``,
``glotbench leaderboard``, ``glotbench report``, ``glotbench demo`` and the
Python API — builds its options and arguments from :class:`AnalysisSettings`,
so that the same store gives the same numbers whichever door asks
(``docs/analysis.md``, Settings). Every output records the settings it used
(:meth:`AnalysisSettings.record`: the JSON ``settings`` object, the footers of
the leaderboard page and the report).

The interval of an aggregate is the percentile interval of its draws (so it
stays in the metric's range; docs/methods.md), as a pair's interval is the
percentile interval of its paired draws (Sälevä, Ataman & Lignos 2025, §6.2).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass, fields
from typing import TYPE_CHECKING, Any, Literal

from glotbench.errors import InputError

if TYPE_CHECKING:  # imported where used: the command line's options import this module
    from glotbench.analysis.draws import DrawSettings, LanguageSampling, Scheme
    from glotbench.analysis.replicates import ReplicatedScores

#: the values ``scheme`` takes (``auto``: decided by the data, see ``resolved_scheme``)
SCHEMES: tuple[str, ...] = ("auto", "nonparametric", "parametric", "languages-only")
#: the values ``languages`` takes
LANGUAGE_SAMPLINGS: tuple[str, ...] = ("with", "without", "none")

#: which pairs ``analyze compare`` computes: "adjacent" (the default) — the neighbours in
#: each aggregate's ranking, every pair of its top models and the pairs asked for (linear
#: in models); "all" — every one of the M(M − 1)/2 pairs
PAIR_MODES = ("adjacent", "all")
DEFAULT_PAIRS = "adjacent"
#: every pair of this many best models (by each aggregate) is computed in "adjacent" mode
DEFAULT_TOP_K = 10


def is_replicated(source: ReplicatedScores) -> bool:
    """Whether the scores have several seeds or bootstrap replicates per cell."""
    return bool(source.values.shape[2] > 1 or source.values.shape[3] > 1)


def z_value(confidence_level: float) -> float:
    """z = Φ⁻¹(1/2 + level/2), the normal quantile of a two-sided interval."""
    from scipy.special import ndtri

    if not 0 < confidence_level < 1:
        raise InputError("the confidence level must be between 0 and 1", field="confidence_level")
    return float(ndtri(0.5 + confidence_level / 2))


@dataclass(frozen=True)
class AnalysisSettings:
    """Everything that decides an analysis' numbers, shared by all outputs of a request.

    The field defaults are *the* defaults of every command, page and API
    function (``docs/analysis.md``, Settings).

    Attributes
    ----------
    scheme : {"auto", "nonparametric", "parametric", "languages-only"}, default "auto"
        ``auto``: non-parametric when the scores are replicated (seeds or
        bootstrap replicates), parametric for ready SDs (a
        :class:`~glotbench.analysis.variance.ComponentTable`), else
        languages-only.
    n_draws : int, default 10000
        Paired draws behind every SE, interval and rank.
    seed : int, default 0
        Seed of the replicates and the draws.
    languages : {"with", "without", "none"}, default "with"
        How languages are resampled: with replacement to the full size,
        without replacement to ``k``, or fixed.
    k : int or None
        The subsample size of ``languages="without"``.
    confidence_level : float, default 0.95
        Level of every interval.
    n_replicates : int, default 1000
        Bootstrap replicates of the test set per run, when the scores are read
        from per-example statistics.
    metric : tuple of str, default ()
        ``METRIC`` and/or ``TASK=METRIC`` entries; empty: each task on its
        declared primary metric (:mod:`glotbench.analysis.selection`).
    """

    scheme: Scheme | Literal["auto"] = "auto"
    n_draws: int = 10_000
    seed: int = 0
    languages: LanguageSampling = "with"
    k: int | None = None
    confidence_level: float = 0.95
    n_replicates: int = 1000
    metric: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        if self.scheme not in SCHEMES:
            raise InputError(f"use one of {', '.join(SCHEMES)}", field="scheme")
        if self.languages not in LANGUAGE_SAMPLINGS:
            raise InputError(
                f"use one of {', '.join(LANGUAGE_SAMPLINGS)}", field="resample_languages"
            )
        if not 0 < self.confidence_level < 1:
            raise InputError(
                "the confidence level must be between 0 and 1", field="confidence_level"
            )
        if isinstance(self.metric, str):  # one metric given as a string
            object.__setattr__(self, "metric", (self.metric,))
        elif not isinstance(self.metric, tuple):
            object.__setattr__(self, "metric", tuple(self.metric))

    @classmethod
    def with_metric(cls, metric: str | Sequence[str] | None, **values: Any) -> AnalysisSettings:
        """Settings with ``metric`` (None: each task's primary) and the other ``values``."""
        chosen = () if metric is None else ((metric,) if isinstance(metric, str) else metric)
        return cls(metric=tuple(chosen), **values)

    @property
    def metric_choice(self) -> list[str] | None:
        """``metric`` as the loaders take it (None: each task's primary metric)."""
        return list(self.metric) or None

    def resolved_scheme(self, source: Any) -> Scheme:
        from glotbench.analysis.replicates import ReplicatedScores

        if self.scheme != "auto":
            return self.scheme
        if not isinstance(source, ReplicatedScores):  # ready SDs: σ_w is all there is
            return "parametric"
        return "nonparametric" if is_replicated(source) else "languages-only"

    def draws(self, source: Any, *, languages: bool = True) -> DrawSettings:
        """The draw settings for ``source`` (``languages=False``: languages fixed)."""
        from glotbench.analysis.draws import DrawSettings

        return DrawSettings(
            scheme=self.resolved_scheme(source),
            n_draws=self.n_draws,
            seed=self.seed,
            languages=self.languages if languages else "none",
            k=self.k if languages else None,
        )

    @property
    def z(self) -> float:
        return z_value(self.confidence_level)

    def interval_text(self, source: ReplicatedScores) -> str:
        """In words: what ± SE and the intervals contain, for ``source``."""
        level = f"{self.confidence_level * 100:g}%"
        if self.languages == "with":
            langs = "resampling the languages with replacement"
        elif self.languages == "without":
            langs = f"subsampling {self.k} languages without replacement"
        else:
            langs = "with the languages fixed"
        if self.resolved_scheme(source) == "languages-only":
            return (
                f"± SE and {level} intervals (percentile intervals of the draws) count the "
                "choice of languages only: one score per model and language, so no seed or "
                "test-set variance is "
                f"known; SE = SD of the mean over {self.n_draws} draws {langs}"
            )
        return (
            f"± SE and {level} intervals (percentile intervals of the draws) count seeds, "
            "test-set bootstrap and languages: SE = SD of the mean over "
            f"{self.n_draws} paired draws, each "
            f"taking one seed and one test-set bootstrap replicate per language and {langs}"
        )

    def to_dict(self) -> dict[str, Any]:
        out = asdict(self)
        out["metric"] = list(self.metric)
        return out

    def record(self, source: Any = None) -> dict[str, Any]:
        """The settings as an output records them: every field and a description in words.

        With ``source`` (the scores analysed), ``scheme`` is the scheme used
        (``auto`` resolved) and ``scheme_requested`` the one asked for. The
        JSON ``settings`` object of every analysis and the pages' footers.
        """
        out = self.to_dict()
        if source is not None:
            out["scheme_requested"] = self.scheme
            out["scheme"] = self.resolved_scheme(source)
        out["description"] = self.describe(source)
        return out

    def describe(self, source: Any = None) -> str:
        """One line: the settings in words (the footer of the leaderboard and the report)."""
        scheme = self.resolved_scheme(source) if source is not None else self.scheme
        if self.languages == "with":
            langs = "languages resampled with replacement"
        elif self.languages == "without":
            langs = f"languages subsampled without replacement to k = {self.k}"
        else:
            langs = "languages fixed"
        metric = ", ".join(self.metric) if self.metric else "each task's primary metric"
        # replicates are drawn only from per-example statistics; other scores bring their own
        drawn = source is None or getattr(source, "source", None) == "examples"
        replicates = (
            f"{self.n_replicates:,} bootstrap replicates per run"
            if drawn
            else "the scores' own seeds and replicates"
        )
        return (
            f"{self.n_draws:,} draws ({scheme}), {replicates}, "
            f"{self.confidence_level * 100:g}% intervals, seed {self.seed}, {langs}; "
            f"metric: {metric}"
        )


def settings_record(draws: DrawSettings, recorded: dict[str, Any] | None) -> dict[str, Any]:
    """An analysis result's JSON ``settings``: its draw settings, and the request's if known."""
    out: dict[str, Any] = dict(vars(draws)) | {"description": draws.describe()}
    if recorded is not None:
        out |= recorded
    return out


#: the defaults, as one object (what every door uses unless told otherwise)
DEFAULT_SETTINGS = AnalysisSettings()


def default(name: str) -> Any:
    """The default of the setting ``name`` (a field of :class:`AnalysisSettings`)."""
    if name not in {f.name for f in fields(AnalysisSettings)}:
        raise KeyError(name)
    return getattr(DEFAULT_SETTINGS, name)
