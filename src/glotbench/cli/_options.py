"""Options several command groups share (``Annotated`` aliases) and their parsers.

``--store`` is declared here once (every command that reads or writes a store
uses :data:`StoreOption`, so ``$GLOTBENCH_STORE`` is honoured everywhere), and
the options of the analyses are built from their one settings object,
:class:`glotbench.analysis.settings.AnalysisSettings`: a command's defaults are
its fields' defaults (:data:`DEFAULTS`), :func:`with_analysis_settings` gives a
command all of them at once, and :func:`analysis_settings` turns the parsed
options back into it.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Annotated, Any

import typer

from glotbench.analysis.settings import (
    DEFAULT_SETTINGS,
    LANGUAGE_SAMPLINGS,
    SCHEMES,
    AnalysisSettings,
)
from glotbench.cli._replay import DEFAULT_STORE as DEFAULT_STORE
from glotbench.cli._replay import STORE_ENV

#: the analyses' defaults: every command's option defaults are read from here
DEFAULTS = DEFAULT_SETTINGS
#: --store; when not given: $GLOTBENCH_STORE (STORE_ENV), else DEFAULT_STORE
StoreOption = Annotated[
    Path | None,
    typer.Option(
        "--store",
        help=f"Results store, a DuckDB file (created if missing where written); "
        f"${STORE_ENV} when not given.",
        envvar=STORE_ENV,
    ),
]


def _set_lock_timeout(value: float | None) -> float | None:
    """Make ``value`` the lock wait of every store the command opens (when given).

    The same as the global ``glotbench --lock-timeout`` (which it overrides),
    given where users look for it: after the command that writes.
    """
    if value is not None:
        if value < 0:
            raise typer.BadParameter("seconds must be 0 or more", param_hint="--lock-timeout")
        from glotbench.store.lock import set_lock_timeout  # loads DuckDB: only when given

        set_lock_timeout(value)
    return value


#: ``--lock-timeout`` of the commands that write a store (``run``, ``import ...``)
LockTimeoutOption = Annotated[
    float | None,
    typer.Option(
        "--lock-timeout",
        metavar="<seconds>",
        callback=_set_lock_timeout,
        help="Seconds to wait while another process writes the store (a long import, a "
        "run), then fail naming it; 0: do not wait. Default: glotbench --lock-timeout, "
        "else 60.",
    ),
]
JsonOption = Annotated[bool, typer.Option("--json", help="Print the result as a JSON object.")]
SeedOption = Annotated[
    int, typer.Option("--seed", help="Seed of all random draws (bootstrap replicates and draws).")
]
LevelOption = Annotated[float, typer.Option("--confidence-level", help="Level of every interval.")]
DrawsOption = Annotated[
    int,
    typer.Option("--draws", help="Paired draws behind every SE, interval and rank (at least 2)."),
]
ReplicatesOption = Annotated[
    int,
    typer.Option(
        "--replicates",
        help="Bootstrap replicates of the test set per run, when reading per-example statistics.",
    ),
]
SchemeOption = Annotated[
    str,
    typer.Option(
        "--scheme",
        help="Replication draws: auto (nonparametric when the scores have seeds or "
        "replicates, parametric for ready SDs, else languages-only), nonparametric (seed + "
        "bootstrap replicate), parametric (Gaussian noise with sd σ_w) or languages-only "
        "(no replication noise; needs --resample-languages with or without).",
    ),
]
LanguagesOption = Annotated[
    str,
    typer.Option(
        "--resample-languages",
        help="Resample the languages: with replacement (to the full size), without (to size "
        "--k) or none (languages fixed).",
    ),
]
KOption = Annotated[
    int | None, typer.Option("--k", help="Number of languages per draw when resampling languages.")
]
MetricChoiceOption = Annotated[
    list[str] | None,
    typer.Option(
        "--metric",
        help="METRIC for every task, or TASK=METRIC for one task (repeatable). Default: each "
        "task on its primary metric (EuroEval's, lm-eval's first, or the only one stored); "
        "harness names such as acc, acc_norm, exact_match reach the per-example runs.",
    ),
]


def analysis_settings(
    *,
    scheme: str = DEFAULTS.scheme,
    draws: int = DEFAULTS.n_draws,
    seed: int = DEFAULTS.seed,
    resample_languages: str = DEFAULTS.languages,
    k: int | None = DEFAULTS.k,
    confidence_level: float = DEFAULTS.confidence_level,
    replicates: int = DEFAULTS.n_replicates,
    metric: Sequence[str] | None = None,
) -> AnalysisSettings:
    """The request's :class:`AnalysisSettings` from parsed options (bad values: usage errors)."""
    if scheme not in SCHEMES:
        raise typer.BadParameter(f"use {', '.join(SCHEMES)}", param_hint="--scheme")
    if resample_languages not in LANGUAGE_SAMPLINGS:
        raise typer.BadParameter(
            f"use {', '.join(LANGUAGE_SAMPLINGS)}", param_hint="--resample-languages"
        )
    if not 0 < confidence_level < 1:
        raise typer.BadParameter("use a level between 0 and 1", param_hint="--confidence-level")
    values: dict[str, Any] = {
        "scheme": scheme,
        "n_draws": draws,
        "seed": seed,
        "languages": resample_languages,
        "k": k,
        "confidence_level": confidence_level,
        "n_replicates": replicates,
        "metric": tuple(metric or ()),
    }
    return AnalysisSettings(**values)


#: the options :func:`with_analysis_settings` gives a command, in their --help order
_SETTINGS_OPTIONS: tuple[tuple[str, Any, Any], ...] = (
    ("metric", MetricChoiceOption, None),
    ("scheme", SchemeOption, DEFAULTS.scheme),
    ("draws", DrawsOption, DEFAULTS.n_draws),
    ("resample_languages", LanguagesOption, DEFAULTS.languages),
    ("k", KOption, DEFAULTS.k),
    ("replicates", ReplicatesOption, DEFAULTS.n_replicates),
    ("seed", SeedOption, DEFAULTS.seed),
    ("confidence_level", LevelOption, DEFAULTS.confidence_level),
)


def with_analysis_settings(command: Callable[..., None]) -> Callable[..., None]:
    """Give ``command`` the analysis options in place of its ``settings`` parameter.

    The command declares ``settings: AnalysisSettings`` where its --help should list
    --metric, --scheme, --draws, --resample-languages, --k, --replicates, --seed and
    --confidence-level (defaults: :data:`DEFAULTS`); it is called with the
    :class:`AnalysisSettings` :func:`analysis_settings` makes of them.
    """
    signature = inspect.signature(command, eval_str=True)
    parameters: list[inspect.Parameter] = []
    for parameter in signature.parameters.values():
        if parameter.name != "settings":
            parameters.append(parameter)
            continue
        parameters += [
            inspect.Parameter(name, parameter.kind, default=default, annotation=annotation)
            for name, annotation, default in _SETTINGS_OPTIONS
        ]
    if len(parameters) == len(signature.parameters):
        raise TypeError(f"{command.__name__} has no 'settings' parameter")

    @functools.wraps(command)
    def wrapper(**kwargs: Any) -> None:
        values = {name: kwargs.pop(name) for name, _, _ in _SETTINGS_OPTIONS}
        command(settings=analysis_settings(**values), **kwargs)

    # Typer reads the signature and the type hints of the wrapper: the options, not settings
    wrapper.__signature__ = signature.replace(parameters=parameters)  # type: ignore[attr-defined]
    wrapper.__annotations__ = {p.name: p.annotation for p in parameters} | {
        "return": signature.return_annotation
    }
    return wrapper


def store_from_environment(ctx: typer.Context, name: str = "store") -> bool:
    """Whether the option ``name`` of the running command took ``$GLOTBENCH_STORE`` (not typed).

    Where a store is one of several inputs (``--demo``, files), an input typed on
    the command line wins over the environment's store.
    """
    source = ctx.get_parameter_source(name)  # Typer's own click: compare by name
    return source is not None and source.name == "ENVIRONMENT"


DatasetOption = Annotated[str | None, typer.Option("--dataset", help="Dataset (store).")]
TaskOption = Annotated[str | None, typer.Option("--task", help="Task (store).")]
LanguageOption = Annotated[str | None, typer.Option("--language", help="Language (store).")]
ModelsOption = Annotated[
    list[str] | None, typer.Option("--model", help="Model (repeatable; store).")
]
ListOption = Annotated[list[str] | None, typer.Option(help="Repeatable filter.")]


#: default evaluation sizes of the data-size analyses; spaces let the help wrap at 80 columns
DEFAULT_SIZES = "100, 200, 500, 1000, 2000, 5000, 10000, 20000, all"


def parse_sizes(text: str) -> list[int | None]:
    """``--sizes`` / ``--datasize-sizes``: comma-separated positive sizes, ``all`` = None."""
    sizes: list[int | None] = []
    for part in text.split(","):
        part = part.strip().lower()
        if part == "all":
            sizes.append(None)
            continue
        try:
            value = int(part.replace("_", ""))
        except ValueError:
            raise typer.BadParameter(f"{part!r} is not a size", param_hint="--sizes") from None
        if value <= 0:
            raise typer.BadParameter("sizes must be positive", param_hint="--sizes")
        sizes.append(value)
    return sizes
