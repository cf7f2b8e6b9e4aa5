"""The demo on the embedded XTREME-R baselines, and the demo's pages.

:func:`demo` analyses the published per-language scores (uncertainty from the
choice of languages only); :func:`write_demo_pages` writes the leaderboard
folders and HTML reports of the demo: the starter suite's
(:mod:`glotbench.demo_starter`) and the XTREME-R baselines'. The facade
:mod:`glotbench.api` calls these; they never import it.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd

from glotbench.analysis.aggregate import Leaderboard, leaderboard
from glotbench.analysis.compare import Comparison
from glotbench.analysis.headline import Analysis, AnalysisSettings
from glotbench.analysis.headline import analyze as analyze_headline
from glotbench.analysis.pair_view import RankedComparisons, ranked_comparisons
from glotbench.analysis.ranks import Ranks
from glotbench.analysis.replicates import replicates_from_frame
from glotbench.analysis.results import records
from glotbench.analysis.settings import DEFAULT_SETTINGS
from glotbench.data import XTREME_R_CAVEATS, xtreme_r_baselines
from glotbench.demo_starter import STARTER_METRIC, StarterDemo
from glotbench.errors import GlotbenchError
from glotbench.report.sites import write_leaderboard_site, write_report
from glotbench.report.sources import LeaderboardSource, leaderboard_source, store_metadata
from glotbench.store.analysis_cache import AnalysisCache, cache_key
from glotbench.store.atomic_files import write_text_atomic


def demo_leaderboard(confidence_level: float = 0.95) -> Leaderboard:
    """Leaderboard of the embedded XTREME-R baselines (published per-language scores).

    Parameters
    ----------
    confidence_level : float, default 0.95
        Level of the intervals.

    Returns
    -------
    Leaderboard
        Per-task and overall scores of each model with standard errors over
        languages.

    See Also
    --------
    demo : The full demo: comparisons and ranks too.

    Examples
    --------
    >>> from glotbench import api
    >>> api.demo_leaderboard()
    Leaderboard(models=6, tasks=8, best 'XLM-R Large': 64.2 (SE 0.969))
    """
    return leaderboard(xtreme_r_baselines(), confidence_level=confidence_level)


@dataclass(frozen=True)
class Demo:
    """What :func:`glotbench.api.demo` shows: leaderboard, between-language SDs, comparisons, ranks.

    Attributes
    ----------
    leaderboard : Leaderboard
        Per-task and overall scores of each model.
    comparison : Comparison
        Pairwise differences of the models with every task.
    ranks : Ranks
        Their rank distributions.
    notes : tuple of str
        What the embedded table covers and where it differs from the paper.
    analysis : Analysis or None
        The headline analysis the demo's pages render.
    """

    leaderboard: Leaderboard
    comparison: Comparison
    ranks: Ranks
    notes: tuple[str, ...] = XTREME_R_CAVEATS
    #: the request's headline analysis (its pages render the same numbers)
    analysis: Analysis | None = None

    def comparisons(self) -> RankedComparisons | None:
        """The comparison and ranks as one result, to hand to the pages (pairs in the
        analysis' ranking order); None without an analysis."""
        if self.analysis is None:
            return None
        return RankedComparisons.of_analysis(self.analysis, self.comparison, self.ranks)

    def between_language_sd(self) -> pd.DataFrame:
        """σ_b per model and task: the SD (ddof = 1) of the per-language scores."""
        return self.leaderboard.per_task[["model", "task", "between_language_sd", "n_languages"]]

    def to_dict(self) -> dict[str, Any]:
        out = {
            "leaderboard": self.leaderboard.to_dict(),
            "between_language_sd": records(self.between_language_sd()),
            "comparison": self.comparison.to_dict(),
            "ranks": self.ranks.to_dict(),
            "notes": list(self.notes),
        }
        if self.analysis is not None:
            out["analysis"] = self.analysis.to_dict()
        return out


def demo(
    n_draws: int = DEFAULT_SETTINGS.n_draws,
    seed: int = DEFAULT_SETTINGS.seed,
    k: int | None = None,
    *,
    settings: AnalysisSettings | None = None,
    cache_store: str | Path | None = None,
) -> Demo:
    """The demo on the embedded XTREME-R baselines.

    The published table has one score per model, task and language (no seeds
    or replicates), so uncertainty comes from the languages (scheme
    languages-only). One :class:`AnalysisSettings` decides the SEs, the
    pairwise effect sizes and the rank distributions, all from the same draws
    of the models with every task — the numbers the demo's XTREME-R pages show.

    Parameters
    ----------
    n_draws : int, default 10000
        Draws of the languages.
    seed : int, default 0
        Seed of the draws.
    k : int, optional
        Subsample ``k`` languages per task without replacement (default:
        resample them with replacement).
    settings : AnalysisSettings, optional
        Replaces ``n_draws``, ``seed`` and ``k``.
    cache_store : str or Path, optional
        Keep the result in this store's analysis cache (``<store>.cache/``) and
        read it from there next time: it is a function of the embedded table
        and the settings only (the key holds the settings and glotbench's
        files, the table included), so ``glotbench demo``'s second run does not
        compute it again (docs/analysis-cache.md).

    Returns
    -------
    Demo
        ``leaderboard``, ``comparison``, ``ranks``, ``analysis`` and notes.

    Examples
    --------
    >>> from glotbench import api
    >>> result = api.demo(n_draws=200)
    >>> result.analysis
    Analysis(models=2, tasks=8, languages=123, best 'XLM-R Large': 64.2 (SE 0.9239))
    """
    if settings is None:
        settings = AnalysisSettings(
            n_draws=n_draws, seed=seed, languages="with" if k is None else "without", k=k
        )
    cache = key = None
    if cache_store is not None:
        cache = AnalysisCache.beside(cache_store)
        key = cache_key("xtreme-r-baselines", {"analysis": "xtreme-demo", **settings.to_dict()})
        cached = cache.get(key)
        if isinstance(cached, Demo):
            return cached
    result = _xtreme_demo(settings)
    if cache is not None and key is not None:
        cache.put(key, result)
    return result


def _xtreme_demo(settings: AnalysisSettings) -> Demo:
    scores = xtreme_r_baselines()
    analytic = leaderboard(scores, confidence_level=settings.confidence_level)
    replicated = replicates_from_frame(scores)
    analysis = analyze_headline(replicated, settings)
    ranked = ranked_comparisons(replicated, analysis)
    if ranked.comparison is None or ranked.ranks is None:
        raise GlotbenchError("the XTREME-R demo needs two models with every task")
    return Demo(
        analysis.leaderboard(analytic),
        ranked.comparison,
        ranked.ranks,
        analysis=analysis,
    )


def write_demo_pages(
    out: str | Path,
    seed: int = DEFAULT_SETTINGS.seed,
    *,
    starter_store: str | Path | None = None,
    starter: StarterDemo | None = None,
    settings: AnalysisSettings | None = None,
    xtreme: Demo | None = None,
    xtreme_pages: WrittenPages | None = None,
) -> list[Path]:
    """Write the demo's leaderboard folders and HTML reports into ``out``.

    Parameters
    ----------
    out : str or Path
        The folder to write.
    seed : int, default 0
        The seed of the draws when ``settings`` is not given.
    starter_store : str or Path, optional
        The starter store, read with ``settings`` (older form of ``starter``).
    starter : StarterDemo, optional
        The demo's computed starter part: its analysed scores and headline
        analysis go to ``out/leaderboard`` and ``out/report.html`` — the very
        numbers the terminal shows — and the XTREME-R baselines to
        ``out/xtreme-r/``. Without ``starter`` or ``starter_store`` the
        XTREME-R pages go to ``out`` itself.
    settings : AnalysisSettings, optional
        Decide the draws of every page (default: the starter's, else ``seed``
        and the other defaults).
    xtreme : Demo, optional
        The computed XTREME-R :class:`Demo`, whose analysis its pages render.
    xtreme_pages : WrittenPages, optional
        The XTREME-R pages already written (:class:`XtremeAhead`): not written
        again when they are in the folder and have the settings this call
        writes.

    Returns
    -------
    list of Path
        The pages written.

    Examples
    --------
    Rendering the 123 languages of XTREME-R takes about 20 s, so this example
    is not run as a test:

    >>> from glotbench import api
    >>> pages = api.write_demo_pages("demo-pages", xtreme=api.demo(n_draws=200))  # doctest: +SKIP
    >>> [page.name for page in pages]  # doctest: +SKIP
    ['index.html', 'report.html']
    """
    if settings is None:
        settings = starter.settings if starter is not None else AnalysisSettings(seed=seed)
    folder = Path(out)
    folder.mkdir(parents=True, exist_ok=True)
    # the pages are a function of the analysis (keyed by the store's content, see
    # starter_demo) and the settings: unchanged pages are not written again
    pages_key = None
    if starter_store is None and (starter is None or starter.cache_key):
        pages_key = cache_key(
            starter.cache_key if starter is not None else "",
            {"pages": "demo", "settings": settings.to_dict(), "folder": str(folder.resolve())},
        )
        kept = _unchanged_pages(folder, pages_key)
        if kept is not None:
            return kept
    written = _write_demo_pages(folder, settings, starter, starter_store, xtreme, xtreme_pages)
    if pages_key is not None:
        _stamp_pages(folder, pages_key, written)
    return written


#: the file in a demo's output folder naming the analysis its pages show
_PAGES_STAMP = ".glotbench-pages.json"


def _unchanged_pages(folder: Path, key: str) -> list[Path] | None:
    """The pages written for ``key`` when they are all still there, else None."""
    try:
        stamp = json.loads((folder / _PAGES_STAMP).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if not isinstance(stamp, dict) or stamp.get("key") != key:
        return None
    paths = [folder / str(p) for p in stamp.get("pages") or []]
    return paths if paths and all(p.exists() for p in paths) else None


def _stamp_pages(folder: Path, key: str, written: Sequence[Path]) -> None:
    try:
        pages = [str(Path(p).resolve().relative_to(folder.resolve())) for p in written]
        write_text_atomic(folder / _PAGES_STAMP, json.dumps({"key": key, "pages": pages}))
    except (OSError, ValueError):
        pass  # without a stamp the pages are only written again next time


def _write_demo_pages(
    folder: Path,
    settings: AnalysisSettings,
    starter: StarterDemo | None,
    starter_store: str | Path | None,
    xtreme: Demo | None,
    xtreme_pages: WrittenPages | None = None,
) -> list[Path]:
    written: list[Path] = []
    xtreme_folder = folder
    title = "glotbench starter: language identification over 39 languages"
    if starter is not None and starter.replicated is not None:
        n_languages = len({u.language for u in starter.replicated.units})
        title = f"glotbench starter: language identification over {n_languages} languages"
        metadata = store_metadata(starter.store, starter.replicated.models)
        source = LeaderboardSource(
            starter.replicated,
            metadata,
            title,
            (
                f"per-example statistics bootstrapped with {settings.n_replicates} paired "
                "replicates per run",
            ),
        )
        analysis = starter.analysis
        comparisons = None
        if analysis is None or analysis.settings != settings:
            analysis = analyze_headline(starter.replicated, settings)
        else:
            comparisons = starter.comparisons()
        site = write_leaderboard_site(
            folder / "leaderboard",
            source,
            settings=settings,
            analysis=analysis,
            comparisons=comparisons,
        )
        report = write_report(
            folder / "report.html",
            source,
            settings=settings,
            analysis=analysis,
            comparisons=comparisons,
        )
        written += [site.path, report.path]
        xtreme_folder = folder / "xtreme-r"
    elif starter_store is not None:
        source = leaderboard_source(
            store=starter_store,
            metric=STARTER_METRIC,
            seed=settings.seed,
            n_replicates=settings.n_replicates,
        )
        analysis = analyze_headline(source.replicated, settings)
        site = write_leaderboard_site(
            folder / "leaderboard", source, title=title, settings=settings, analysis=analysis
        )
        report = write_report(
            folder / "report.html", source, title=title, settings=settings, analysis=analysis
        )
        written += [site.path, report.path]
        xtreme_folder = folder / "xtreme-r"
    if xtreme_pages is not None and xtreme_pages.fits(xtreme_folder, settings):
        return [*written, *xtreme_pages.paths]
    return [*written, *_write_xtreme_pages(xtreme_folder, settings, xtreme)]


def _write_xtreme_pages(
    folder: Path, settings: AnalysisSettings, xtreme: Demo | None
) -> list[Path]:
    """The XTREME-R baselines' leaderboard (``folder/leaderboard``) and report
    (``folder/report.html``), rendering ``xtreme``'s analysis when it has ``settings``."""
    source = leaderboard_source(demo=True, seed=settings.seed)
    reused = xtreme.analysis if xtreme is not None else None
    if xtreme is not None and reused is not None and reused.settings == settings:
        analysis, computed = reused, xtreme.comparisons()
    else:
        analysis, computed = analyze_headline(source.replicated, settings), None
    site = write_leaderboard_site(
        folder / "leaderboard",
        source,
        settings=settings,
        analysis=analysis,
        comparisons=computed,
    )
    report = write_report(
        folder / "report.html",
        source,
        settings=settings,
        analysis=analysis,
        comparisons=computed,
    )
    return [site.path, report.path]


@dataclass(frozen=True)
class WrittenPages:
    """Pages written ahead of :func:`write_demo_pages` (by :class:`XtremeAhead`).

    Attributes
    ----------
    folder : Path
        The folder they were written in.
    settings : AnalysisSettings
        The settings of their numbers.
    paths : tuple of Path
        The pages.
    """

    folder: Path
    settings: AnalysisSettings
    paths: tuple[Path, ...]

    def fits(self, folder: Path, settings: AnalysisSettings) -> bool:
        """Whether these are the pages of ``settings`` in ``folder``, all still there."""
        return (
            self.folder.resolve() == Path(folder).resolve()
            and self.settings == settings
            and all(p.exists() for p in self.paths)
        )


class XtremeAhead:
    """The demo's XTREME-R part — :func:`demo` and, given a folder, its pages — in a
    thread, started while the starter suite's jobs run in worker processes.

    The XTREME-R baselines do not depend on the starter suite. Computed after its jobs,
    their analysis and pages (about 2.4 s of CPU) were a serial tail on one core;
    during the jobs, the driver process, which only waits for the workers and stores
    their results, has the time (docs/performance.md, Demo). The numbers and pages are
    the same: :meth:`result` returns them only for the settings the caller asks for,
    else computes them there.
    """

    def __init__(
        self,
        settings: AnalysisSettings,
        folder: str | Path | None = None,
        *,
        cache_store: str | Path | None = None,
    ) -> None:
        self.settings = settings
        self.folder = Path(folder) if folder is not None else None
        self.cache_store = cache_store  # :func:`demo`'s cache (beside the starter store)
        self._thread: threading.Thread | None = None
        self._demo: Demo | None = None
        self._pages: WrittenPages | None = None
        self._error: BaseException | None = None

    def start(self) -> None:
        """Start the thread (once; later calls do nothing)."""
        if self._thread is None:
            self._thread = threading.Thread(
                target=self._work, name="glotbench-xtreme-r", daemon=True
            )
            self._thread.start()

    @property
    def started(self) -> bool:
        return self._thread is not None

    def _work(self) -> None:
        try:
            self._demo = demo(settings=self.settings, cache_store=self.cache_store)
            if self.folder is not None:
                paths = _write_xtreme_pages(self.folder, self.settings, self._demo)
                self._pages = WrittenPages(self.folder, self.settings, tuple(paths))
        except BaseException as exc:  # re-raised in the caller's thread by result()
            self._error = exc

    def result(self, settings: AnalysisSettings) -> tuple[Demo, WrittenPages | None]:
        """The XTREME-R :class:`Demo` of ``settings`` and the pages written ahead (None
        when none were): the thread's, once it ends, when it ran ``settings``; else
        computed here (nothing written)."""
        if self._thread is not None:
            self._thread.join()
            if self._error is not None:
                raise self._error
            if self._demo is not None and self.settings == settings:
                return self._demo, self._pages
        return demo(settings=settings, cache_store=self.cache_store), None
