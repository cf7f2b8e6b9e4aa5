"""Write the static leaderboard folder and the HTML report of a :class:`LeaderboardSource`.

Both render a request's headline analysis (:mod:`glotbench.analysis.headline`)
as it is; see ``docs/leaderboard.md`` and ``docs/report.md``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from glotbench.analysis.aggregate import leaderboard
from glotbench.analysis.datasize import DataSizeResult
from glotbench.analysis.headline import Analysis, AnalysisSettings
from glotbench.analysis.headline import analyze as analyze_headline
from glotbench.analysis.pair_view import RankedComparisons, ranked_comparisons, task_comparisons
from glotbench.analysis.settings import DEFAULT_SETTINGS
from glotbench.analysis.variance import components, variance_components
from glotbench.errors import InputError
from glotbench.report.sources import LeaderboardSource

if TYPE_CHECKING:  # the mixed-model module (and scipy.stats) loads only when given one
    from glotbench.analysis.mixed.model import LmmResult
    from glotbench.analysis.replicates import ReplicatedScores
    from glotbench.report.analyses import LmmSummary
    from glotbench.report.document import Report


@dataclass(frozen=True)
class SiteResult:
    """Where a leaderboard or report was written, and what it holds.

    Attributes
    ----------
    path : Path
        The HTML file written.
    kind : str
        ``leaderboard`` or ``report``.
    models : tuple of str
        The models shown.
    views : tuple of str
        The views (leaderboard) or sections (report).
    notes : tuple of str
        What the reader should know.
    pair_models : tuple of str
        The models whose pairs the pairwise view holds.
    settings : dict or None
        The settings recorded in the page's footer.
    """

    path: Path
    kind: str
    models: tuple[str, ...]
    views: tuple[str, ...]
    notes: tuple[str, ...]
    #: leaderboard: the models whose every pair the pairwise view holds (best first)
    pair_models: tuple[str, ...] = ()
    #: the settings every number was computed with (:meth:`AnalysisSettings.record`)
    settings: dict[str, Any] | None = None

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "kind": self.kind,
            "path": str(self.path),
            "models": list(self.models),
            "views": list(self.views),
            "notes": list(self.notes),
        }
        if self.kind == "leaderboard":
            out["pair_models"] = list(self.pair_models)
        if self.settings is not None:
            out["settings"] = self.settings
        return out


def write_leaderboard_site(
    out: str | Path,
    source: LeaderboardSource,
    *,
    title: str | None = None,
    language_groups: dict[str, Sequence[str]] | None = None,
    n_draws: int = DEFAULT_SETTINGS.n_draws,
    seed: int = DEFAULT_SETTINGS.seed,
    confidence_level: float = DEFAULT_SETTINGS.confidence_level,
    settings: AnalysisSettings | None = None,
    analysis: Analysis | None = None,
    pair_models: int | None = None,
    comparisons: RankedComparisons | None = None,
) -> SiteResult:
    """Write the static interactive leaderboard folder ``out`` (``out/index.html``).

    Parameters
    ----------
    out : str or Path
        The folder to write (created; files in it are replaced).
    source : LeaderboardSource
        The scores and metadata (:func:`leaderboard_source`).
    title : str, optional
        The page's title (default: the source's).
    language_groups : dict of str to sequence of str, optional
        Extra language-group views (:func:`parse_language_groups`), besides
        the built-in groups.
    n_draws, seed, confidence_level
        The settings when ``settings`` is not given (defaults:
        :data:`~glotbench.analysis.settings.DEFAULT_SETTINGS`').
    settings : AnalysisSettings, optional
        Decide every view's draws; recorded in the page's footer.
    analysis : Analysis, optional
        The request's computed result (:func:`analyze_headline` of
        ``source.replicated``), shown as is.
    pair_models : int, optional
        How many top models' pairs the pairwise view holds (default: as many
        as fit :data:`glotbench.analysis.pair_view.MAX_PAIR_CELLS`).
    comparisons : RankedComparisons, optional
        The request's ranked comparisons, reused for those pairs.

    Returns
    -------
    SiteResult
        ``path`` (``out/index.html``), the ``models``, ``views`` and
        ``settings``.

    Raises
    ------
    GlotbenchError
        ``out`` exists and is not a folder.

    See Also
    --------
    write_report : One self-contained HTML report.

    Examples
    --------
    >>> from glotbench import api
    >>> _ = api.import_scores("scores.csv", store="site.duckdb")
    >>> source = api.leaderboard_source(store="site.duckdb")
    >>> site = api.write_leaderboard_site("site", source, n_draws=200)
    >>> site.path.name, site.models
    ('index.html', ('glot500', 'mbert', 'xlmr'))
    """
    from glotbench.report.leaderboard import build_leaderboard, write_leaderboard

    data = build_leaderboard(
        source.replicated,
        title=title or source.title,
        metadata=source.metadata,
        language_groups=language_groups,
        notes=source.notes,
        n_draws=n_draws,
        seed=seed,
        confidence_level=confidence_level,
        settings=settings,
        analysis=analysis,
        speed=source.speed,
        pair_models=pair_models,
        comparisons=comparisons,
    )
    path = write_leaderboard(data, out)
    pairwise = data.payload["pairwise"]
    return SiteResult(
        path,
        "leaderboard",
        source.replicated.models,
        tuple(data.payload["views"]),
        source.notes,
        tuple(pairwise["models"]) if pairwise else (),
        data.payload["settings"],
    )


def parse_language_groups(specs: Sequence[str]) -> dict[str, list[str]]:
    """``NAME=lang,lang`` strings to a dict (the built-in groups are added by the caller).

    Parameters
    ----------
    specs : sequence of str
        ``NAME=lang,lang,...`` entries.

    Returns
    -------
    dict of str to list of str
        Group name -> language codes.

    Raises
    ------
    InputError
        An entry without ``=`` or without languages.

    Examples
    --------
    >>> from glotbench import api
    >>> api.parse_language_groups(["nordic=da,sv,no"])
    {'nordic': ['da', 'sv', 'no']}
    """
    groups: dict[str, list[str]] = {}
    for spec in specs:
        name, sep, langs = spec.partition("=")
        members = [x.strip() for x in langs.split(",") if x.strip()]
        if not sep or not name.strip() or not members:
            raise InputError(
                f"language group {spec!r} is not NAME=lang,lang (e.g. 'Nordic=da,sv,nb')",
                field="group",
            )
        groups[name.strip()] = members
    return groups


def _any_left_out(analysis: Analysis) -> bool:
    """Whether some model of a task's view is not in the overall view."""
    ranked = set(analysis.overall.models)
    return any(m not in ranked for v in analysis.tasks.values() for m in v.models)


def write_report(
    out: str | Path,
    source: LeaderboardSource,
    *,
    title: str | None = None,
    n_draws: int = DEFAULT_SETTINGS.n_draws,
    seed: int = DEFAULT_SETTINGS.seed,
    max_models: int = 10,
    datasize: Sequence[DataSizeResult | str | Path] = (),
    lmm: Sequence[LmmResult | str | Path] = (),
    settings: AnalysisSettings | None = None,
    analysis: Analysis | None = None,
    comparisons: RankedComparisons | None = None,
    confidence_level: float = DEFAULT_SETTINGS.confidence_level,
) -> SiteResult:
    """Write the HTML report (one self-contained file) of a leaderboard source.

    Variance components, the leaderboard's aggregates, pairwise comparisons
    (forest plot) and rank distributions (heatmap) of the ``max_models`` best
    models; draws are non-parametric when the scores are replicated, else
    languages-only with languages resampled with replacement.

    Parameters
    ----------
    out : str or Path
        The HTML file (a folder gets ``report.html``).
    source : LeaderboardSource
        The scores and metadata (:func:`leaderboard_source`).
    title : str, optional
        The report's title (default: the source's).
    n_draws, seed, confidence_level
        The settings when ``settings`` is not given.
    max_models : int, default 10
        The best models shown.
    datasize : sequence of DataSizeResult or str or Path, default ()
        Evaluation-size analyses (results of :func:`analyze_datasize` or their
        JSON files): τ-vs-size curves and the recommendation.
    lmm : sequence of LmmResult or str or Path, default ()
        Mixed models (results of :func:`analyze_mixed_model`, best with
        ``residuals=True``, or their JSON files): Q-Q plot of the simulated
        residuals, their tests, fixed effects and ANOVA. Files are read first,
        so a bad one fails before anything is computed.
    settings : AnalysisSettings, optional
        Decide the draws of the aggregates, comparisons and ranks; recorded in
        the report's footer.
    analysis : Analysis, optional
        The request's computed result (:func:`analyze_headline`), whose
        aggregates the report shows as is.
    comparisons : RankedComparisons, optional
        Its :func:`~glotbench.analysis.pair_view.ranked_comparisons`, shown as
        is when they cover the report's models (else computed here).

    Returns
    -------
    SiteResult
        ``path``, the ``models``, the sections (``views``), ``notes`` and
        ``settings``.

    Raises
    ------
    InputError
        A ``datasize`` or ``lmm`` file that is not such an analysis' JSON.

    Examples
    --------
    >>> from glotbench import api
    >>> _ = api.import_scores("scores.csv", store="report.duckdb")
    >>> source = api.leaderboard_source(store="report.duckdb")
    >>> report = api.write_report("report.html", source, n_draws=100)
    >>> report.path.name, report.views
    ('report.html', ('Aggregates', 'Variance components', 'Pairwise comparisons',
                     'Rank distributions'))
    """
    from glotbench.report.html import write_report as write_html
    from glotbench.report.reproduction_link import footer_html, reproduction_link

    # files first: a bad one fails before anything is computed
    datasize_results, lmm_summaries = _read_analyses(datasize, lmm)
    replicated = source.replicated
    settings, analysis = _report_analysis(
        replicated, settings, analysis, n_draws, seed, confidence_level
    )
    report, notes = _build_report(
        source, title, settings, analysis, comparisons, max_models, datasize_results, lmm_summaries
    )
    report.reproductions = footer_html(reproduction_link(Path(out).parent))
    path = write_html(report, out)
    return SiteResult(
        path,
        "report",
        replicated.models,
        tuple(h for h, _ in report.sections),
        tuple(notes),
        settings=settings.record(replicated),
    )


def _read_analyses(
    datasize: Sequence[DataSizeResult | str | Path], lmm: Sequence[LmmResult | str | Path]
) -> tuple[list[DataSizeResult], list[LmmSummary]]:
    """The evaluation-size results and mixed-model summaries, their JSON files read."""
    from glotbench.report.analyses import lmm_summary, read_datasize, read_lmm

    datasize_results = [
        item if isinstance(item, DataSizeResult) else read_datasize(item) for item in datasize
    ]
    lmm_summaries = [
        read_lmm(item) if isinstance(item, (str, Path)) else lmm_summary(item) for item in lmm
    ]
    return datasize_results, lmm_summaries


def _report_analysis(
    replicated: ReplicatedScores,
    settings: AnalysisSettings | None,
    analysis: Analysis | None,
    n_draws: int,
    seed: int,
    confidence_level: float,
) -> tuple[AnalysisSettings, Analysis]:
    """The report's settings (given, the analysis', else from the arguments) and its
    analysis (given, else computed); an analysis with other settings is an error."""
    if settings is None:
        settings = (
            analysis.settings
            if analysis is not None
            else AnalysisSettings(
                n_draws=n_draws,
                seed=seed,
                confidence_level=confidence_level,
                n_replicates=replicated.n_replicates,
            )
        )
    if analysis is None:
        analysis = analyze_headline(replicated, settings)
    elif analysis.settings != settings:
        raise InputError("the analysis was computed with other settings than the report's")
    return settings, analysis


def _build_report(
    source: LeaderboardSource,
    title: str | None,
    settings: AnalysisSettings,
    analysis: Analysis,
    comparisons: RankedComparisons | None,
    max_models: int,
    datasize_results: Sequence[DataSizeResult],
    lmm_summaries: Sequence[LmmSummary],
) -> tuple[Report, list[str]]:
    """The report's sections of ``analysis`` (comparisons and ranks of the ``max_models``
    best models, per task when models lack whole tasks) and its notes."""
    from glotbench.report.html import build_report

    replicated = source.replicated
    notes = list(source.notes)
    board = analysis.leaderboard(
        leaderboard(replicated.point_frame(), confidence_level=settings.confidence_level)
    )
    variance = variance_components(components(replicated))
    notes += list(variance.notes)
    ranked = analysis.overall.order()
    if len(ranked) > max_models:
        notes.append(f"comparisons and ranks show the {max_models} best of {len(ranked)} models")
        ranked = ranked[:max_models]
    if comparisons is None or not comparisons.covers(
        ranked, settings.draws(replicated), settings.confidence_level, analysis.overall.left_out
    ):
        comparisons = ranked_comparisons(replicated, analysis, max_models=max_models)
    comparison, ranks = comparisons.comparison, comparisons.ranks
    # models lacking whole tasks: compare, per task, the models that cover it (issue 25 item 6)
    task_views = (
        task_comparisons(replicated, analysis, max_models=max_models)
        if len(analysis.tasks) > 1 and _any_left_out(analysis)
        else {}
    )
    if task_views:
        compared = "; ".join(f"{t} ({', '.join(v.models)})" for t, v in task_views.items())
        notes.append(
            "models lack whole tasks, so the report compares per task the models that cover "
            f"it: {compared}"
        )
    if comparison is not None:
        notes += [n for n in comparison.notes if n not in notes]
    report = build_report(
        title or source.title,
        board,
        analysis.interval_text,
        variance,
        comparison,
        ranks,
        notes,
        datasize=datasize_results,
        lmm=lmm_summaries,
        analysis=analysis,
        settings_text=settings.describe(replicated),
        task_views=task_views,
        speed=source.speed,
    )
    return report, notes
